// Starting the user's command and standing in for it: gpupin run forwards
// the signals a user sends it and exits with the command's status.
#pragma once

#include <sys/types.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/job_env.h"
#include "core/lease.h"

namespace gpupin {

// A child that has been forked but not yet exec'd: it waits on a pipe until
// Start() so that the lease naming it can be recorded first. If gpupin dies
// before Start(), the child sees the pipe close and exits without running
// the command, so no job ever runs without its lease.
class PendingChild {
 public:
  PendingChild(PendingChild&& other) noexcept;
  PendingChild& operator=(PendingChild&&) = delete;
  ~PendingChild();  // abandons a child that was never started

  ProcessIdentity identity() const { return identity_; }
  pid_t pid() const { return identity_.pid; }

  // Lets the child exec. Fails when exec fails (command not found: exit 127
  // semantics, reported as an Error naming the command).
  Status Start();

  // Waits for the started child, forwarding SIGINT, SIGTERM, SIGHUP and
  // SIGQUIT that are sent to gpupin (a terminal's Ctrl-C already reaches the
  // whole foreground group, so it is not sent twice). Returns the exit
  // status as a shell reports it: the code, or 128+signal.
  int WaitForwardingSignals();

 private:
  friend Result<PendingChild> Fork(const std::vector<std::string>& argv, const EnvChanges& env);
  PendingChild(ProcessIdentity identity, int go_fd, int exec_error_fd)
      : identity_(identity), go_fd_(go_fd), exec_error_fd_(exec_error_fd) {}

  ProcessIdentity identity_;
  int go_fd_ = -1;
  int exec_error_fd_ = -1;
};

Result<PendingChild> Fork(const std::vector<std::string>& argv, const EnvChanges& env);

}  // namespace gpupin
