// Waiting for an exclusive flock with a time limit. The wait blocks in the
// kernel, so the lock passes to the next waiter the moment its holder lets
// go; polling with backoff instead left the lock idle for up to the last
// sleep (2 ms) on every contended hand-over, and hand-overs are what the
// wait queue is made of.
#pragma once

#include <chrono>

namespace gpupin {

enum class FlockOutcome { kLocked, kTimedOut, kFailed };

// Takes LOCK_EX on `fd`, waiting at most `timeout`. A SIGALRM interval timer
// interrupts the blocked flock at the deadline; the previous SIGALRM action
// and timer are restored before returning. On kFailed, errno says why.
FlockOutcome LockExclusiveWithin(int fd, std::chrono::milliseconds timeout);

}  // namespace gpupin
