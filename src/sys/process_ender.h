// Ends processes as a careful user would: SIGTERM (and SIGCONT to a stopped
// one, which acts on SIGTERM only once it runs), then SIGKILL to those still
// there when the grace period is over. Each is named by pid and start time
// and signalled through a pidfd, so a pid reused since it was listed is
// never hit.
#pragma once

#include <cstdint>
#include <vector>

#include "sys/procfs.h"

namespace gpupin {

struct EndTarget {
  int pid = 0;
  uint64_t start_time_ticks = 0;
};

enum class EndOutcome {
  kTerminated,    // exited after SIGTERM
  kKilled,        // exited after SIGKILL
  kAlreadyGone,   // had exited (or its pid names another process now)
  kSurvived,      // still there after SIGKILL (uninterruptible sleep), or no pidfd
  kNotPermitted,  // the kernel refused the signal (EPERM)
};

// "ended", "killed", "already gone", "survived", "not permitted".
const char* EndOutcomeName(EndOutcome outcome);

// Whether the process is gone now (kTerminated, kKilled, kAlreadyGone).
bool EndedOrGone(EndOutcome outcome);

// Ends every target, all at once: the grace period runs for all of them
// together. One outcome per target, in order.
std::vector<EndOutcome> EndProcesses(const ProcFs& procfs, const std::vector<EndTarget>& targets,
                                     int64_t grace_ms);

}  // namespace gpupin
