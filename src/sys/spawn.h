// Starting the user's command and standing in for it: gpupin run forwards
// the signals a user sends it and exits with the command's status.
#pragma once

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/job_env.h"
#include "core/lease.h"

namespace gpupin {

struct ChildLaunch;

// A child process that has not yet exec'd the command. It exists first so that
// the lease can name it as holder (its PID and start time): the lease then
// lives exactly as long as the job, even if gpupin itself is killed. It
// waits on a pipe until Start(); if gpupin dies before that, the child sees
// the pipe close and exits without running the command, so no job ever
// runs without its lease.
// run's exit status, as a shell's, for a command it cannot start.
inline constexpr ExitCode kCommandNotExecutable = static_cast<ExitCode>(126);
inline constexpr ExitCode kCommandNotFound = static_cast<ExitCode>(127);

// Whether the command `file` (argv[0]) can be run as execvp would find it
// under gpupin's PATH, which the job inherits: checked before any GPU is
// chosen. Fails with kCommandNotFound (nothing by that name) or
// kCommandNotExecutable (found, but not an executable file).
Status FindCommand(const std::string& file);

class PendingChild {
 public:
  PendingChild(PendingChild&& other) noexcept;
  PendingChild& operator=(PendingChild&&) = delete;
  ~PendingChild();  // abandons a child that was never started

  ProcessIdentity identity() const { return identity_; }
  pid_t pid() const { return identity_.pid; }

  // Sends the command and its environment and lets the child exec. From here on,
  // SIGINT, SIGTERM, SIGHUP and SIGQUIT sent to gpupin are forwarded to the
  // child (a terminal's Ctrl-C already reaches the whole foreground group,
  // so it is not sent twice). Fails when exec fails, naming the reason.
  Status Start(const std::vector<std::string>& argv, const EnvChanges& env);

  // Whether the child has ended, started or not (killed while gpupin
  // waited), without reaping it.
  bool Ended() const;

  // For a child that ended before Start (killed while gpupin waited): how
  // it ended, as Start would say it, the child reaped; nullopt while it
  // waits to be started.
  std::optional<Error> EndedBeforeStart();

  // Waits for the started child and returns its status as a shell reports
  // it: the exit code, or 128+signal.
  int Wait();

  // After Wait: the signal that killed the child, or 0 when it exited
  // (a status of 130 may be either).
  int KilledBy() const { return killed_by_; }

 private:
  friend Result<PendingChild> CreatePendingChild();
  PendingChild(ProcessIdentity identity, int go_fd, int exec_error_fd,
               std::unique_ptr<ChildLaunch> launch);
  // Waits for the child to end; its wait status, or nullopt.
  std::optional<int> Collect();
  // Collects a child that died before "go" and says how.
  Error Vanished();

  ProcessIdentity identity_;
  int go_fd_ = -1;
  int exec_error_fd_ = -1;
  bool forwarding_ = false;
  int killed_by_ = 0;
  std::unique_ptr<ChildLaunch> launch_;  // shared with the child until it execs
};

// The command is chosen later (docker's arguments depend on the GPUs
// chosen), so it travels with the environment at Start().
Result<PendingChild> CreatePendingChild();

}  // namespace gpupin
