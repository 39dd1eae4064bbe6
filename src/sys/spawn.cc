#include "sys/spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <optional>

#include "sys/c_string_array.h"
#include "sys/environment.h"
#include "sys/procfs.h"

namespace gpupin {
namespace {

volatile sig_atomic_t g_child_pid = 0;
// SIGUSR1/SIGUSR2/SIGALRM too: Slurm's --signal=USR1@120 and the
// checkpoint-and-requeue of training frameworks send them to the job step,
// and by default they would kill gpupin and leave the job running unwarned.
constexpr int kForwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM};
struct sigaction g_previous[std::size(kForwarded)];

void ForwardSignal(int signal, siginfo_t* info, void*) {
  // A terminal sends SIGINT/SIGQUIT/SIGHUP to the whole foreground process
  // group (si_code SI_KERNEL): the child has it already.
  if (info != nullptr && info->si_code == SI_KERNEL) return;
  if (g_child_pid > 0) kill(g_child_pid, signal);
}

// The pending child shares gpupin's memory until it execs: no page tables
// to copy, no copy-on-write faults in either process. On a virtual machine
// a fork was a third of what a queued `gpupin run` cost the CPU (9.3 ms
// with it, 6.2 ms without, bench/newcomer_cost.sh), paid by every job
// submitted together while the first ones start. So the child runs
// nothing but system calls made here: no libc wrapper, which could set
// errno, gpupin's own (same thread pointer), and no sanitizer code, whose
// state is gpupin's too.
__attribute__((always_inline, no_sanitize("address", "undefined"))) inline long RawSyscall(
    long number, long a = 0, long b = 0, long c = 0, long d = 0) {
#if defined(__x86_64__)
  long result;
  register long r10 __asm__("r10") = d;
  __asm__ volatile("syscall"
                   : "=a"(result)
                   : "a"(number), "D"(a), "S"(b), "d"(c), "r"(r10)
                   : "rcx", "r11", "memory");
  return result;
#elif defined(__aarch64__)
  register long x8 __asm__("x8") = number;
  register long x0 __asm__("x0") = a;
  register long x1 __asm__("x1") = b;
  register long x2 __asm__("x2") = c;
  register long x3 __asm__("x3") = d;
  __asm__ volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3) : "memory");
  return x0;
#else
#error "the pending child needs raw system calls for this architecture"
#endif
}

}  // namespace

// Everything the child reads, built by gpupin: before the clone (the
// descriptors and signal settings) and before "go" (what to exec). Its
// address is fixed, and it outlives the child's use of it.
struct ChildLaunch {
  int go_fd = -1;          // the child's end
  int exec_error_fd = -1;  // the child's end
  int parent_go_fd = -1;   // closed in the child, so gpupin's death reads as EOF
  int parent_exec_error_fd = -1;
  sigset_t parent_mask;
  void* stack = nullptr;
  size_t stack_size = size_t{64} * 1024;

  CStringArray candidates;  // the files execvp would try, in order
  CStringArray argv;
  CStringArray shell_argv;  // "/bin/sh FILE ARGS...", for a script without #!
  CStringArray envp;
  // The same, as the bare pointers the child reads (it calls no C++ code).
  char* const* candidate_list = nullptr;
  char* const* argv_list = nullptr;
  char** shell_list = nullptr;
  char* const* env_list = nullptr;

  ~ChildLaunch() {
    if (stack != nullptr) munmap(stack, stack_size);
  }
};

namespace {

// The child: waits for "go", then execs like execvp (PATH order, a script
// without #! through /bin/sh) and reports why it could not.
__attribute__((no_sanitize("address", "undefined"))) int AwaitGoThenExec(void* arg) {
  const ChildLaunch* launch = static_cast<const ChildLaunch*>(arg);
  RawSyscall(SYS_close, launch->parent_go_fd);
  RawSyscall(SYS_close, launch->parent_exec_error_fd);
  // A copy of gpupin's handlers as they were at the clone (no CLONE_SIGHAND):
  // each that gpupin catches would run gpupin's code here, so it takes the
  // default, as posix_spawn does.
  struct KernelSigaction {
    void (*handler)(int);
    unsigned long flags;
    void (*restorer)();
    unsigned long mask;
  };
  const KernelSigaction default_action = {SIG_DFL, 0, nullptr, 0};
  for (int signal = 1; signal < _NSIG; ++signal) {
    KernelSigaction current = {};
    if (RawSyscall(SYS_rt_sigaction, signal, 0, reinterpret_cast<long>(&current), 8) == 0 &&
        current.handler != SIG_DFL && current.handler != SIG_IGN)
      RawSyscall(SYS_rt_sigaction, signal, reinterpret_cast<long>(&default_action), 0, 8);
  }
  RawSyscall(SYS_rt_sigprocmask, SIG_SETMASK, reinterpret_cast<long>(&launch->parent_mask), 0, 8);
  char go = 0;
  long n;
  do {
    n = RawSyscall(SYS_read, launch->go_fd, reinterpret_cast<long>(&go), 1);
  } while (n == -EINTR);
  if (n != 1 || go != 'g') RawSyscall(SYS_exit_group, 127);
  long error = -ENOENT;
  bool denied = false;
  for (char* const* file = launch->candidate_list; *file != nullptr; ++file) {
    error = RawSyscall(SYS_execve, reinterpret_cast<long>(*file),
                       reinterpret_cast<long>(launch->argv_list),
                       reinterpret_cast<long>(launch->env_list));
    if (error == -ENOEXEC) {
      launch->shell_list[1] = *file;
      error = RawSyscall(SYS_execve, reinterpret_cast<long>(launch->shell_list[0]),
                         reinterpret_cast<long>(launch->shell_list),
                         reinterpret_cast<long>(launch->env_list));
    }
    if (error == -EACCES) denied = true;
    if (error != -EACCES && error != -ENOENT && error != -ENOTDIR && error != -ESTALE &&
        error != -ENODEV && error != -ETIMEDOUT)
      break;
  }
  int reported =
      denied && (error == -ENOENT || error == -ENOTDIR) ? EACCES : static_cast<int>(-error);
  RawSyscall(SYS_write, launch->exec_error_fd, reinterpret_cast<long>(&reported), sizeof reported);
  RawSyscall(SYS_exit_group, 127);
  return 127;
}

// The files execvp(argv[0]) tries, in order, under the job's PATH.
std::vector<std::string> ExecCandidates(const std::string& file, const char* path) {
  if (file.find('/') != std::string::npos) return {file};
  if (file.empty()) return {};
  std::string dirs = path != nullptr ? path : "/bin:/usr/bin";
  std::vector<std::string> candidates;
  size_t start = 0;
  for (;;) {
    size_t end = dirs.find(':', start);
    std::string dir = dirs.substr(start, end == std::string::npos ? end : end - start);
    if (!dir.empty()) dir += '/';
    candidates.push_back(dir.append(file));
    if (end == std::string::npos) return candidates;
    start = end + 1;
  }
}

// FindCommand, looking `file` up in `path` (a PATH value; null: unset).
Status FindCommandIn(const std::string& file, const char* path) {
  bool found = false;
  for (const std::string& candidate : ExecCandidates(file, path)) {
    struct stat info {};
    if (stat(candidate.c_str(), &info) != 0) continue;
    found = true;
    if (S_ISREG(info.st_mode) && access(candidate.c_str(), X_OK) == 0) return Ok{};
  }
  const bool path_search = file.find('/') == std::string::npos;
  if (found) {
    return MakeError(kCommandNotExecutable, fmt::format("{}: not an executable file{}", file,
                                                        path_search ? " anywhere in PATH" : ""));
  }
  return MakeError(kCommandNotFound,
                   fmt::format("{}: command not found{}", file, path_search ? " in PATH" : ""));
}

}  // namespace

Status FindCommand(const std::string& file) { return FindCommandIn(file, std::getenv("PATH")); }

Result<PendingChild> CreatePendingChild() {
  auto launch = std::make_unique<ChildLaunch>();
  int go[2];
  int exec_error[2];
  if (pipe2(go, O_CLOEXEC) != 0)
    return MakeError(ExitCode::kError, fmt::format("cannot create a pipe: {}", strerror(errno)));
  if (pipe2(exec_error, O_CLOEXEC) != 0) {
    close(go[0]);
    close(go[1]);
    return MakeError(ExitCode::kError, fmt::format("cannot create a pipe: {}", strerror(errno)));
  }
  launch->go_fd = go[0];
  launch->parent_go_fd = go[1];
  launch->exec_error_fd = exec_error[1];
  launch->parent_exec_error_fd = exec_error[0];
  void* stack = mmap(nullptr, launch->stack_size, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (stack == MAP_FAILED) stack = nullptr;
  launch->stack = stack;
  // Blocked until the child has set its own handlers: none of ours may run on its stack.
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &launch->parent_mask);
  pid_t pid = -1;
  int clone_errno = ENOMEM;
  if (stack != nullptr) {
    pid = clone(AwaitGoThenExec, static_cast<char*>(stack) + launch->stack_size, CLONE_VM | SIGCHLD,
                launch.get());
    clone_errno = errno;
  }
  pthread_sigmask(SIG_SETMASK, &launch->parent_mask, nullptr);
  close(go[0]);
  close(exec_error[1]);
  if (pid < 0) {
    close(go[1]);
    close(exec_error[0]);
    return MakeError(ExitCode::kError,
                     fmt::format("cannot start a process: {}", strerror(clone_errno)));
  }
  std::optional<ProcessStat> stat = ProcFs().Stat(pid);
  ProcessIdentity identity{pid, stat ? stat->start_time_ticks : 0};
  return PendingChild(identity, go[1], exec_error[0], std::move(launch));
}

PendingChild::PendingChild(ProcessIdentity identity, int go_fd, int exec_error_fd,
                           std::unique_ptr<ChildLaunch> launch)
    : identity_(identity),
      go_fd_(go_fd),
      exec_error_fd_(exec_error_fd),
      launch_(std::move(launch)) {}

PendingChild::PendingChild(PendingChild&& other) noexcept
    : identity_(other.identity_),
      go_fd_(other.go_fd_),
      exec_error_fd_(other.exec_error_fd_),
      forwarding_(other.forwarding_),
      launch_(std::move(other.launch_)) {
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

  ChildLaunch& launch = *launch_;
  // The job's environment: ours with the changes made. Like execvp, the
  // command is looked up in the PATH it will see.
  const std::map<std::string, std::string> job_env = WithChanges(ProcessEnvironment(), env);
  auto path = job_env.find("PATH");
  const std::optional<std::string> job_path =
      path != job_env.end() ? std::optional<std::string>(path->second) : std::nullopt;
  launch.candidates =
      CStringArray(ExecCandidates(argv.front(), job_path ? job_path->c_str() : nullptr));
  launch.argv = CStringArray(argv);
  std::vector<std::string> shell_argv = {"/bin/sh", "FILE"};  // FILE: the child's candidate
  shell_argv.insert(shell_argv.end(), argv.begin() + 1, argv.end());
  launch.shell_argv = CStringArray(std::move(shell_argv));
  launch.envp = EnvironmentBlock(job_env);
  launch.candidate_list = launch.candidates.data();
  launch.argv_list = launch.argv.data();
  launch.shell_list = launch.shell_argv.data();
  launch.env_list = launch.envp.data();

  // A child killed while we waited has closed its end: the write then
  // fails with EPIPE, and the SIGPIPE it raises is taken back unseen.
  const char go = 'g';
  sigset_t pipe_signal;
  sigset_t previous;
  sigemptyset(&pipe_signal);
  sigaddset(&pipe_signal, SIGPIPE);
  sigprocmask(SIG_BLOCK, &pipe_signal, &previous);
  ssize_t sent;
  do {
    sent = write(go_fd_, &go, 1);
  } while (sent < 0 && errno == EINTR);
  const int write_error = errno;
  if (sent < 0 && write_error == EPIPE) {
    const timespec now = {0, 0};
    sigtimedwait(&pipe_signal, nullptr, &now);
  }
  sigprocmask(SIG_SETMASK, &previous, nullptr);
  close(go_fd_);
  go_fd_ = -1;
  if (sent != 1) return Vanished();
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
    launch_.reset();
    // An executable file that the kernel says does not exist: what is
    // missing is what it runs the file with.
    const bool runner_missing =
        error == ENOENT && FindCommandIn(argv.front(), job_path ? job_path->c_str() : nullptr).ok();
    return MakeError(ExitCode::kError,
                     fmt::format("cannot run the command: {}",
                                 runner_missing ? "the interpreter its #! line names, or the "
                                                  "dynamic loader it needs, does not exist"
                                                : strerror(error)));
  }
  launch_.reset();  // the command runs in memory of its own now, or the child is gone
  return Ok{};
}

std::optional<int> PendingChild::Collect() {
  int status = 0;
  pid_t waited;
  do {
    waited = waitpid(identity_.pid, &status, 0);
  } while (waited < 0 && errno == EINTR);
  identity_.pid = 0;
  if (waited < 0) return std::nullopt;
  return status;
}

Error PendingChild::Vanished() {
  std::optional<int> status = Collect();
  launch_.reset();
  if (status && WIFSIGNALED(*status)) {
    // Reported as the command's own death: `run` exits 128+signal.
    Error killed = MakeError(ExitCode::kError,
                             fmt::format("the command's process was killed by SIG{} while gpupin "
                                         "waited for GPUs; nothing ran",
                                         sigabbrev_np(WTERMSIG(*status))));
    killed.signal = WTERMSIG(*status);
    return killed;
  }
  return MakeError(ExitCode::kError,
                   "the command's process ended while gpupin waited for GPUs; nothing ran");
}

std::optional<Error> PendingChild::EndedBeforeStart() {
  if (!Ended()) return std::nullopt;
  return Vanished();
}

bool PendingChild::Ended() const {
  siginfo_t info = {};
  if (waitid(P_PID, static_cast<id_t>(identity_.pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0)
    return true;
  return info.si_pid != 0;
}

int PendingChild::Wait() {
  std::optional<int> status = Collect();
  if (!status) return 1;
  if (WIFSIGNALED(*status)) {
    killed_by_ = WTERMSIG(*status);
    return 128 + killed_by_;
  }
  return WEXITSTATUS(*status);
}

}  // namespace gpupin
