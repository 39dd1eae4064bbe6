#include "cli/acquire.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <string.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <utility>

#include "cli/cuda_numbering.h"
#include "cli/machine_state.h"
#include "core/cuda_visible.h"
#include "core/printable.h"
#include "core/queue_decision.h"
#include "core/slurm_ids.h"
#include "core/time_format.h"
#include "core/units.h"
#include "out/terminal.h"
#include "sys/change_watch.h"
#include "sys/environment.h"
#include "sys/interrupt.h"
#include "sys/lease_store.h"
#include "sys/user_groups.h"

namespace gpupin {
namespace {

using Clock = std::chrono::steady_clock;

// The facts the choice reads: how close the cards are only for a set of
// several near ones; compute capability and cores only where CUDA's default
// order may need them (the caller's own CUDA_VISIBLE_DEVICES, read in
// FASTEST_FIRST order, on mixed models).
GpuFacts FactsToChoose(const Request& request, const VisibilityEnv& visibility) {
  GpuFacts facts = gpu_facts::kChoice;
  if (request.near && request.count > 1) facts |= gpu_facts::kCloseness;
  if (visibility.cuda_visible_devices && !FollowsPciBusOrder(visibility))
    facts |= gpu_facts::kCudaOrderIfMixed;
  return facts;
}

constexpr std::chrono::milliseconds kReservationPoll{200};
// How long a waiter waits for the state lock at a time (as long as a
// command without --wait does, before it fails), and how long one that gives
// up tries to take its ticket out of the queue.
constexpr std::chrono::milliseconds kLockPatience{10000};
constexpr std::chrono::milliseconds kLockGiveUp{200};
// How long a newcomer waits for its turn to look (LeaseStore::TakeArrivalTurn)
// before it looks anyway: long enough for the few looks of a burst that
// precede the first ticket, each with a real nvmlInit of tens of
// milliseconds; short enough that a process keeping the turn (a hung
// nvmlInit, another user's `flock`) costs each newcomer no more.
constexpr std::chrono::milliseconds kArrivalPatience{2000};

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
    const std::string shown = PrintableWhole(text);
    if (live_) {
      // Redrawn in place, so one row: a line that wrapped would leave its
      // first rows behind at the next redraw. Bytes are never fewer than
      // the columns they take.
      constexpr size_t kPrefixAndCut = sizeof("gpupin: ") - 1 + 3 + 1;
      const size_t columns = TerminalColumns(STDERR_FILENO).value_or(80);
      const std::string line =
          columns > kPrefixAndCut + 10 ? Printable(shown, columns - kPrefixAndCut) : shown;
      std::fprintf(stderr, "\r\x1b[Kgpupin: %s", line.c_str());
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

QueueTicket MakeTicket(const AcquireRequest& request, uint32_t uid, const std::string& user,
                       int64_t now_unix_ms, const ProcFs& procfs) {
  QueueTicket ticket;
  ticket.holder = request.holder;
  if (std::optional<uint64_t> start = LiveProcessStartTime(procfs, getpid()))
    ticket.waiter = ProcessIdentity{getpid(), *start};
  ticket.uid = uid;
  ticket.user = user;
  ticket.command = request.command;
  ticket.request = fmt::format(
      "{} GPU{}{}", request.request.count, request.request.count == 1 ? "" : "s",
      request.request.mem_bytes ? " shared " + FormatBytes(*request.request.mem_bytes) : "");
  // A waiter for named cards holds up everyone behind it while they stay
  // busy (no backfill): leases shows why.
  std::vector<std::string> named;
  if (!request.request.only.empty())
    named.push_back(fmt::format("--only {}", fmt::join(request.request.only, ",")));
  if (!request.request.exclude.empty())
    named.push_back(fmt::format("--exclude {}", fmt::join(request.request.exclude, ",")));
  if (!named.empty()) ticket.request += fmt::format(" ({})", fmt::join(named, " "));
  ticket.count = request.request.count;
  ticket.created_unix_ms = now_unix_ms;
  return ticket;
}

void RetireUntilExit(ChangeWatch watch) {
  static auto* retired = new std::vector<ChangeWatch>();  // never destroyed: exit closes
  retired->push_back(std::move(watch));
}

// How long to wait for a lock: `limit`, and never past the --wait deadline
// (at least a millisecond, to try once).
std::chrono::milliseconds PatienceWithin(std::chrono::milliseconds limit,
                                         const std::optional<Clock::time_point>& deadline) {
  if (!deadline) return limit;
  return std::clamp(std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - Clock::now()),
                    std::chrono::milliseconds(1), limit);
}

// What the caller's CUDA_VISIBLE_DEVICES (or a Slurm allocation through it)
// allows.
struct Allowance {
  std::optional<std::vector<uint32_t>> gpu_indices;  // nullopt: everything
  // The indices rest on gpupin's guess of CUDA's FASTEST_FIRST order (mixed
  // models, no CUDA_DEVICE_ORDER).
  bool order_guessed = false;
  // How CUDA reads the list, when not as written: ", which CUDA reads only
  // in part (...)" (`0-3`, `0,9`), ", which leaves CUDA no device (...)"
  // (`0,0`); empty when as written.
  std::string misread;
};

Allowance AllowedGpus(CudaNumbering& numbering, const Inventory& inventory,
                      const VisibilityEnv& visibility) {
  if (!visibility.cuda_visible_devices) return {};
  Resolution resolution = numbering.Resolve(inventory, visibility);
  Allowance allowance{std::vector<uint32_t>{}, resolution.order_is_guess, ""};
  bool read_in_part = !resolution.dropped.empty();
  for (const VisibleDevice& device : resolution.visible) {
    if (!device.mig_index) allowance.gpu_indices->push_back(device.gpu_index);
    if (!device.read_in_part.empty()) read_in_part = true;
  }
  if (resolution.visible.empty() && read_in_part) {
    allowance.misread = ", which leaves CUDA no device (gpupin map says why)";
  } else if (read_in_part) {
    allowance.misread = ", which CUDA reads only in part (gpupin map says how)";
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

// Whether who holds how many cards can change the order: under fair share
// with more than one user in line, or with a per-user cap.
bool HoldingsMatter(const TurnInput& turn, const HouseRules& rules) {
  if (AnyPerUserCap(rules)) return true;
  return rules.queue == QueueOrder::kFair &&
         std::any_of(turn.waiting.begin(), turn.waiting.end(),
                     [&](const QueueTicket& ticket) { return ticket.uid != turn.uid; });
}

// The leases that count as held, read without a look at the cards: one
// whose holder is gone is not, but every reservation is, since its job
// (a process on its cards) cannot be seen without the look.
std::vector<Lease> HeldWithoutLook(std::vector<Lease> leases, const LivenessFacts& facts) {
  std::erase_if(leases, [&](const Lease& lease) {
    return !lease.is_reservation() && EvaluateLease(lease, facts) != LeaseState::kLive;
  });
  return leases;
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
  // The leases, watched by a waiter at the head of the queue (or at its
  // cap) for cards to free up: that is news in the leases, never in the
  // queue, where dozens of newcomers taking tickets behind the head used to
  // wake it for nothing (an NVML snapshot each, at the busiest moment).
  // Created before the read whose decision it waits on, so no change in
  // between is missed (sys/change_watch.h), and only once there is
  // something to wait for: adding a watch on a directory walks every name
  // the kernel remembers in it, the deleted ones included, and on a disk
  // those are one or two per lease ever written (30 ms of CPU a command
  // after 100,000 leases, on ext4).
  std::optional<ChangeWatch> watch;
  auto watch_leases = [&] {
    if (!watch) watch = ChangeWatch::ForDirectories({&(*store)->leases_dir()});
  };
  const bool queue_may_have_tickets = (*store)->QueueMayHaveTickets();
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
  bool slurm_noted = false;  // likewise
  // Which cards an index CUDA_VISIBLE_DEVICES allows, by the driver's own
  // order where gpupin's would be a guess (mixed models, FASTEST_FIRST):
  // the kept one, else asked once per boot, driver and set of GPUs, before
  // the lock is taken (a probe may take seconds), rather than choosing a
  // card outside the caller's allocation on a guess.
  CudaNumbering numbering(world, ProbePolicy::kProbeIfNeeded);
  if (visibility.cuda_visible_devices)
    allowed_by = "CUDA_VISIBLE_DEVICES=" + *visibility.cuda_visible_devices;
  if (const char* slurm_job = std::getenv("SLURM_JOB_ID");
      slurm_job && !SlurmGpus(visibility) && !visibility.cuda_visible_devices) {
    world.Note(fmt::format(
        "inside Slurm job {}, which was given no GPU (SLURM_JOB_GPUS unset): the card chosen may "
        "be one Slurm gives another job; ask Slurm for the GPUs (--gres=gpu:N)",
        slurm_job));
  }

  const HouseRules& rules = world.rules();
  // Each user's caps, as the rules set them for that user and their groups.
  std::map<uint32_t, Caps> caps_by_uid;
  auto caps_of = [&](uint32_t of) -> const Caps& {
    auto [it, added] = caps_by_uid.try_emplace(of);
    if (added) it->second = CapsOfUser(rules, of);
    return it->second;
  };
  // Looked up once: each lookup is the C library's (NSS: /etc/passwd read
  // again, or a directory service asked), and a look would repeat it under
  // the lock.
  const std::string own_name = UserName(uid);
  const std::vector<std::string> own_groups = GroupsTheRulesCap(rules, uid);
  const AppliedCap own_per_user = CapFor(rules, CapKind::kPerUser, own_name, own_groups);
  const AppliedCap own_per_job = CapFor(rules, CapKind::kPerJob, own_name, own_groups);
  QueueRequest queue_request;
  queue_request.request = request.request;
  queue_request.wait = request.wait;
  queue_request.holder = request.holder;
  queue_request.uid = uid;
  queue_request.user = own_name;
  queue_request.command = request.command;
  queue_request.reservation_ttl_ms = request.reservation_ttl_ms;
  if (request.reservation_ttl_ms) {
    if (std::optional<ProcessStat> holder = procfs.Stat(request.holder.pid)) {
      queue_request.holder_session = holder->session;
      if (holder->start_stack != 0) queue_request.holder_start_stack = holder->start_stack;
    }
  }
  // What the policy sees of one look at the cards.
  auto make_policy_input = [&](const Inventory& inventory, const std::vector<Lease>& live,
                               const GpuProcessFacts& processes, const Lease* job,
                               int64_t now_unix_ms) {
    PolicyInput input;
    input.gpus = inventory.gpus;
    input.topology = inventory.topology;
    input.live_leases = live;
    input.process_owners = processes.owners;
    input.caller = {uid, own_name, job ? std::optional<std::string>(job->id) : std::nullopt,
                    request.shell};
    const Allowance allowance = AllowedGpus(numbering, inventory, visibility);
    input.allowed_gpu_indices = allowance.gpu_indices;
    if (allowance.order_guessed && !guess_noted) {
      world.Note(fmt::format(
          "{} counts in CUDA's FASTEST_FIRST order, which gpupin can only guess on mixed GPU "
          "models: the cards it allows may not be the ones meant; set "
          "CUDA_DEVICE_ORDER=PCI_BUS_ID or use UUIDs (gpupin ls asks the driver once, and "
          "every gpupin then follows its order)",
          *allowed_by));
      guess_noted = true;
    }
    if (allowed_by) {
      input.allowed_by = *allowed_by + allowance.misread;
    }
    // A Slurm job that sees the whole node (no device cgroup) keeps to the
    // cards Slurm gave it, whatever CUDA_VISIBLE_DEVICES says or does not.
    if (std::optional<SlurmAllocation> slurm =
            KeepToSlurmAllocation(visibility, inventory.gpus, input.allowed_gpu_indices)) {
      if (!input.allowed_gpu_indices) {
        input.allowed_by = slurm->given;
      } else if (!slurm->outside.empty()) {
        if (!slurm_noted) {
          world.Note(
              fmt::format("{} names GPUs this Slurm job was not given ({}): choosing only "
                          "among the cards both allow",
                          *allowed_by, slurm->given));
          slurm_noted = true;
        }
        input.allowed_by += " and " + slurm->given;
      }
      input.allowed_gpu_indices = std::move(slurm->within);
    }
    if (job) {
      input.allowed_gpu_indices = JobGpuIndices(inventory, *job, input.allowed_gpu_indices);
      input.allowed_by = "job " + job->id + " (GPUPIN_LEASE_ID)";
    }
    input.request = request.request;
    input.reserved = rules.reserved;
    input.reserved_by = DescribeReserved(rules);
    input.now_unix_ms = now_unix_ms;
    return input;
  };

  // Behind others in the queue a waiter does not ask NVML, and wakes only
  // when the ticket it waits behind goes (or its holder dies), or, where
  // holdings decide the order, when the leases change. Were dozens woken by
  // each change to do both, one after another under the lock, hand-offs
  // would take hundreds of ms.
  // The ticket ahead goes when it reached the head and got its cards, so a
  // waiter that wakes expects to choose: it asks NVML and /proc (milliseconds
  // of CPU) before taking the lock, where every gpupin waits, and chooses in
  // that same transaction. A newcomer who finds others waiting skips both.
  // Such a newcomer does not even open NVML (the real nvmlInit takes tens
  // of milliseconds, and 64 jobs submitted at once all paid it while the
  // first ones were starting) until it is next in line.
  bool want_snapshot = claimed_job || !queue_may_have_tickets;
  // Newcomers that find the queue empty look and decide one at a time: in
  // a burst onto free cards, those that arrive while others look would all
  // find the queue empty and all open NVML, though all but the first few
  // end up queued. Each waits for its turn, then looks only if still no
  // ticket is there; the turn passes on once its decision is written.
  const bool takes_turn = want_snapshot && request.wait && !claimed_job;
  std::optional<FileLock> arrival_turn =
      takes_turn ? (*store)->TakeArrivalTurn(PatienceWithin(kArrivalPatience, deadline))
                 : std::nullopt;
  // With the turn or after waiting it out: a ticket there by now means
  // others wait, and this newcomer queues behind them without a look.
  if (takes_turn && (*store)->QueueMayHaveTickets()) {
    arrival_turn.reset();
    want_snapshot = false;
  }
  std::optional<ChangeWatch> ahead_watch;
  // The last look at NVML and /proc. A waiter nudged while still behind
  // takes one so as to be ready when the ticket ahead goes; that look is
  // used when it does, if still recent, rather than taking another at the
  // busiest moment. A recent look may only lead to taking cards: a choice that
  // finds nothing, to wait or to refuse, is made on a fresh one, so no
  // waiter sleeps on what it saw earlier.
  std::optional<Look> look;
  bool look_again = false;
  // Whether the leases alone may keep a woken head waiting without a look
  // (DecisionInput::known_cards): an exclusive request of our own, which
  // waits.
  const bool leases_may_decide = request.wait && !claimed_job && !request.request.mem_bytes;
  // Woken at the head by a holder's exit, to be decided on the leases: the
  // next in line is nudged only once they let us look. While they keep us
  // waiting, every card freed is ours to take first, and its look would be
  // in vain.
  bool nudge_unless_still_waiting = false;
  for (;;) {
    // Checked between the steps, never inside a transaction: a step is
    // finished (a ticket taken, a lease written) before the signal is obeyed.
    if (interrupts && interrupts->interrupted()) return give_up(StoppedBy(interrupts->signal()));
    bool fresh_look = want_snapshot && (!look || look_again || !look->RecentEnough());
    if (fresh_look) {
      Result<GpuSource*> gpus = world.Gpus();
      if (!gpus.ok()) return give_up(gpus.error());
      Clock::time_point taken = Clock::now();
      Result<Inventory> snapshot = (*gpus)->Snapshot(FactsToChoose(request.request, visibility));
      if (!snapshot.ok()) return give_up(snapshot.error());
      GpuProcessFacts processes = DescribeGpuProcesses(*snapshot, procfs);
      look = Look{std::move(*snapshot), std::move(processes), taken};
      // Slurm's global ids that CUDA would read as other cards: no choice
      // among them keeps this job on its allocation.
      if (std::optional<SlurmIdsMisread> misread =
              SlurmIdsMisreadByCuda(visibility, look->inventory.gpus)) {
        return give_up(MakeError(ExitCode::kError, misread->problem + "; " + misread->fix));
      }
      // Probes here, if it must, so that the transaction finds the answer.
      (void)AllowedGpus(numbering, look->inventory, visibility);
    }
    const Inventory* inventory = want_snapshot && look ? &look->inventory : nullptr;
    GpuProcessFacts* processes = inventory ? &look->processes : nullptr;
    want_snapshot = true;
    look_again = false;
    LivenessFacts facts = MakeLivenessFacts(inventory ? *inventory : Inventory{}, procfs);
    bool behind = false;               // others go before us
    std::optional<QueueTicket> ahead;  // the ticket we wait to see go, while behind
    size_t waiters_ahead = 0;
    std::optional<Acquired> acquired;
    std::optional<Error> refusal;
    std::string waiting_text;  // shown while we wait
    std::string why_waiting;   // said if the --wait time runs out
    std::vector<ProcessIdentity> watched;
    bool unwatchable = false;
    bool reserved = false;
    bool head_waits = false;  // our turn, but nothing fits: waiting for the cards

    auto join_queue = [&](LeaseTransaction& txn) -> Status {
      if (ticket) return Ok{};
      Result<QueueTicket> taken =
          txn.TakeTicket(MakeTicket(request, uid, own_name, facts.now_unix_ms, procfs));
      if (!taken.ok()) return taken.error();
      ticket = *taken;
      return Ok{};
    };
    auto read_and_decide = [&](LeaseTransaction& txn) -> Status {
      // Inside a job (`gpupin run` in a job's script, or after `eval "$(gpupin
      // env)"`), a request is served from the job's own cards and never
      // queues: behind others who wait for those very cards, held until the
      // job ends, it would wait for ever, and hold up the queue meanwhile.
      std::optional<std::vector<Lease>> live;
      const Lease* job = nullptr;  // the lease of the job we run in, once verified
      if (claimed_job && inventory) {
        live = txn.LiveLeases(facts);
        job = JobOfProcess(getpid(), claimed_job, *live,
                           [&procfs](int pid) { return procfs.ParentOf(pid); });
      }
      // The leases that hold cards, when no look was taken.
      std::optional<std::vector<Lease>> held_without_look;
      auto held_now = [&]() -> const std::vector<Lease>& {
        if (!held_without_look) held_without_look = HeldWithoutLook(txn.ReadLeases(), facts);
        return *held_without_look;
      };
      DecisionInput input;
      input.request = queue_request;
      input.request.lease_id = NewRecordId(request.holder);
      if (job) input.job_lease_id = job->id;
      input.have_ticket = ticket.has_value();
      input.fresh_look = fresh_look;
      input.ever_servable = ever_servable;
      input.caps = {own_per_user.limit, own_per_job.limit};
      input.per_user_rule = DescribeCap(rules, own_per_user);
      input.per_job_rule = DescribeCap(rules, own_per_job);
      if (!job) {
        Result<std::vector<QueueTicket>> waiting =
            txn.WaitingTickets(ticket, facts, facts.process_stopped);
        if (!waiting.ok()) return waiting.error();
        input.turn.order = rules.queue;
        input.turn.waiting = std::move(*waiting);
        if (ticket) input.turn.mine = ticket->id;
        input.turn.uid = uid;
        input.turn.count = request.request.count;
        input.turn.caps[uid] = input.caps;
        for (const QueueTicket& waiting_ticket : input.turn.waiting)
          input.turn.caps[waiting_ticket.uid] = caps_of(waiting_ticket.uid);
        // Holdings decide the order only when they can change it: with fair
        // share among several users, or a cap. Read without a look, the
        // leases are not pruned: a reservation whose job runs would look dead.
        if (HoldingsMatter(input.turn, rules)) {
          if (inventory && !live) live = txn.LiveLeases(facts);
          input.turn.held = CardsHeldByUser(live ? *live : held_now());
        }
      }
      if (inventory) {
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
        input.policy = make_policy_input(*inventory, *live, *processes, job, facts.now_unix_ms);
      } else if (look && leases_may_decide) {
        for (const Gpu& gpu : look->inventory.gpus) input.known_cards.push_back(gpu.uuid);
        input.held_leases = held_now();
      }
      Decision decision = Decide(input);
      ever_servable = decision.ever_servable;
      if (verdicts && !decision.verdicts.empty()) *verdicts = decision.verdicts;
      why_waiting = decision.why_waiting;
      waiting_text = decision.waiting_text;
      switch (decision.kind) {
        case Decision::Kind::kLook:
          look_again = inventory != nullptr;
          watched.clear();
          waiting_text.clear();
          return Ok{};
        case Decision::Kind::kRefuse:
          refusal = std::move(decision.refusal);
          if (ticket) (void)txn.RemoveTicket(*ticket);
          return Ok{};
        case Decision::Kind::kQueue:
          if (Status joined = join_queue(txn); !joined.ok()) return joined;
          // At the cap we wait for our own leases to end (their holders are
          // watched, as the head's are); behind others, for those ahead.
          if (decision.turn.capped) return Ok{};
          reserved = false;
          unwatchable = false;
          behind = true;
          ahead = decision.turn.watch;
          waiters_ahead = decision.turn.ahead;
          watched = decision.turn.watched;
          return Ok{};
        case Decision::Kind::kWait:
          if (job) return Ok{};
          head_waits = true;
          nudge_unless_still_waiting = false;
          // Decided on the leases alone: their ends are what can change it.
          if (!inventory) {
            for (const Lease& lease : input.held_leases) watched.push_back(lease.holder);
          }
          return join_queue(txn);
        case Decision::Kind::kTake:
          break;
      }
      Status added = txn.AddLease(*decision.lease);
      if (!added.ok()) return added.error();
      if (ticket) (void)txn.RemoveTicket(*ticket);
      acquired = Acquired{std::move(*decision.lease), std::move(look->inventory),
                          std::move(*decision.selection)};
      return Ok{};
    };
    auto decide = [&](LeaseTransaction& txn) {
      Status decided = read_and_decide(txn);
      if (watch) watch->ForgetChangesSoFar();
      return decided;
    };
    if (!request.wait) {
      Status transaction = (*store)->Transact(decide);
      if (!transaction.ok()) return transaction.error();
    } else {
      // A waiter never loses its place to a lock it cannot take (a stopped
      // gpupin, another user's `flock`), nor to a flooded folder, which no
      // gpupin reads until root clears it: it says why it waits and tries
      // again, until its own --wait time runs out.
      Result<bool> done = (*store)->TryTransact(decide, PatienceWithin(kLockPatience, deadline));
      if (!done.ok() && !done.error().passing) return give_up(done.error());
      if (!done.ok() || !*done) {
        // Stuck, the turn would only hold up the newcomers.
        arrival_turn.reset();
        const std::string why =
            done.ok() ? fmt::format("the state lock is held by {}", (*store)->LockHolder())
                      : done.error().message;
        if (deadline && Clock::now() >= *deadline) {
          return give_up(
              MakeError(ExitCode::kNoGpu,
                        fmt::format("no GPU became available within the --wait time; {}", why)));
        }
        // The flood's message ends with its fix: said last.
        display.Show(done.ok() ? fmt::format("waiting: {}; keeping our place", why)
                               : fmt::format("waiting, keeping our place: {}", why));
        if (done.ok()) continue;  // TryTransact has waited for the lock already
        // The flood is looked at again at each poll.
        auto pause = std::chrono::milliseconds(request.poll_ms);
        if (deadline) {
          pause = std::min(pause,
                           std::chrono::ceil<std::chrono::milliseconds>(*deadline - Clock::now()));
        }
        if (interrupts && !interrupts->Sleep(static_cast<int>(pause.count())))
          return give_up(StoppedBy(interrupts->signal()));
        if (!interrupts) std::this_thread::sleep_for(pause);
        continue;
      }
    }
    // Our ticket or lease is written: the next newcomer may look, or see it.
    arrival_turn.reset();
    if (nudge_unless_still_waiting && ticket) (*store)->Nudge(*ticket);
    nudge_unless_still_waiting = false;
    if (acquired) {
      // Closing an inotify descriptor waits for an RCU grace period (2 to
      // 20 ms): not while the job waits to start. Exit closes them.
      if (watch) RetireUntilExit(std::move(*watch));
      if (ahead_watch) RetireUntilExit(std::move(*ahead_watch));
      return std::move(*acquired);
    }
    if (refusal) return *refusal;
    if (waiting_text.empty()) continue;  // free to choose, but without a (fresh) look
    if (!ahead && !watch) {
      // To wait on the leases, first watch them, then read them again: a
      // change since this read would otherwise go unseen.
      watch_leases();
      if (head_waits && leases_may_decide) want_snapshot = false;
      continue;
    }

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
        ahead_watch->WatchFile((*store)->queue_dir(), name, ahead->change_time_ns);
      } else {
        ahead_watch = ChangeWatch::ForFile((*store)->queue_dir(), name, ahead->change_time_ns);
      }
    }
    ChangeWatch& waiting_on = ahead ? *ahead_watch : *watch;
    // Read afresh, not the decision's remembered stats: the start time is
    // checked after the pidfd is opened, so that a process that ended since
    // the decision and whose pid was reused is not watched in its place.
    // And the process the cards are for (run's command, the shell of env
    // or pick): gone, nobody would use them.
    watched.push_back(request.holder);
    waiting_on.WatchProcesses(
        watched, [&procfs](int pid) { return LiveProcessStartTime(procfs, pid); },
        [&procfs](int pid) { return procfs.Hidden(pid); });
    waiting_on.WakeOnInterrupt(interrupts ? interrupts->wake_fd() : -1);
    auto poll = std::chrono::milliseconds(request.poll_ms);
    if (reserved) poll = std::min(poll, kReservationPoll);
    // Behind others, a waiter also looks at the queue at every poll
    // interval: stopped there (Ctrl-Z), a holder or waiter ahead would hold
    // it up with no event to say so; WaitingTickets then passes it over.
    WakeReason woke;
    do {
      woke = waiting_on.Wait(deadline, poll, unwatchable || reserved || behind);
    } while (woke == WakeReason::kPoll && ahead && !TicketStopped(*ahead, stopped));
    // Woken by a process's exit, a card may be free: we are about to ask
    // NVML and may take it, and the next in line asks at the same time, so
    // that cards freed together are handed on in parallel rather than one
    // look after another. Not when we only moved up (the ticket ahead
    // went): that says nothing about the cards, and nudging then kept one
    // waiter beyond the last card of every round looking in vain. Never on
    // a nudge, or the whole queue would wake.
    if (woke == WakeReason::kInterrupted) return give_up(StoppedBy(interrupts->signal()));
    if (LiveProcessStartTime(procfs, request.holder.pid) != request.holder.start_time_ticks) {
      return give_up(MakeError(
          ExitCode::kError,
          fmt::format(
              "pid {}, which the GPUs were for, ended while waiting; nothing to take them for",
              request.holder.pid)));
    }
    const bool card_may_be_free = ticket && woke == WakeReason::kProcessExited;
    if (woke == WakeReason::kDeadline) {
      return give_up(MakeError(
          ExitCode::kNoGpu,
          fmt::format("no GPU became available within the --wait time; {}", why_waiting)));
    }
    // Woken at the head, it first counts the leases, and looks only if they
    // leave enough cards.
    if (head_waits && leases_may_decide) {
      want_snapshot = false;
      nudge_unless_still_waiting = card_may_be_free;
    } else if (card_may_be_free) {
      (*store)->Nudge(*ticket);
    }
    // Woken behind others, it has most likely moved to the head: its next
    // read may be the one it waits on there.
    if (ahead) watch_leases();
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
