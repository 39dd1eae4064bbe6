#include "sys/procfs.h"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <memory>
#include <set>
#include <string_view>

#include "core/lease.h"
#include "core/process_tree.h"
#include "core/wrapper_command.h"

namespace gpupin {
namespace {

// /proc files report size 0, so they are read until EOF. The cap keeps a
// hostile environment (or a fake tree in a test) from exhausting memory.
constexpr size_t kMaxProcFileBytes = 4 << 20;

struct FileText {
  std::string text;
  int error = 0;  // errno of the failed open or read, 0 on success
};

FileText ReadProcFile(const std::string& path) {
  FileText result;
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    result.error = errno;
    return result;
  }
  char buffer[8192];
  while (result.text.size() < kMaxProcFileBytes) {
    ssize_t n = read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) result.error = errno;
    if (n <= 0) break;
    result.text.append(buffer, static_cast<size_t>(n));
  }
  close(fd);
  return result;
}

}  // namespace

ProcFs::ProcFs(std::string root) : root_(std::move(root)) {}

ProcFs ProcFs::RememberingStats() const {
  ProcFs remembering(root_);
  remembering.remembered_stats_ = std::make_shared<std::map<int, std::optional<ProcessStat>>>();
  return remembering;
}

std::optional<ProcessStat> ProcFs::Stat(int pid) const {
  if (remembered_stats_) {
    if (auto it = remembered_stats_->find(pid); it != remembered_stats_->end()) return it->second;
  }
  FileText file = ReadProcFile(fmt::format("{}/{}/stat", root_, pid));
  std::optional<ProcessStat> stat;
  if (file.error == 0) stat = ParseStat(pid, file.text);
  if (remembered_stats_) remembered_stats_->emplace(pid, stat);
  return stat;
}

bool ProcFs::Hidden(int pid) const {
  // Init is no user's job: a record naming it holds nothing, seen or not.
  if (root_ != "/proc" || pid <= 1 || Stat(pid)) return false;
  return kill(pid, 0) == 0 || errno == EPERM;
}

std::optional<uint32_t> ProcFs::Uid(int pid) const {
  FileText file = ReadProcFile(fmt::format("{}/{}/status", root_, pid));
  if (file.error != 0) return std::nullopt;
  return ParseStatusUid(file.text);
}

std::optional<std::string> ProcFs::Cmdline(int pid) const {
  FileText file = ReadProcFile(fmt::format("{}/{}/cmdline", root_, pid));
  if (file.error != 0) return std::nullopt;
  return ParseCmdline(file.text);
}

std::optional<std::vector<std::string>> ProcFs::Argv(int pid) const {
  FileText file = ReadProcFile(fmt::format("{}/{}/cmdline", root_, pid));
  if (file.error != 0) return std::nullopt;
  return ParseArgv(file.text);
}

Result<std::map<std::string, std::string>> ProcFs::Environ(int pid) const {
  FileText file = ReadProcFile(fmt::format("{}/{}/environ", root_, pid));
  if (file.error == EACCES || file.error == EPERM) {
    // The kernel asks for ptrace access: another user's process, a setuid
    // one of ours, or, for root, a container without CAP_SYS_PTRACE.
    const char* why = geteuid() == 0 ? "permission denied even to root (a container without "
                                       "CAP_SYS_PTRACE, or a security module)"
                      : Uid(pid) == geteuid()
                          ? "permission denied (a setuid or otherwise protected process)"
                          : "it belongs to another user; run as that user or as root";
    return MakeError(ExitCode::kError,
                     fmt::format("cannot read the environment of process {}: {}", pid, why));
  }
  if (file.error == ESRCH) {
    return MakeError(ExitCode::kError, fmt::format("process {} has no environment (a kernel "
                                                   "thread, or it is exiting); it uses no GPU",
                                                   pid));
  }
  if (file.error == ENOENT) return MakeError(ExitCode::kError, fmt::format("no process {}", pid));
  if (file.error != 0) {
    return MakeError(ExitCode::kError, fmt::format("cannot read the environment of process {}: {}",
                                                   pid, std::strerror(file.error)));
  }
  return ParseEnviron(file.text);
}

std::optional<std::string> ProcFs::ContainerId(int pid) const {
  FileText file = ReadProcFile(fmt::format("{}/{}/cgroup", root_, pid));
  if (file.error != 0) return std::nullopt;
  return ParseCgroupContainerId(file.text);
}

std::optional<int> ProcFs::ParentOf(int pid) const {
  std::optional<ProcessStat> stat = Stat(pid);
  if (!stat) return std::nullopt;
  return stat->ppid;
}

bool ProcFs::DescendsFrom(int pid, int ancestor) const {
  return NearestAncestor(
             pid, [this](int p) { return ParentOf(p); },
             [ancestor](int p) { return p == ancestor; })
      .has_value();
}

int ReservationHolder(const ProcFs& procfs, int self, int parent) {
  std::optional<ProcessStat> self_stat = procfs.Stat(self);
  std::optional<std::vector<std::string>> child = procfs.Argv(self);
  int pid = parent;
  // Each step's parent is the next step's process: read once, carried up.
  std::optional<ProcessStat> stat = procfs.Stat(pid);
  std::optional<std::vector<std::string>> own = procfs.Argv(pid);
  // Bounded: a fake or racing tree could contain a cycle.
  for (int steps = 0; steps < 64; ++steps) {
    if (!stat || !own || stat->ppid <= 1 || stat->ppid == pid) return pid;
    std::optional<ProcessStat> above = procfs.Stat(stat->ppid);
    // Never out of the caller's session: beyond it lie sshd, a terminal, or
    // a subreaper (systemd --user) that adopted a wrapper whose shell is gone.
    if (!above || (self_stat && above->session != self_stat->session)) return pid;
    std::optional<std::vector<std::string>> above_argv = procfs.Argv(stat->ppid);
    // A copy made by fork has never exec'd: same arguments and the same
    // stack. A shell started inside an identical shell (`bash` typed in a
    // terminal's `bash`) has exec'd and is a shell of its own.
    bool same_stack = stat->start_stack == 0 || above->start_stack == 0 ||
                      stat->start_stack == above->start_stack;
    bool forked_copy = same_stack && own == above_argv;
    bool wrapper = child && OnlyRunsCommand(*own, *child);
    if (!forked_copy && !wrapper) return pid;
    // A forked copy runs what its child runs: `sudo`'s monitor process, the
    // copy a wrapper forks before it runs gpupin, still wraps gpupin.
    if (!forked_copy) child = std::move(own);
    pid = stat->ppid;
    stat = above;
    own = std::move(above_argv);
  }
  return pid;
}

std::vector<int> ProcFs::AllPids() const {
  std::vector<int> pids;
  std::unique_ptr<DIR, int (*)(DIR*)> dir(opendir(root_.c_str()), closedir);
  if (!dir) return pids;
  while (dirent* entry = readdir(dir.get())) {
    std::optional<int> pid = ParsePid(entry->d_name);
    if (pid) pids.push_back(*pid);
  }
  return pids;
}

bool ProcFs::EachOpenFile(int pid, const std::function<bool(const struct stat&)>& visit) const {
  std::error_code ec;
  std::filesystem::directory_iterator fds(root_ + "/" + std::to_string(pid) + "/fd", ec);
  for (; !ec && fds != std::filesystem::directory_iterator(); fds.increment(ec)) {
    struct stat info;
    if (stat(fds->path().c_str(), &info) == 0 && !visit(info)) return true;
  }
  return !ec;
}

std::vector<uint32_t> ProcFs::OpenNvidiaDeviceMinors(int pid) const {
  constexpr unsigned kNvidiaMajor = 195;
  constexpr unsigned kNvidiaControlMinor = 255;
  std::set<uint32_t> minors;
  EachOpenFile(pid, [&](const struct stat& info) {
    if (S_ISCHR(info.st_mode) && major(info.st_rdev) == kNvidiaMajor &&
        minor(info.st_rdev) < kNvidiaControlMinor)
      minors.insert(minor(info.st_rdev));
    return true;
  });
  return {minors.begin(), minors.end()};
}

std::optional<bool> ProcFs::HoldsOpen(int pid, uint64_t device, uint64_t inode) const {
  bool found = false;
  const bool listed = EachOpenFile(pid, [&](const struct stat& info) {
    found = info.st_dev == device && info.st_ino == inode;
    return !found;
  });
  // A listing cut short (the process exited meanwhile) proves nothing.
  if (!found && !listed) return std::nullopt;
  return found;
}

std::optional<uint64_t> ProcFs::UptimeTicks() const {
  FileText file = ReadProcFile(root_ + "/uptime");
  if (file.error != 0) return std::nullopt;
  long hz = sysconf(_SC_CLK_TCK);
  if (hz <= 0) return std::nullopt;
  return ParseUptimeTicks(file.text, static_cast<uint64_t>(hz));
}

std::optional<std::string> ProcFs::BootId() const {
  FileText file = ReadProcFile(root_ + "/sys/kernel/random/boot_id");
  if (file.error != 0) return std::nullopt;
  std::string id = file.text.substr(0, file.text.find('\n'));
  if (id.empty()) return std::nullopt;
  return id;
}

std::optional<uint64_t> LiveProcessStartTime(const ProcFs& procfs, int pid) {
  std::optional<ProcessStat> stat = procfs.Stat(pid);
  if (!stat || stat->state == 'Z' || stat->state == 'X') return std::nullopt;
  return stat->start_time_ticks;
}

bool ProcessStopped(const ProcFs& procfs, int pid) {
  std::optional<ProcessStat> stat = procfs.Stat(pid);
  return stat && (stat->state == 'T' || stat->state == 't');
}

std::optional<int> ProcFs::FlockHolder(uint64_t device, uint64_t inode) const {
  FileText file = ReadProcFile(root_ + "/locks");
  if (file.error != 0) return std::nullopt;
  return ParseFlockHolder(file.text, major(device), minor(device), inode);
}

std::string DescribeProcess(const ProcFs& procfs, int pid) {
  std::optional<uint32_t> uid = procfs.Uid(pid);
  std::optional<std::vector<std::string>> argv = procfs.Argv(pid);
  std::string command = argv ? LeaseCommand(*argv) : "?";
  return fmt::format("pid {} ({}: {})", pid, uid ? UserName(*uid) : "?", command);
}

std::string UserName(uint32_t uid) {
  // Asked for every GPU process at every choice, and each lookup reads the
  // password database anew; a name that changes while gpupin runs is rare
  // and harmless. gpupin is single-threaded.
  static std::map<uint32_t, std::string> known;
  if (auto it = known.find(uid); it != known.end()) return it->second;
  std::string& name = known[uid];
  long suggested = sysconf(_SC_GETPW_R_SIZE_MAX);
  std::vector<char> buffer(suggested > 0 ? static_cast<size_t>(suggested) : 16384);
  passwd entry{};
  passwd* found = nullptr;
  int rc = 0;
  while ((rc = getpwuid_r(uid, &entry, buffer.data(), buffer.size(), &found)) == ERANGE &&
         buffer.size() < (1u << 20)) {
    buffer.resize(buffer.size() * 2);
  }
  if (rc != 0 || found == nullptr || found->pw_name == nullptr) {
    name = std::to_string(uid);
  } else {
    name = found->pw_name;
  }
  return name;
}

}  // namespace gpupin
