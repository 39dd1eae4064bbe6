#include "sys/spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>

#include "sys/procfs.h"

namespace gpupin {
namespace {

volatile sig_atomic_t g_child_pid = 0;

void ForwardSignal(int signal, siginfo_t* info, void*) {
  // A terminal sends SIGINT/SIGQUIT/SIGHUP to the whole foreground process
  // group (si_code SI_KERNEL): the child has it already.
  if (info != nullptr && info->si_code == SI_KERNEL) return;
  if (g_child_pid > 0) kill(g_child_pid, signal);
}

void WriteErrnoAndExit(int fd, int error) {
  ssize_t ignored = write(fd, &error, sizeof error);
  (void)ignored;
  _exit(127);
}

}  // namespace

Result<PendingChild> Fork(const std::vector<std::string>& argv, const EnvChanges& env) {
  if (argv.empty()) return MakeError(ExitCode::kUsage, "no command given; write it after --");
  int go[2];
  int exec_error[2];
  if (pipe2(go, O_CLOEXEC) != 0 || pipe2(exec_error, O_CLOEXEC) != 0) {
    return MakeError(ExitCode::kError, fmt::format("cannot create a pipe: {}", strerror(errno)));
  }
  // Everything the child needs is prepared before fork: after it, only
  // async-signal-safe calls.
  std::vector<std::string> env_strings;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    std::string_view text(*entry);
    std::string name(text.substr(0, text.find('=')));
    if (!env.contains(name)) env_strings.emplace_back(text);
  }
  for (const auto& [name, value] : env) {
    if (value) env_strings.push_back(name + "=" + *value);
  }
  std::vector<char*> envp;
  for (std::string& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = argv;
  std::vector<char*> c_argv;
  for (std::string& s : args) c_argv.push_back(s.data());
  c_argv.push_back(nullptr);

  pid_t pid = fork();
  if (pid < 0) return MakeError(ExitCode::kError, fmt::format("cannot fork: {}", strerror(errno)));
  if (pid == 0) {
    close(go[1]);
    close(exec_error[0]);
    char byte;
    ssize_t n;
    do {
      n = read(go[0], &byte, 1);
    } while (n < 0 && errno == EINTR);
    if (n != 1) _exit(127);  // gpupin went away before the lease was recorded
    close(go[0]);
    execvpe(c_argv[0], c_argv.data(), envp.data());
    WriteErrnoAndExit(exec_error[1], errno);
  }
  close(go[0]);
  close(exec_error[1]);
  std::optional<ProcessStat> stat = ProcFs().Stat(pid);
  ProcessIdentity identity{pid, stat ? stat->start_time_ticks : 0};
  return PendingChild(identity, go[1], exec_error[0]);
}

PendingChild::PendingChild(PendingChild&& other) noexcept
    : identity_(other.identity_), go_fd_(other.go_fd_), exec_error_fd_(other.exec_error_fd_) {
  other.identity_ = {};
  other.go_fd_ = -1;
  other.exec_error_fd_ = -1;
}

PendingChild::~PendingChild() {
  if (go_fd_ >= 0) {
    close(go_fd_);  // the child reads EOF and exits without running anything
    if (identity_.pid > 0) waitpid(identity_.pid, nullptr, 0);
  }
  if (exec_error_fd_ >= 0) close(exec_error_fd_);
}

Status PendingChild::Start() {
  char go = 1;
  ssize_t written = write(go_fd_, &go, 1);
  close(go_fd_);
  go_fd_ = -1;
  if (written != 1)
    return MakeError(ExitCode::kError, "the command's process vanished before it started");
  int error = 0;
  ssize_t n;
  do {
    n = read(exec_error_fd_, &error, sizeof error);
  } while (n < 0 && errno == EINTR);
  close(exec_error_fd_);
  exec_error_fd_ = -1;
  if (n == sizeof error) {
    waitpid(identity_.pid, nullptr, 0);
    return MakeError(ExitCode::kError, fmt::format("cannot run the command: {}", strerror(error)));
  }
  return Ok{};
}

int PendingChild::WaitForwardingSignals() {
  g_child_pid = identity_.pid;
  struct sigaction action = {};
  action.sa_sigaction = ForwardSignal;
  action.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&action.sa_mask);
  static constexpr int kForwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
  struct sigaction previous[4];
  for (int i = 0; i < 4; ++i) sigaction(kForwarded[i], &action, &previous[i]);
  int status = 0;
  pid_t waited;
  do {
    waited = waitpid(identity_.pid, &status, 0);
  } while (waited < 0 && errno == EINTR);
  for (int i = 0; i < 4; ++i) sigaction(kForwarded[i], &previous[i], nullptr);
  g_child_pid = 0;
  identity_.pid = 0;
  if (waited < 0) return 1;
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}

}  // namespace gpupin
