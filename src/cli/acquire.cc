#include "cli/acquire.h"

#include <fmt/format.h>
#include <string.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <utility>

#include "cli/machine_state.h"
#include "core/cuda_visible.h"
#include "core/printable.h"
#include "core/time_format.h"
#include "sys/change_watch.h"
#include "sys/environment.h"
#include "sys/interrupt.h"
#include "sys/lease_store.h"

namespace gpupin {
namespace {

using Clock = std::chrono::steady_clock;

// The facts the choice reads: how close the cards are only for a set of
// several near ones; compute capability and cores only where CUDA's default
// order may need them (a CUDA_VISIBLE_DEVICES by ordinal on mixed models).
GpuFacts FactsToChoose(const Request& request) {
  GpuFacts facts = gpu_facts::kChoice | gpu_facts::kCudaOrderIfMixed;
  if (request.near && request.count > 1) facts |= gpu_facts::kCloseness;
  return facts;
}

constexpr std::chrono::milliseconds kReservationPoll{200};
// How long a waiter waits for the state lock at a time (as long as a
// command without --wait does, before it fails), and how long one that gives
// up tries to take its ticket out of the queue.
constexpr std::chrono::milliseconds kLockPatience{10000};
constexpr std::chrono::milliseconds kLockGiveUp{200};

std::string Ordinal(size_t n) {
  const char* suffix = "th";
  if (n % 100 < 11 || n % 100 > 13) {
    if (n % 10 == 1) suffix = "st";
    if (n % 10 == 2) suffix = "nd";
    if (n % 10 == 3) suffix = "rd";
  }
  return fmt::format("{}{}", n, suffix);
}

// The queue position on stderr: a line rewritten in place on a terminal,
// one line per change otherwise.
class QueueDisplay {
 public:
  explicit QueueDisplay(const World& world) : world_(world) {}
  ~QueueDisplay() {
    if (live_ && shown_) std::fputs("\r\x1b[K", stderr);
  }
  void Show(const std::string& text) {
    if (world_.options().quiet || text == last_) return;
    last_ = text;
    shown_ = true;
    // The line names other users' tickets: their text, not ours.
    const std::string shown = Printable(text, std::string::npos);
    if (live_) {
      std::fprintf(stderr, "\r\x1b[Kgpupin: %s", shown.c_str());
    } else {
      std::fprintf(stderr, "gpupin: %s\n", shown.c_str());
    }
    std::fflush(stderr);
  }

 private:
  const World& world_;
  bool live_ = world_.terminal().stderr_is_tty();
  bool shown_ = false;
  std::string last_;
};

QueueTicket MakeTicket(const AcquireRequest& request, uint32_t uid, int64_t now_unix_ms,
                       const ProcFs& procfs) {
  QueueTicket ticket;
  ticket.holder = request.holder;
  if (std::optional<uint64_t> start = LiveProcessStartTime(procfs, getpid()))
    ticket.waiter = ProcessIdentity{getpid(), *start};
  ticket.uid = uid;
  ticket.user = UserName(uid);
  ticket.command = request.command;
  ticket.request =
      fmt::format("{} GPU{}{}", request.request.count, request.request.count == 1 ? "" : "s",
                  request.request.mem_bytes ? " shared" : "");
  ticket.created_unix_ms = now_unix_ms;
  return ticket;
}

void RetireUntilExit(ChangeWatch watch) {
  static auto* retired = new std::vector<ChangeWatch>();  // never destroyed: exit closes
  retired->push_back(std::move(watch));
}

// What the caller's CUDA_VISIBLE_DEVICES (or a Slurm allocation through it)
// allows.
struct Allowance {
  std::optional<std::vector<uint32_t>> gpu_indices;  // nullopt: everything
  // The indices rest on gpupin's guess of CUDA's FASTEST_FIRST order (mixed
  // models, no CUDA_DEVICE_ORDER).
  bool order_guessed = false;
  // CUDA drops entries or reads one only in part (`0-3`, `0,0`).
  bool read_in_part = false;
};

Allowance AllowedGpus(const Inventory& inventory, const VisibilityEnv& visibility) {
  if (!visibility.cuda_visible_devices) return {};
  Resolution resolution = ResolveVisibleDevices(inventory.gpus, visibility);
  Allowance allowance{std::vector<uint32_t>{}, resolution.order_is_guess,
                      !resolution.dropped.empty()};
  for (const VisibleDevice& device : resolution.visible) {
    if (!device.mig_index) allowance.gpu_indices->push_back(device.gpu_index);
    if (!device.read_in_part.empty()) allowance.read_in_part = true;
  }
  return allowance;
}

// The cards of the job we run in, within what our environment allows.
std::vector<uint32_t> JobGpuIndices(const Inventory& inventory, const Lease& job,
                                    const std::optional<std::vector<uint32_t>>& allowed) {
  std::vector<uint32_t> indices;
  for (const Gpu& gpu : inventory.gpus) {
    const bool held =
        std::find(job.gpu_uuids.begin(), job.gpu_uuids.end(), gpu.uuid) != job.gpu_uuids.end();
    const bool visible =
        !allowed || std::find(allowed->begin(), allowed->end(), gpu.index) != allowed->end();
    if (held && visible) indices.push_back(gpu.index);
  }
  return indices;
}

// What NVML and /proc showed, and when.
struct Look {
  // A look this old is as recent as one taken before waiting for the
  // state lock, which every choice already risks.
  static constexpr std::chrono::milliseconds kRecent{50};

  Inventory inventory;
  GpuProcessFacts processes;
  Clock::time_point taken;

  bool RecentEnough() const { return Clock::now() - taken < kRecent; }
};

// What blocks the cards, without the policy's advice to use --wait: the
// waiter already does.
std::string Blockers(const std::string& refusal) {
  return refusal.substr(0, refusal.rfind("; use --wait"));
}

Error StoppedBy(int signal) {
  Error stopped = MakeError(
      ExitCode::kError,
      fmt::format("stopped by SIG{} while waiting for GPUs; left the queue", sigabbrev_np(signal)));
  stopped.signal = signal;
  return stopped;
}

// Chooses and records, or waits in the queue until it can. `interrupts`
// (while waiting) ends the wait, leaving the queue.
Result<Acquired> AcquireOrWait(World& world, const AcquireRequest& request,
                               std::vector<CardVerdict>* verdicts,
                               const InterruptGuard* interrupts) {
  Result<LeaseStore*> store = world.Leases();
  if (!store.ok()) return store.error();
  // Created before the first read, so no change between a read and the
  // wait can be missed (sys/change_watch.h). Only the head of the queue
  // waits on it, for cards to free up: that is news in the leases, never in
  // the queue, where dozens of newcomers taking tickets behind the head used
  // to wake it for nothing (an NVML snapshot each, at the busiest moment).
  ChangeWatch watch = ChangeWatch::ForDirectories({&(*store)->leases_dir()});
  std::optional<Clock::time_point> deadline;
  if (request.wait && request.wait_ms)
    deadline = Clock::now() + std::chrono::milliseconds(*request.wait_ms);
  std::optional<QueueTicket> ticket;  // our place in the queue, once we wait
  // Whether some look found enough cards that can run jobs at all. Only a
  // request that never could is refused: a card that stops answering while
  // we wait (an admin's reset, an NVML hiccup) may come back.
  bool ever_servable = false;
  // Leaves the queue on the way out with an error, rather than leaving a
  // ticket that others skip only once this process is gone. Briefly: under
  // a lock that another process holds on, the ticket stays, dead with us.
  auto give_up = [&](Error error) -> Error {
    if (ticket) {
      (void)(*store)->TryTransact([&](LeaseTransaction& txn) { return txn.RemoveTicket(*ticket); },
                                  kLockGiveUp);
    }
    return error;
  };
  QueueDisplay display(world);
  const ProcFs& procfs = world.procfs();
  const StoppedCheck stopped = MakeStoppedCheck(procfs);
  uint32_t uid = static_cast<uint32_t>(getuid());
  const char* job_variable = std::getenv("GPUPIN_LEASE_ID");
  const std::optional<std::string> claimed_job =
      job_variable ? std::optional<std::string>(job_variable) : std::nullopt;
  // Our environment does not change while we wait: read it once.
  const VisibilityEnv visibility = VisibilityEnvFromProcess();
  std::optional<std::string> allowed_by;
  bool guess_noted = false;  // once per gpupin, however often it looks
  if (visibility.cuda_visible_devices)
    allowed_by = "CUDA_VISIBLE_DEVICES=" + *visibility.cuda_visible_devices;

  // Behind others in the queue a waiter neither asks NVML nor reads the
  // leases, and wakes only when the ticket just ahead of it goes (or its
  // holder dies). Were dozens woken by each change to do both, one after
  // another under the lock, hand-offs would take hundreds of ms.
  // The ticket ahead goes when it reached the head and got its cards, so a
  // waiter that wakes expects to choose: it asks NVML and /proc (milliseconds
  // of CPU) before taking the lock, where every gpupin waits, and chooses in
  // that same transaction. A newcomer who finds others waiting skips both.
  // Such a newcomer does not even open NVML (the real nvmlInit takes tens
  // of milliseconds, and 64 jobs submitted at once all paid it while the
  // first ones were starting) until it is next in line.
  bool want_snapshot = claimed_job || !(*store)->QueueMayHaveTickets();
  std::optional<ChangeWatch> ahead_watch;
  // The last look at NVML and /proc. A waiter nudged while still behind
  // takes one so as to be ready when the ticket ahead goes; that look is
  // used when it does, if still recent, rather than taking another at the
  // busiest moment. A recent look may only lead to taking cards: a choice that
  // finds nothing, to wait or to refuse, is made on a fresh one, so no
  // waiter sleeps on what it saw earlier.
  std::optional<Look> look;
  bool look_again = false;
  for (;;) {
    // Checked between the steps, never inside a transaction: a step is
    // finished (a ticket taken, a lease written) before the signal is obeyed.
    if (interrupts && interrupts->interrupted()) return give_up(StoppedBy(interrupts->signal()));
    bool fresh_look = want_snapshot && (!look || look_again || !look->RecentEnough());
    if (fresh_look) {
      Result<GpuSource*> gpus = world.Gpus();
      if (!gpus.ok()) return give_up(gpus.error());
      Clock::time_point taken = Clock::now();
      Result<Inventory> snapshot = (*gpus)->Snapshot(FactsToChoose(request.request));
      if (!snapshot.ok()) return give_up(snapshot.error());
      GpuProcessFacts processes = DescribeGpuProcesses(*snapshot, procfs);
      look = Look{std::move(*snapshot), std::move(processes), taken};
    }
    const Inventory* inventory = want_snapshot && look ? &look->inventory : nullptr;
    GpuProcessFacts* processes = inventory ? &look->processes : nullptr;
    want_snapshot = true;
    look_again = false;
    LivenessFacts facts = MakeLivenessFacts(inventory ? *inventory : Inventory{}, procfs);
    std::optional<QueueTicket> ahead;  // the ticket just ahead of ours, while we are not the head
    size_t waiters_ahead = 0;
    std::optional<Acquired> acquired;
    std::optional<Error> refusal;
    std::string waiting_text;  // shown while we wait
    std::string why_waiting;   // said if the --wait time runs out
    std::vector<ProcessIdentity> watched;
    bool unwatchable = false;
    bool reserved = false;

    auto join_queue = [&](LeaseTransaction& txn) -> Status {
      if (ticket) return Ok{};
      Result<QueueTicket> taken =
          txn.TakeTicket(MakeTicket(request, uid, facts.now_unix_ms, procfs));
      if (!taken.ok()) return taken.error();
      ticket = *taken;
      return Ok{};
    };
    auto read_and_decide = [&](LeaseTransaction& txn) -> Status {
      // Inside a job (`gpupin run` in a job's script, or after `eval "$(gpupin
      // env)"`), a request is served from the job's own cards and never
      // queues: behind others who wait for those very cards, held until the
      // job ends, it would wait for ever, and hold up the queue meanwhile.
      // Read once per transaction: here inside a job, else only once the
      // queue lets us choose (waiters behind others never read them).
      std::optional<std::vector<Lease>> live;
      const Lease* job = nullptr;  // the lease of the job we run in, once verified
      if (claimed_job && inventory) {
        live = txn.LiveLeases(facts);
        job = JobOfProcess(getpid(), claimed_job, *live,
                           [&procfs](int pid) { return procfs.ParentOf(pid); });
      }
      Result<QueuePlace> place = txn.PlaceInQueue(ticket, facts, stopped);
      if (!place.ok()) return place.error();
      // First come, first served: while others wait, a newcomer queues behind
      // them (or, without --wait, is refused) even if a card is free now.
      if (place->just_ahead && !job) {
        if (!ticket && !request.wait) {
          refusal = MakeError(
              ExitCode::kNoGpu,
              fmt::format("{} job{} already waiting for GPUs (first: {}, {}); use --wait to queue "
                          "behind them",
                          place->ahead, place->ahead == 1 ? " is" : "s are", place->head->user,
                          place->head->request));
          return Ok{};
        }
        if (Status joined = join_queue(txn); !joined.ok()) return joined;
        ahead = place->just_ahead;
        waiters_ahead = place->ahead;
        watched.push_back(ahead->holder);
        if (ahead->waiter) watched.push_back(*ahead->waiter);
        const std::string place_text =
            fmt::format("{} in queue ({} ahead: {}, {})", Ordinal(place->ahead + 1), place->ahead,
                        place->head->user, place->head->request);
        why_waiting = "still " + place_text;
        waiting_text = "waiting: " + place_text;
        return Ok{};
      }
      if (!inventory) return Ok{};  // free to choose, without a snapshot: take one first
      if (!live) live = txn.LiveLeases(facts);
      for (const Lease& lease : *live) {
        watched.push_back(lease.holder);
        // A reservation also ends when its job's process appears on the card
        // or at its deadline: neither is an event, so look again soon. Soon:
        // only a look while the job runs sees it, and a job shorter than the
        // poll would otherwise leave its card reserved until the deadline.
        if (lease.is_reservation()) reserved = true;
      }
      AttributeToLeases(*processes, *live, [&procfs](int pid) { return procfs.ParentOf(pid); });
      watched.insert(watched.end(), processes->watchable.begin(), processes->watchable.end());
      unwatchable = unwatchable || processes->unwatchable;
      PolicyInput input;
      input.gpus = inventory->gpus;
      input.topology = inventory->topology;
      input.live_leases = *live;
      input.process_owners = processes->owners;
      input.caller = {uid, UserName(uid), job ? std::optional<std::string>(job->id) : std::nullopt,
                      request.shell};
      const Allowance allowance = AllowedGpus(*inventory, visibility);
      input.allowed_gpu_indices = allowance.gpu_indices;
      if (allowance.order_guessed && !guess_noted) {
        world.Note(fmt::format(
            "{} counts in CUDA's FASTEST_FIRST order, which gpupin can only guess on mixed GPU "
            "models: the cards it allows may not be the ones meant; set "
            "CUDA_DEVICE_ORDER=PCI_BUS_ID or use UUIDs (gpupin map --probe asks the driver)",
            *allowed_by));
        guess_noted = true;
      }
      if (allowed_by) {
        input.allowed_by =
            *allowed_by +
            (allowance.read_in_part ? ", which CUDA reads only in part (gpupin map says how)" : "");
      }
      if (job) {
        input.allowed_gpu_indices = JobGpuIndices(*inventory, *job, input.allowed_gpu_indices);
        input.allowed_by = "job " + job->id + " (GPUPIN_LEASE_ID)";
      }
      input.request = request.request;
      input.now_unix_ms = facts.now_unix_ms;
      ChoiceFailure failure;
      Result<Selection> selection = ChooseGpus(input, &failure);
      if (!selection.ok()) {
        if (!fresh_look) {
          look_again = true;
          return Ok{};
        }
        if (verdicts) *verdicts = failure.verdicts;
        ever_servable = ever_servable || failure.waiting_can_help;
        if (selection.error().code != ExitCode::kNoGpu || !request.wait || !ever_servable) {
          refusal = selection.error();
          if (ticket) (void)txn.RemoveTicket(*ticket);
          return Ok{};
        }
        if (job) {
          why_waiting = Blockers(selection.error().message);
          waiting_text = "waiting for a card of job " + job->id + "; " + why_waiting;
          return Ok{};
        }
        if (Status joined = join_queue(txn); !joined.ok()) return joined;
        why_waiting = Blockers(selection.error().message);
        waiting_text = "waiting: next in queue; " + why_waiting;
        return Ok{};
      }
      Lease lease;
      lease.id = NewRecordId(request.holder);
      for (uint32_t index : selection->chosen_gpu_indices)
        lease.gpu_uuids.push_back(inventory->gpus[index].uuid);
      lease.holder = request.holder;
      lease.uid = uid;
      lease.user = UserName(uid);
      lease.command = request.command;
      lease.created_unix_ms = facts.now_unix_ms;
      lease.shared_bytes = request.request.mem_bytes;
      if (request.reservation_ttl_ms) {
        lease.reservation_deadline_unix_ms = facts.now_unix_ms + *request.reservation_ttl_ms;
        for (uint32_t index : selection->chosen_gpu_indices) {
          for (const GpuProcess& process : inventory->gpus[index].processes) {
            lease.reservation_baseline_pids.push_back(process.pid);
          }
        }
      }
      Status added = txn.AddLease(lease);
      if (!added.ok()) return added.error();
      if (ticket) (void)txn.RemoveTicket(*ticket);
      if (verdicts) *verdicts = selection->verdicts;
      acquired = Acquired{lease, std::move(look->inventory), std::move(*selection)};
      return Ok{};
    };
    auto decide = [&](LeaseTransaction& txn) {
      Status decided = read_and_decide(txn);
      watch.ForgetChangesSoFar();
      return decided;
    };
    if (!request.wait) {
      Status transaction = (*store)->Transact(decide);
      if (!transaction.ok()) return transaction.error();
    } else {
      // A waiter never loses its place to a lock it cannot take (a stopped
      // gpupin, another user's `flock`): it says who holds it and tries
      // again, until its own --wait time runs out.
      std::chrono::milliseconds patience = kLockPatience;
      if (deadline) {
        patience = std::clamp(
            std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - Clock::now()),
            std::chrono::milliseconds(1), kLockPatience);
      }
      Result<bool> done = (*store)->TryTransact(decide, patience);
      if (!done.ok()) return give_up(done.error());
      if (!*done) {
        const std::string held =
            fmt::format("the state lock is held by {}", (*store)->LockHolder());
        if (deadline && Clock::now() >= *deadline) {
          return give_up(
              MakeError(ExitCode::kNoGpu,
                        fmt::format("no GPU became available within the --wait time; {}", held)));
        }
        display.Show(fmt::format("waiting: {}; keeping our place", held));
        continue;
      }
    }
    if (acquired) {
      // Closing an inotify descriptor waits for an RCU grace period (2 to
      // 20 ms): not while the job waits to start. Exit closes them.
      RetireUntilExit(std::move(watch));
      if (ahead_watch) RetireUntilExit(std::move(*ahead_watch));
      return std::move(*acquired);
    }
    if (refusal) return *refusal;
    if (waiting_text.empty()) continue;  // free to choose, but without a (fresh) look

    display.Show(waiting_text);
    // Next in line: NVML is opened now, while we wait, so that our turn
    // (a nudge, the head's ticket going) does not begin with it.
    if (waiters_ahead == 1) {
      Result<GpuSource*> gpus = world.Gpus();
      if (!gpus.ok()) return give_up(gpus.error());
    }
    if (ahead) {
      std::string name = TicketFileName(*ahead);
      if (ahead_watch) {
        ahead_watch->WatchFile((*store)->queue_dir(), name);
      } else {
        ahead_watch = ChangeWatch::ForFile((*store)->queue_dir(), name);
      }
    }
    ChangeWatch& waiting_on = ahead ? *ahead_watch : watch;
    waiting_on.WatchProcesses(watched, facts.process_start_time);
    waiting_on.WakeOnInterrupt(interrupts ? interrupts->wake_fd() : -1);
    auto poll = std::chrono::milliseconds(request.poll_ms);
    if (reserved) poll = std::min(poll, kReservationPoll);
    // Behind others, a waiter also looks at the ticket just ahead at every
    // poll interval: stopped there (Ctrl-Z), its holder or waiter would hold up the
    // queue with no event to say so; PlaceInQueue then passes it over.
    WakeReason woke;
    do {
      woke = waiting_on.Wait(deadline, poll, unwatchable || reserved || ahead.has_value());
    } while (woke == WakeReason::kPoll && ahead && !TicketStopped(*ahead, stopped));
    // Woken by a process's exit, a card may be free: we are about to ask
    // NVML and may take it, and the next in line asks at the same time, so
    // that cards freed together are handed on in parallel rather than one
    // look after another. Not when we only moved up (the ticket ahead
    // went): that says nothing about the cards, and nudging then kept one
    // waiter beyond the last card of every round looking in vain. Never on
    // a nudge, or the whole queue would wake.
    if (woke == WakeReason::kInterrupted) return give_up(StoppedBy(interrupts->signal()));
    if (ticket && woke == WakeReason::kProcessExited) (*store)->Nudge(*ticket);
    if (woke == WakeReason::kDeadline) {
      return give_up(MakeError(
          ExitCode::kNoGpu,
          fmt::format("no GPU became available within the --wait time; {}", why_waiting)));
    }
  }
}

}  // namespace

Result<Acquired> AcquireGpus(World& world, const AcquireRequest& request,
                             std::vector<CardVerdict>* verdicts) {
  // Said once per lease written: the user is about to trust the directory.
  if (Result<LeaseStore*> store = world.Leases(); store.ok()) {
    if (std::optional<std::string> warning = (*store)->OwnerWarning())
      world.Note("warning: " + *warning);
  }
  if (!request.wait) return AcquireOrWait(world, request, verdicts, nullptr);
  // A waiter may wait for hours; stopped meanwhile (Ctrl-C, kill, a closed
  // terminal), it takes its ticket out of the queue before it goes.
  InterruptGuard interrupts;
  Result<Acquired> acquired = AcquireOrWait(world, request, verdicts, &interrupts);
  if (!interrupts.interrupted()) return acquired;
  // Stopped while its turn came: the cards go back rather than to a job
  // that was called off.
  if (acquired.ok()) {
    Result<LeaseStore*> store = world.Leases();
    if (store.ok()) {
      (void)(*store)->Transact(
          [&](LeaseTransaction& txn) { return txn.RemoveLease(acquired->lease.id); });
    }
  }
  return StoppedBy(interrupts.signal());
}

}  // namespace gpupin
