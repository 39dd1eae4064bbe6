// Helpers for tests that use real processes: run a function in a forked
// child (optionally as another user) and collect how it ended.
// Header-only: test code, never part of gpupin_lib.
#pragma once

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <functional>
#include <optional>

#include "core/lease.h"
#include "sys/procfs.h"

namespace gpupin::testing {

inline constexpr uid_t kNobody = 65534;

// Runs `body` in a child process, after switching to `uid` when given, and
// returns its exit status (body's return value), or -signal when killed.
inline int RunInChild(const std::function<int()>& body, std::optional<uid_t> uid = std::nullopt) {
  pid_t pid = fork();
  if (pid == 0) {
    if (uid && (setgid(*uid) != 0 || setuid(*uid) != 0)) _exit(120);
    _exit(body());
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
}

// Start time of a live process from the real /proc, as gpupin checks it.
inline std::optional<uint64_t> RealStartTime(int pid) {
  return LiveProcessStartTime(ProcFs(), pid);
}

// The identity of a process that existed a moment ago and has exited (and
// been collected), for leases and tickets whose holder is dead.
inline ProcessIdentity DeadProcess() {
  pid_t child = fork();
  if (child == 0) _exit(0);
  std::optional<uint64_t> start = RealStartTime(child);
  waitpid(child, nullptr, 0);
  return {child, start.value_or(1)};
}

// A child process that lives until this object is destroyed (then killed
// and collected): a live holder or waiter of its own for a record, distinct
// from the test process and from every other LiveChild.
class LiveChild {
 public:
  LiveChild() : pid_(fork()) {
    if (pid_ == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlives a test that crashed
      for (;;) pause();
    }
    if (pid_ < 0) std::abort();  // kill(-1) in the destructor would hit every process
    start_ = RealStartTime(pid_).value_or(0);
  }
  ~LiveChild() {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  LiveChild(const LiveChild&) = delete;
  LiveChild& operator=(const LiveChild&) = delete;

  ProcessIdentity identity() const { return {pid_, start_}; }

 private:
  pid_t pid_;
  uint64_t start_ = 0;
};

}  // namespace gpupin::testing
