#include "core/lease.h"

#include <algorithm>

#include "core/process_tree.h"

namespace gpupin {
std::vector<uint32_t> ReservationJobs(const Lease& lease, const LivenessFacts& facts) {
  const auto& baseline = lease.reservation_baseline_pids;
  std::vector<uint32_t> pids;
  for (const std::string& uuid : lease.gpu_uuids) {
    auto it = facts.gpu_pids.find(uuid);
    if (it == facts.gpu_pids.end()) continue;  // unknown is not "a new process"
    for (uint32_t pid : it->second) {
      if (std::find(baseline.begin(), baseline.end(), pid) != baseline.end()) continue;
      // Another user's process on the card is not this user's job: it would
      // keep an ended reservation alive and charge it to this user.
      if (facts.process_uid) {
        std::optional<uint32_t> runs_as = facts.process_uid(static_cast<int>(pid));
        if (runs_as && *runs_as != lease.uid) continue;
      }
      pids.push_back(pid);
    }
  }
  return pids;
}

// A container's lease is held like any other, by a process: the `docker
// wait` that follows the container (cli/docker), so that no record can
// claim a card on the word of a container id alone.
LeaseState EvaluateLease(const Lease& lease, const LivenessFacts& facts) {
  if (lease.is_reservation()) {
    // Once its job has started, a reservation is the job's: it holds the
    // cards while a process that was not there at reservation time runs on
    // them, whatever its holder (the shell) and deadline say. Ending it when
    // the job appeared would hand a card whose job has not yet allocated
    // much memory (under --max-used) to the next pick: the very collision
    // reservations exist to prevent.
    if (!ReservationJobs(lease, facts).empty()) return LeaseState::kLive;
    if (!RecordProcessAlive(lease.holder, lease.uid, facts)) return LeaseState::kHolderGone;
    if (facts.now_unix_ms > *lease.reservation_deadline_unix_ms)
      return LeaseState::kReservationExpired;
    return LeaseState::kLive;
  }
  if (!RecordProcessAlive(lease.holder, lease.uid, facts)) return LeaseState::kHolderGone;
  return LeaseState::kLive;
}

std::string LeaseCommand(const std::vector<std::string>& argv) {
  std::string text;
  for (const std::string& arg : argv) {
    if (!text.empty()) text += ' ';
    text += arg;
  }
  return text.size() > 200 ? text.substr(0, 197) + "..." : text;
}

namespace {

// What a living holder started that `on_gpu` descends from: the holder's
// child on the way up (the script, not one of its steps), or the holder
// itself once it has exec'd (`bash -c '…; ./train.sh'` runs the script in
// its own process), or is on the card itself.
std::optional<int> JobUnderHolder(int on_gpu, const Lease& lease, const LivenessFacts& facts) {
  const int holder = lease.holder.pid;
  std::optional<uint64_t> stack =
      facts.start_stack_of ? facts.start_stack_of(holder) : std::nullopt;
  const bool execd = lease.holder_start_stack && stack && *stack != *lease.holder_start_stack;
  return NearestAncestor(on_gpu, facts.parent_of, [&](int p) {
    return p == holder || (!execd && facts.parent_of(p) == std::optional<int>(holder));
  });
}

// The same once the holder is gone, when its children are init's (or a
// subreaper's): the highest ancestor of `on_gpu` still in the holder's
// session, below the session's leader (the terminal's shell, whose life is
// not the job's). Nothing when `on_gpu` is of another session.
std::optional<int> JobInSession(int on_gpu, int session, const LivenessFacts& facts) {
  if (facts.session_of(on_gpu) != std::optional<int>(session) || on_gpu == session)
    return std::nullopt;
  // The nearest ancestor whose parent is outside the session, or its leader.
  return NearestAncestor(on_gpu, facts.parent_of, [&](int p) {
    std::optional<int> parent = facts.parent_of(p);
    return !parent || *parent <= 1 || *parent == session || *parent == p ||
           facts.session_of(*parent) != std::optional<int>(session);
  });
}

}  // namespace

std::optional<Lease> HandedToJob(const Lease& lease, const LivenessFacts& facts) {
  if (!lease.is_reservation() || !facts.process_start_time || !facts.parent_of) return std::nullopt;
  const int holder = lease.holder.pid;
  // A holder that is gone (or a reused pid) has no descendants of its own:
  // what it started is then found by its session, where the record keeps it.
  const bool holder_lives = facts.process_start_time(holder) == lease.holder.start_time_ticks;
  if (!holder_lives && (!lease.holder_session || !facts.session_of)) return std::nullopt;
  for (uint32_t pid : ReservationJobs(lease, facts)) {
    const int on_gpu = static_cast<int>(pid);
    // The job is what the holder started and the process on the card
    // descends from: the script, not its first step, whose end would free
    // the card while the next step runs. Unless that runs as another user
    // (sudo, a setuid wrapper): it holds this user's lease only while its
    // parent, the user's, lives (RecordProcessAlive), so the process on the
    // card, the user's, does.
    std::optional<int> top = holder_lives ? JobUnderHolder(on_gpu, lease, facts)
                                          : JobInSession(on_gpu, *lease.holder_session, facts);
    if (!top) continue;
    int job = *top;
    if (facts.process_uid && lease.uid != 0) {
      std::optional<uint32_t> runs_as = facts.process_uid(job);
      if (runs_as && *runs_as != lease.uid) job = on_gpu;
    }
    std::optional<uint64_t> start = facts.process_start_time(job);
    if (!start) continue;
    Lease handed = lease;
    handed.holder = {job, *start};
    handed.reservation_deadline_unix_ms.reset();
    handed.reservation_baseline_pids.clear();
    handed.holder_session.reset();
    handed.holder_start_stack.reset();
    if (facts.process_command) handed.command = facts.process_command(job).value_or(lease.command);
    return handed;
  }
  return std::nullopt;
}

bool RecordProcessAlive(const ProcessIdentity& process, uint32_t uid, const LivenessFacts& facts) {
  if (!facts.process_start_time) return true;  // cannot tell: keep the record
  std::optional<uint64_t> start = facts.process_start_time(process.pid);
  // Another user's process behind hidepid cannot be told from a reused
  // PID: the record is kept, since a live job's counted dead would free
  // its cards to the next job and lose its lease.
  if (!start) return facts.process_hidden && facts.process_hidden(process.pid);
  // A different start time is a reused PID: the process itself is gone.
  if (*start != process.start_time_ticks) return false;
  if (uid == 0 || !facts.process_uid) return true;
  std::optional<uint32_t> runs_as = facts.process_uid(process.pid);
  if (!runs_as || *runs_as == uid) return true;
  // A command that made itself root (sudo, another setuid program) was
  // still started by the user: its parent (gpupin run, the user's shell)
  // runs as them. A process none of the user's started (init, a daemon,
  // another user's job) has no such parent, and holds nothing.
  if (!facts.parent_of) return false;
  std::optional<int> parent = facts.parent_of(process.pid);
  return parent && *parent > 1 && facts.process_uid(*parent) == uid;
}

}  // namespace gpupin
