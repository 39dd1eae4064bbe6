#include "sys/procfs.h"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <pwd.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <memory>
#include <string_view>

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

template <class T>
std::optional<T> ParseNumber(std::string_view text) {
  T value{};
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::vector<std::string_view> SplitFields(std::string_view text) {
  std::vector<std::string_view> fields;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n')) ++i;
    size_t start = i;
    while (i < text.size() && text[i] != ' ' && text[i] != '\t' && text[i] != '\n') ++i;
    if (i > start) fields.push_back(text.substr(start, i - start));
  }
  return fields;
}

bool IsHex64(std::string_view text) {
  if (text.size() != 64) return false;
  for (char c : text) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

// One cgroup path component as container runtimes name it: "<id>",
// "docker-<id>.scope", "cri-containerd-<id>.scope", "crio-<id>.scope",
// "libpod-<id>.scope".
std::optional<std::string> ContainerIdOfComponent(std::string_view component) {
  if (component.ends_with(".scope")) component.remove_suffix(6);
  size_t dash = component.rfind('-');
  if (dash != std::string_view::npos) component.remove_prefix(dash + 1);
  if (!IsHex64(component)) return std::nullopt;
  return std::string(component);
}

}  // namespace

ProcFs::ProcFs(std::string root) : root_(std::move(root)) {}

// The command name (field 2) is in parentheses and may itself hold spaces
// and ')': everything after the last ')' is the fixed-format remainder.
std::optional<ProcessStat> ProcFs::Stat(int pid) const {
  FileText file = ReadProcFile(fmt::format("{}/{}/stat", root_, pid));
  if (file.error != 0) return std::nullopt;
  size_t close_paren = file.text.rfind(')');
  if (close_paren == std::string::npos) return std::nullopt;
  std::vector<std::string_view> fields =
      SplitFields(std::string_view(file.text).substr(close_paren + 1));
  // fields[0] is field 3 (state); start time is field 22.
  if (fields.size() < 20 || fields[0].size() != 1) return std::nullopt;
  std::optional<int> ppid = ParseNumber<int>(fields[1]);
  std::optional<uint64_t> start = ParseNumber<uint64_t>(fields[19]);
  if (!ppid || !start) return std::nullopt;
  return ProcessStat{pid, *ppid, fields[0][0], *start};
}

std::optional<uint32_t> ProcFs::Uid(int pid) const {
  FileText file = ReadProcFile(fmt::format("{}/{}/status", root_, pid));
  if (file.error != 0) return std::nullopt;
  std::string_view text = file.text;
  size_t at = text.starts_with("Uid:") ? 0 : text.find("\nUid:");
  if (at == std::string_view::npos) return std::nullopt;
  if (at != 0) ++at;
  std::string_view line = text.substr(at + 4);
  line = line.substr(0, line.find('\n'));
  std::vector<std::string_view> fields = SplitFields(line);
  if (fields.empty()) return std::nullopt;
  return ParseNumber<uint32_t>(fields[0]);
}

std::optional<std::string> ProcFs::Cmdline(int pid) const {
  FileText file = ReadProcFile(fmt::format("{}/{}/cmdline", root_, pid));
  if (file.error != 0) return std::nullopt;
  std::string& text = file.text;
  while (!text.empty() && text.back() == '\0') text.pop_back();
  for (char& c : text) {
    if (c == '\0') c = ' ';
  }
  return text;
}

Result<std::map<std::string, std::string>> ProcFs::Environ(int pid) const {
  FileText file = ReadProcFile(fmt::format("{}/{}/environ", root_, pid));
  if (file.error == EACCES || file.error == EPERM) {
    return MakeError(ExitCode::kError,
                     fmt::format("cannot read the environment of process {}: it belongs to "
                                 "another user; run as that user or as root",
                                 pid));
  }
  if (file.error == ENOENT || file.error == ESRCH) {
    return MakeError(ExitCode::kError, fmt::format("no process {}", pid));
  }
  if (file.error != 0) {
    return MakeError(ExitCode::kError, fmt::format("cannot read the environment of process {}: {}",
                                                   pid, std::strerror(file.error)));
  }
  std::map<std::string, std::string> environment;
  std::string_view rest = file.text;
  while (!rest.empty()) {
    size_t end = rest.find('\0');
    std::string_view entry = rest.substr(0, end);
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
    size_t equals = entry.find('=');
    // An entry without '=' is not a variable; CUDA would not see it either.
    if (equals == std::string_view::npos || equals == 0) continue;
    environment.emplace(entry.substr(0, equals), entry.substr(equals + 1));
  }
  return environment;
}

// The innermost (last) container id in any hierarchy wins: nested
// runtimes name the outer one first.
std::optional<std::string> ProcFs::ContainerId(int pid) const {
  FileText file = ReadProcFile(fmt::format("{}/{}/cgroup", root_, pid));
  if (file.error != 0) return std::nullopt;
  std::optional<std::string> found;
  std::string_view rest = file.text;
  while (!rest.empty()) {
    size_t end = rest.find('\n');
    std::string_view line = rest.substr(0, end);
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
    // "hierarchy-id:controllers:path"; the path may contain ':'.
    size_t first = line.find(':');
    size_t second = first == std::string_view::npos ? first : line.find(':', first + 1);
    if (second == std::string_view::npos) continue;
    std::string_view path = line.substr(second + 1);
    while (!path.empty()) {
      size_t slash = path.find('/');
      if (auto id = ContainerIdOfComponent(path.substr(0, slash))) found = std::move(id);
      path = slash == std::string_view::npos ? std::string_view() : path.substr(slash + 1);
    }
  }
  return found;
}

bool ProcFs::DescendsFrom(int pid, int ancestor) const {
  // Bounded: a fake or racing tree could contain a cycle.
  for (int steps = 0; steps < 4096 && pid > 0; ++steps) {
    if (pid == ancestor) return true;
    std::optional<ProcessStat> stat = Stat(pid);
    if (!stat || stat->ppid == pid) return false;
    pid = stat->ppid;
  }
  return false;
}

int SkipForkedSubshells(const ProcFs& procfs, int pid) {
  // Bounded: a fake or racing tree could contain a cycle.
  for (int steps = 0; steps < 64; ++steps) {
    std::optional<ProcessStat> stat = procfs.Stat(pid);
    if (!stat || stat->ppid <= 1 || stat->ppid == pid) return pid;
    std::optional<std::string> own = procfs.Cmdline(pid);
    if (!own || own != procfs.Cmdline(stat->ppid)) return pid;
    pid = stat->ppid;
  }
  return pid;
}

std::vector<int> ProcFs::AllPids() const {
  std::vector<int> pids;
  std::unique_ptr<DIR, int (*)(DIR*)> dir(opendir(root_.c_str()), closedir);
  if (!dir) return pids;
  while (dirent* entry = readdir(dir.get())) {
    std::optional<int> pid = ParseNumber<int>(entry->d_name);
    if (pid && *pid > 0) pids.push_back(*pid);
  }
  return pids;
}

std::optional<uint64_t> ProcFs::UptimeTicks() const {
  FileText file = ReadProcFile(root_ + "/uptime");
  if (file.error != 0) return std::nullopt;
  std::vector<std::string_view> fields = SplitFields(file.text);
  if (fields.empty()) return std::nullopt;
  // "12345.67": integer arithmetic, so the result agrees with start times.
  std::string_view uptime = fields[0];
  size_t dot = uptime.find('.');
  std::optional<uint64_t> seconds = ParseNumber<uint64_t>(uptime.substr(0, dot));
  std::string_view fraction = dot == std::string_view::npos ? "" : uptime.substr(dot + 1);
  std::optional<uint64_t> hundredths =
      fraction.empty() ? 0 : ParseNumber<uint64_t>(fraction.substr(0, 2));
  if (!seconds || !hundredths) return std::nullopt;
  if (fraction.size() == 1) *hundredths *= 10;
  long hz = sysconf(_SC_CLK_TCK);
  if (hz <= 0) return std::nullopt;
  uint64_t ticks_per_second = static_cast<uint64_t>(hz);
  return *seconds * ticks_per_second + *hundredths * ticks_per_second / 100;
}

std::optional<uint64_t> LiveProcessStartTime(const ProcFs& procfs, int pid) {
  std::optional<ProcessStat> stat = procfs.Stat(pid);
  if (!stat || stat->state == 'Z' || stat->state == 'X') return std::nullopt;
  return stat->start_time_ticks;
}

std::string UserName(uint32_t uid) {
  long suggested = sysconf(_SC_GETPW_R_SIZE_MAX);
  std::vector<char> buffer(suggested > 0 ? static_cast<size_t>(suggested) : 16384);
  passwd entry{};
  passwd* found = nullptr;
  int rc = 0;
  while ((rc = getpwuid_r(uid, &entry, buffer.data(), buffer.size(), &found)) == ERANGE &&
         buffer.size() < (1u << 20)) {
    buffer.resize(buffer.size() * 2);
  }
  if (rc != 0 || found == nullptr || found->pw_name == nullptr) return std::to_string(uid);
  return found->pw_name;
}

}  // namespace gpupin
