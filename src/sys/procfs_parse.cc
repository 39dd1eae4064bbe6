#include "sys/procfs_parse.h"

#include <fmt/ranges.h>

#include <charconv>
#include <vector>

#include "core/hex.h"

namespace gpupin {
namespace {

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

// The part of `rest` before `separator`; `rest` keeps what follows it.
std::string_view NextPiece(std::string_view& rest, char separator) {
  size_t end = rest.find(separator);
  std::string_view piece = rest.substr(0, end);
  rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
  return piece;
}

// One cgroup path component as container runtimes name it: "<id>",
// "docker-<id>.scope", "cri-containerd-<id>.scope", "crio-<id>.scope",
// "libpod-<id>.scope".
std::optional<std::string> ContainerIdOfComponent(std::string_view component) {
  if (component.ends_with(".scope")) component.remove_suffix(6);
  size_t dash = component.rfind('-');
  if (dash != std::string_view::npos) component.remove_prefix(dash + 1);
  if (!IsLowerHex(component, 64)) return std::nullopt;
  return std::string(component);
}

}  // namespace

std::optional<int> ParsePid(std::string_view name) {
  std::optional<int> pid = ParseNumber<int>(name);
  if (!pid || *pid <= 0) return std::nullopt;
  return pid;
}

// The command name (field 2) is in parentheses and may itself hold spaces
// and ')': everything after the last ')' is the fixed-format remainder.
std::optional<ProcessStat> ParseStat(int pid, std::string_view text) {
  size_t close_paren = text.rfind(')');
  size_t open_paren = text.find('(');
  if (close_paren == std::string_view::npos || open_paren > close_paren) return std::nullopt;
  std::vector<std::string_view> fields = SplitFields(text.substr(close_paren + 1));
  // fields[0] is field 3 (state); start time is field 22.
  if (fields.size() < 20 || fields[0].size() != 1) return std::nullopt;
  std::optional<int> ppid = ParseNumber<int>(fields[1]);
  std::optional<uint64_t> start = ParseNumber<uint64_t>(fields[19]);
  std::optional<int> session = ParseNumber<int>(fields[3]);
  if (!ppid || !start || !session) return std::nullopt;
  constexpr size_t kStartStack = 25;  // field 28
  uint64_t start_stack = 0;
  if (fields.size() > kStartStack)
    start_stack = ParseNumber<uint64_t>(fields[kStartStack]).value_or(0);
  return ProcessStat{pid,
                     *ppid,
                     fields[0][0],
                     *start,
                     *session,
                     start_stack,
                     std::string(text.substr(open_paren + 1, close_paren - open_paren - 1))};
}

std::optional<int> ParseFlockHolder(std::string_view text, uint32_t major, uint32_t minor,
                                    uint64_t inode) {
  const std::string file = fmt::format("{:02x}:{:02x}:{}", major, minor, inode);
  while (!text.empty()) {
    std::vector<std::string_view> fields = SplitFields(NextPiece(text, '\n'));
    // "N:" "FLOCK" "ADVISORY" "WRITE" pid file start end
    if (fields.size() < 6 || fields[1] != "FLOCK" || fields[5] != file) continue;
    std::optional<int> pid = ParseNumber<int>(fields[4]);
    if (pid && *pid > 0) return pid;
  }
  return std::nullopt;
}

std::optional<uint32_t> ParseStatusUid(std::string_view text) {
  size_t at = text.starts_with("Uid:") ? 0 : text.find("\nUid:");
  if (at == std::string_view::npos) return std::nullopt;
  if (at != 0) ++at;
  std::string_view line = text.substr(at + 4);
  line = line.substr(0, line.find('\n'));
  std::vector<std::string_view> fields = SplitFields(line);
  if (fields.empty()) return std::nullopt;
  return ParseNumber<uint32_t>(fields[0]);
}

std::vector<std::string> ParseArgv(std::string_view text) {
  while (!text.empty() && text.back() == '\0') text.remove_suffix(1);
  std::vector<std::string> argv;
  while (!text.empty()) argv.emplace_back(NextPiece(text, '\0'));
  return argv;
}

std::string ParseCmdline(std::string_view text) {
  return fmt::format("{}", fmt::join(ParseArgv(text), " "));
}

std::map<std::string, std::string> ParseEnviron(std::string_view text) {
  std::map<std::string, std::string> environment;
  while (!text.empty()) {
    std::string_view entry = NextPiece(text, '\0');
    size_t equals = entry.find('=');
    // An entry without '=' is not a variable; CUDA would not see it either.
    if (equals == std::string_view::npos || equals == 0) continue;
    environment.emplace(entry.substr(0, equals), entry.substr(equals + 1));
  }
  return environment;
}

// The innermost (last) container id in any hierarchy wins: nested
// runtimes name the outer one first.
std::optional<std::string> ParseCgroupContainerId(std::string_view text) {
  std::optional<std::string> found;
  while (!text.empty()) {
    std::string_view line = NextPiece(text, '\n');
    // "hierarchy-id:controllers:path"; the path may contain ':'.
    size_t first = line.find(':');
    size_t second = first == std::string_view::npos ? first : line.find(':', first + 1);
    if (second == std::string_view::npos) continue;
    std::string_view path = line.substr(second + 1);
    while (!path.empty()) {
      if (auto id = ContainerIdOfComponent(NextPiece(path, '/'))) found = std::move(id);
    }
  }
  return found;
}

std::optional<uint64_t> ParseUptimeTicks(std::string_view text, uint64_t ticks_per_second) {
  std::vector<std::string_view> fields = SplitFields(text);
  if (fields.empty() || ticks_per_second == 0) return std::nullopt;
  // "12345.67": integer arithmetic, so the result agrees with start times.
  std::string_view uptime = fields[0];
  size_t dot = uptime.find('.');
  std::optional<uint64_t> seconds = ParseNumber<uint64_t>(uptime.substr(0, dot));
  std::string_view fraction = dot == std::string_view::npos ? "" : uptime.substr(dot + 1);
  std::optional<uint64_t> hundredths =
      fraction.empty() ? 0 : ParseNumber<uint64_t>(fraction.substr(0, 2));
  if (!seconds || !hundredths) return std::nullopt;
  if (fraction.size() == 1) *hundredths *= 10;
  uint64_t ticks = 0;
  if (__builtin_mul_overflow(*seconds, ticks_per_second, &ticks) ||
      __builtin_add_overflow(ticks, *hundredths * ticks_per_second / 100, &ticks)) {
    return std::nullopt;
  }
  return ticks;
}

}  // namespace gpupin
