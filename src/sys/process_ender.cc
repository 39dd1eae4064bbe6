#include "sys/process_ender.h"

#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>

#include "sys/pidfd.h"
#include "sys/unique_fd.h"

namespace gpupin {
namespace {

// How long a process gets to vanish after SIGKILL, which is not instant (a
// process in uninterruptible sleep, a large address space to tear down).
constexpr int64_t kAfterKillMs = 2000;

int PidfdSendSignal(int pidfd, int signal) {
  return static_cast<int>(syscall(SYS_pidfd_send_signal, pidfd, signal, nullptr, 0));
}

struct Pending {
  size_t target = 0;
  UniqueFd pidfd;
};

// Polls the pidfds of `pending` until `ms` pass; moves each that exited out
// of `pending`, recording `exited` as its outcome.
void WaitForExits(std::vector<Pending>& pending, std::vector<EndOutcome>& outcomes,
                  EndOutcome exited, int64_t ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (!pending.empty()) {
    std::vector<pollfd> fds;
    fds.reserve(pending.size());
    for (const Pending& p : pending) fds.push_back({p.pidfd.get(), POLLIN, 0});
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return;
    int ready = poll(fds.data(), fds.size(), static_cast<int>(left.count()));
    if (ready < 0 && errno != EINTR) return;
    std::vector<Pending> still;
    for (size_t i = 0; i < pending.size(); ++i) {
      if (ready > 0 && (fds[i].revents & (POLLIN | POLLHUP | POLLERR))) {
        outcomes[pending[i].target] = exited;
      } else {
        still.push_back(std::move(pending[i]));
      }
    }
    pending = std::move(still);
  }
}

}  // namespace

const char* EndOutcomeName(EndOutcome outcome) {
  switch (outcome) {
    case EndOutcome::kTerminated:
      return "ended";
    case EndOutcome::kKilled:
      return "killed";
    case EndOutcome::kAlreadyGone:
      return "already gone";
    case EndOutcome::kSurvived:
      return "survived";
    case EndOutcome::kNotPermitted:
      return "not permitted";
  }
  return "survived";
}

bool EndedOrGone(EndOutcome outcome) {
  return outcome == EndOutcome::kTerminated || outcome == EndOutcome::kKilled ||
         outcome == EndOutcome::kAlreadyGone;
}

std::vector<EndOutcome> EndProcesses(const ProcFs& procfs, const std::vector<EndTarget>& targets,
                                     int64_t grace_ms) {
  std::vector<EndOutcome> outcomes(targets.size(), EndOutcome::kSurvived);
  std::vector<Pending> pending;
  for (size_t i = 0; i < targets.size(); ++i) {
    UniqueFd pidfd(PidfdOpen(targets[i].pid));
    if (!pidfd.valid()) {
      if (errno == ESRCH) outcomes[i] = EndOutcome::kAlreadyGone;
      continue;
    }
    // Checked once the pidfd pins the process: the pid could have been
    // reused between the listing and the pidfd.
    if (LiveProcessStartTime(procfs, targets[i].pid) != targets[i].start_time_ticks) {
      outcomes[i] = EndOutcome::kAlreadyGone;
      continue;
    }
    if (PidfdSendSignal(pidfd.get(), SIGTERM) != 0) {
      outcomes[i] = errno == EPERM ? EndOutcome::kNotPermitted : EndOutcome::kAlreadyGone;
      continue;
    }
    if (ProcessStopped(procfs, targets[i].pid)) PidfdSendSignal(pidfd.get(), SIGCONT);
    pending.push_back({i, std::move(pidfd)});
  }
  WaitForExits(pending, outcomes, EndOutcome::kTerminated, grace_ms);
  for (const Pending& p : pending) PidfdSendSignal(p.pidfd.get(), SIGKILL);
  WaitForExits(pending, outcomes, EndOutcome::kKilled, kAfterKillMs);
  return outcomes;
}

}  // namespace gpupin
