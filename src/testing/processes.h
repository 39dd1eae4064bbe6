// Helpers for tests that use real processes: run a function in a forked
// child (optionally as another user) and collect how it ended.
// Header-only: test code, never part of gpupin_lib.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <functional>

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

}  // namespace gpupin::testing
