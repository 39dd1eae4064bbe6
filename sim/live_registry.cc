#include "sim/live_registry.h"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace gpupin::sim {
namespace {

constexpr size_t kMaxEntryBytes = size_t{64} * 1024;

// FNV-1a: stable across builds and compilers, unlike std::hash, so every
// program agrees on the directory of one scenario.
uint64_t Fnv1a(const std::string& text) {
  uint64_t h = 14695981039346656037ULL;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

std::string EntryName(const LiveProcess& p) {
  return fmt::format("{}-{}.json", p.pid, p.start_time_ticks);
}

Status EnsureDir(const std::string& dir) {
  if (mkdir(dir.c_str(), 0777) == 0) {
    // Like /tmp: every user may add entries, only the owner may remove them.
    if (chmod(dir.c_str(), 01777) != 0)
      return MakeError(ExitCode::kError,
                       fmt::format("cannot chmod {}: {}", dir, std::strerror(errno)));
    return Ok{};
  }
  if (errno != EEXIST)
    return MakeError(ExitCode::kError,
                     fmt::format("cannot create {}: {}", dir, std::strerror(errno)));
  struct stat st {};
  if (lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    return MakeError(ExitCode::kError,
                     fmt::format("{} exists but is not a directory (or is a symlink)", dir));
  return Ok{};
}

std::optional<std::string> ReadSmallFile(int dir_fd, const char* name) {
  int fd = openat(dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  struct stat st {};
  std::optional<std::string> text;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
      static_cast<size_t>(st.st_size) <= kMaxEntryBytes) {
    std::string buffer(static_cast<size_t>(st.st_size), '\0');
    ssize_t n = read(fd, buffer.data(), buffer.size());
    if (n == st.st_size) text = std::move(buffer);
  }
  close(fd);
  return text;
}

std::optional<LiveProcess> ParseEntry(const std::string& text) {
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  try {
    LiveProcess p;
    p.pid = j.at("pid").get<int>();
    p.start_time_ticks = j.at("start_time").get<uint64_t>();
    p.uuids = j.at("uuids").get<std::vector<std::string>>();
    p.used_memory_bytes = j.at("used_memory").get<uint64_t>();
    p.graphics = j.value("type", std::string("compute")) == "graphics";
    p.name = j.value("name", std::string());
    if (p.pid <= 0) return std::nullopt;
    return p;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

}  // namespace

std::string LiveDir(const std::string& scenario_path) {
  if (const char* dir = std::getenv("GPUPIN_SIM_LIVE_DIR"); dir && *dir) return dir;
  char resolved[PATH_MAX];
  std::string real = realpath(scenario_path.c_str(), resolved) ? resolved : scenario_path;
  return fmt::format("/tmp/gpupin-sim-live-{:016x}", Fnv1a(real));
}

std::optional<uint64_t> ProcessStartTime(int pid) {
  std::ifstream in(fmt::format("/proc/{}/stat", pid));
  std::string line;
  if (!std::getline(in, line)) return std::nullopt;
  // The command name may contain spaces and parentheses: fields start after the last ')'.
  size_t paren = line.rfind(')');
  if (paren == std::string::npos) return std::nullopt;
  std::istringstream fields(line.substr(paren + 1));
  std::string field;
  uint64_t start = 0;
  for (int n = 3; n <= 22 && fields >> field; ++n) {
    if (n == 3 && (field == "Z" || field == "X" || field == "x")) return std::nullopt;
    if (n == 22) {
      char* end = nullptr;
      start = std::strtoull(field.c_str(), &end, 10);
      if (*end != '\0') return std::nullopt;
      return start;
    }
  }
  return std::nullopt;
}

Status RegisterLive(const std::string& dir, const LiveProcess& p) {
  if (auto ok = EnsureDir(dir); !ok) return ok;
  nlohmann::json j = {{"version", 1},
                      {"pid", p.pid},
                      {"start_time", p.start_time_ticks},
                      {"uuids", p.uuids},
                      {"used_memory", p.used_memory_bytes},
                      {"type", p.graphics ? "graphics" : "compute"},
                      {"name", p.name}};
  std::string text = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  std::string final_path = dir + "/" + EntryName(p);
  std::string temp_path = fmt::format("{}/.tmp-{}-{}", dir, p.pid, p.start_time_ticks);
  int fd = open(temp_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0)
    return MakeError(ExitCode::kError,
                     fmt::format("cannot write {}: {}", temp_path, std::strerror(errno)));
  bool written = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  close(fd);
  if (!written || rename(temp_path.c_str(), final_path.c_str()) != 0) {
    int err = errno;
    unlink(temp_path.c_str());
    return MakeError(ExitCode::kError,
                     fmt::format("cannot write {}: {}", final_path, std::strerror(err)));
  }
  return Ok{};
}

void UnregisterLive(const std::string& dir, const LiveProcess& p) {
  unlink((dir + "/" + EntryName(p)).c_str());
}

bool IsEntryName(std::string_view name) {
  return !name.starts_with(".") && name.ends_with(".json");
}

void ForEachEntryName(const std::string& dir,
                      const std::function<void(int dir_fd, const char* name)>& visit) {
  int dir_fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dir_fd < 0) return;
  DIR* d = fdopendir(dir_fd);
  if (!d) {
    close(dir_fd);
    return;
  }
  while (dirent* e = readdir(d)) {
    if (IsEntryName(e->d_name)) visit(dir_fd, e->d_name);
  }
  closedir(d);
}

std::vector<LiveProcess> ListLive(const std::string& dir) {
  std::vector<LiveProcess> live;
  ForEachEntryName(dir, [&](int dir_fd, const char* name) {
    auto text = ReadSmallFile(dir_fd, name);
    auto entry = text ? ParseEntry(*text) : std::nullopt;
    if (!entry) return;
    // A file must be named for what it says, else it could shadow another entry.
    if (name != EntryName(*entry)) return;
    if (ProcessStartTime(entry->pid) != entry->start_time_ticks) {
      unlinkat(dir_fd, name, 0);
      return;
    }
    live.push_back(std::move(*entry));
  });
  return live;
}

}  // namespace gpupin::sim
