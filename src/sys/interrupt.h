// Ctrl-C for loops that must end cleanly (ls --watch): SIGINT/SIGTERM set a
// flag instead of killing the process, and sleeps end early when it is set.
#pragma once

namespace gpupin {

class InterruptGuard {
 public:
  // Installs the handlers; the destructor restores the previous ones.
  InterruptGuard();
  ~InterruptGuard();
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;

  bool interrupted() const;
  // Sleeps up to `milliseconds`; returns false when interrupted.
  bool Sleep(int milliseconds) const;
};

}  // namespace gpupin
