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
constexpr int kForwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
struct sigaction g_previous[std::size(kForwarded)];

void ForwardSignal(int signal, siginfo_t* info, void*) {
  // A terminal sends SIGINT/SIGQUIT/SIGHUP to the whole foreground process
  // group (si_code SI_KERNEL): the child has it already.
  if (info != nullptr && info->si_code == SI_KERNEL) return;
  if (g_child_pid > 0) kill(g_child_pid, signal);
}

bool ReadAll(int fd, std::string& out) {
  char buffer[4096];
  for (;;) {
    ssize_t n = read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    if (n == 0) return true;
    out.append(buffer, static_cast<size_t>(n));
  }
}

bool WriteAll(int fd, const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

// After a leading "go" byte, NUL-terminated records: "aARG" (argument),
// "1NAME=VALUE" (set), "0NAME" (unset). A child that reads no "go" exits.
std::string EncodeStart(const std::vector<std::string>& argv, const EnvChanges& env) {
  std::string data = "g";
  for (const std::string& arg : argv) {
    data += "a" + arg;
    data.push_back('\0');
  }
  for (const auto& [name, value] : env) {
    data += value ? "1" + name + "=" + *value : "0" + name;
    data.push_back('\0');
  }
  return data;
}

[[noreturn]] void RunChild(int go_fd, int exec_error_fd) {
  // gpupin is single-threaded, so allocating after fork is safe here.
  std::string data;
  if (!ReadAll(go_fd, data) || data.empty() || data[0] != 'g') _exit(127);
  close(go_fd);
  std::vector<std::string> argv;
  size_t start = 1;
  while (start < data.size()) {
    size_t end = data.find('\0', start);
    std::string record = data.substr(start, end - start);
    if (!record.empty() && record[0] == 'a') {
      argv.push_back(record.substr(1));
    } else if (!record.empty() && record[0] == '1') {
      size_t equals = record.find('=');
      setenv(record.substr(1, equals - 1).c_str(), record.substr(equals + 1).c_str(), 1);
    } else if (!record.empty()) {
      unsetenv(record.substr(1).c_str());
    }
    start = end + 1;
  }
  if (argv.empty()) _exit(127);
  std::vector<char*> c_argv;
  c_argv.reserve(argv.size() + 1);
  for (const std::string& arg : argv) c_argv.push_back(const_cast<char*>(arg.c_str()));
  c_argv.push_back(nullptr);
  execvp(c_argv[0], c_argv.data());
  int error = errno;
  ssize_t ignored = write(exec_error_fd, &error, sizeof error);
  (void)ignored;
  _exit(127);
}

}  // namespace

Result<PendingChild> Fork() {
  int go[2];
  int exec_error[2];
  if (pipe2(go, O_CLOEXEC) != 0)
    return MakeError(ExitCode::kError, fmt::format("cannot create a pipe: {}", strerror(errno)));
  if (pipe2(exec_error, O_CLOEXEC) != 0) {
    close(go[0]);
    close(go[1]);
    return MakeError(ExitCode::kError, fmt::format("cannot create a pipe: {}", strerror(errno)));
  }
  std::fflush(nullptr);
  pid_t pid = fork();
  if (pid < 0) return MakeError(ExitCode::kError, fmt::format("cannot fork: {}", strerror(errno)));
  if (pid == 0) {
    close(go[1]);
    close(exec_error[0]);
    RunChild(go[0], exec_error[1]);
  }
  close(go[0]);
  close(exec_error[1]);
  std::optional<ProcessStat> stat = ProcFs().Stat(pid);
  ProcessIdentity identity{pid, stat ? stat->start_time_ticks : 0};
  return PendingChild(identity, go[1], exec_error[0]);
}

PendingChild::PendingChild(PendingChild&& other) noexcept
    : identity_(other.identity_),
      go_fd_(other.go_fd_),
      exec_error_fd_(other.exec_error_fd_),
      forwarding_(other.forwarding_) {
  other.identity_ = {};
  other.go_fd_ = -1;
  other.exec_error_fd_ = -1;
  other.forwarding_ = false;
}

PendingChild::~PendingChild() {
  if (go_fd_ >= 0) {
    close(go_fd_);  // the child reads no "go" and exits without running anything
    if (identity_.pid > 0) waitpid(identity_.pid, nullptr, 0);
  }
  if (exec_error_fd_ >= 0) close(exec_error_fd_);
  if (forwarding_) {
    for (size_t i = 0; i < std::size(kForwarded); ++i)
      sigaction(kForwarded[i], &g_previous[i], nullptr);
    g_child_pid = 0;
  }
}

Status PendingChild::Start(const std::vector<std::string>& argv, const EnvChanges& env) {
  if (argv.empty()) return MakeError(ExitCode::kUsage, "no command given; write it after --");
  g_child_pid = identity_.pid;
  struct sigaction action = {};
  action.sa_sigaction = ForwardSignal;
  action.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&action.sa_mask);
  for (size_t i = 0; i < std::size(kForwarded); ++i)
    sigaction(kForwarded[i], &action, &g_previous[i]);
  forwarding_ = true;

  bool sent = WriteAll(go_fd_, EncodeStart(argv, env));
  close(go_fd_);
  go_fd_ = -1;
  if (!sent) return MakeError(ExitCode::kError, "the command's process vanished before it started");
  int error = 0;
  ssize_t n;
  do {
    n = read(exec_error_fd_, &error, sizeof error);
  } while (n < 0 && errno == EINTR);
  close(exec_error_fd_);
  exec_error_fd_ = -1;
  if (n == sizeof error) {
    waitpid(identity_.pid, nullptr, 0);
    identity_.pid = 0;
    return MakeError(ExitCode::kError, fmt::format("cannot run the command: {}", strerror(error)));
  }
  return Ok{};
}

bool PendingChild::Ended() const {
  siginfo_t info = {};
  if (waitid(P_PID, static_cast<id_t>(identity_.pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0)
    return true;
  return info.si_pid != 0;
}

int PendingChild::Wait() {
  int status = 0;
  pid_t waited;
  do {
    waited = waitpid(identity_.pid, &status, 0);
  } while (waited < 0 && errno == EINTR);
  identity_.pid = 0;
  if (waited < 0) return 1;
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}

}  // namespace gpupin
