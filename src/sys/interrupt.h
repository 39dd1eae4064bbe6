// Ctrl-C for what must end cleanly: SIGINT, SIGTERM and SIGHUP set a flag
// instead of killing the process, so that `ls --watch` restores the
// terminal and a waiter leaves the wait queue (its ticket would otherwise
// stay behind as a dead file) before it goes.
#pragma once

namespace gpupin {

class InterruptGuard {
 public:
  // Installs the handlers (not over an ignored signal: nohup); the
  // destructor restores the previous ones. One guard at a time.
  InterruptGuard();
  ~InterruptGuard();
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;

  bool interrupted() const;
  // The first signal received, 0 before any.
  int signal() const;
  // Readable from the first signal on: poll() it beside what else is
  // waited for, so that a signal arriving just before the poll still wakes
  // it. -1 when no pipe could be made; poll() then skips it, and the
  // signal is seen at the next wake-up.
  int wake_fd() const;
  // Sleeps up to `milliseconds`; returns false when interrupted.
  bool Sleep(int milliseconds) const;
};

// What a process stopped by `signal` does once it has cleaned up: it dies
// by the same signal, so that its parent sees that (a shell loop stops on a
// child killed by SIGINT, not on one that merely exited 130). Returns
// 128 + signal only if the signal could not end the process.
int DieBySignal(int signal);

// Whether `signal`, left to its default action, ends a process without a
// core dump (SIGINT, SIGTERM, SIGKILL …): one a wrapper may die by in turn
// without leaving a core of its own.
bool EndsWithoutCore(int signal);

}  // namespace gpupin
