// The formats of the /proc files gpupin reads, as pure functions of their
// text, so that they are unit-tested and fuzzed without a /proc tree
// (fuzz/procfs_fuzz.cc). The text is hostile: another user's process can
// name itself anything, and a container runtime can write any cgroup path.
// None of these functions throws; malformed text gives nullopt.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpupin {

struct ProcessStat {
  int pid = 0;
  int ppid = 0;
  char state = '?';  // R, S, D, Z, T, ...
  uint64_t start_time_ticks = 0;
  int session = 0;  // field 6: the session id
  // Field 28, the address of the bottom of the stack: set at exec (and
  // randomised), kept by fork, so a forked copy has its parent's. 0 when
  // the kernel hides it (another user's process) or the line is short.
  uint64_t start_stack = 0;
  // Field 2 without its parentheses: the executable's file name, at most
  // 15 bytes, as the kernel keeps it (argv[0] does not change it).
  std::string comm;
};

// A directory name of /proc as a PID ("42"), nullopt for any other name.
std::optional<int> ParsePid(std::string_view name);

// /proc/PID/stat of process `pid`: its state, parent and start time.
std::optional<ProcessStat> ParseStat(int pid, std::string_view text);

// The real uid (first number of the "Uid:" line) of /proc/PID/status.
std::optional<uint32_t> ParseStatusUid(std::string_view text);

// The pid that holds a flock on the file (device major:minor, inode), from
// the text of /proc/locks ("1: FLOCK  ADVISORY  WRITE 4711 00:2a:1234 0
// EOF"); waiters ("1: -> FLOCK ...") hold nothing. nullopt when no line
// matches, or the holder is in another PID namespace (pid shown as -1 or 0).
std::optional<int> ParseFlockHolder(std::string_view text, uint32_t major, uint32_t minor,
                                    uint64_t inode);

// /proc/PID/cmdline: the NUL-separated arguments (trailing empty ones are
// dropped: the kernel's padding cannot be told from them).
std::vector<std::string> ParseArgv(std::string_view text);

// /proc/PID/cmdline: the arguments joined by spaces, for display.
std::string ParseCmdline(std::string_view text);

// /proc/PID/environ: NUL-separated NAME=value entries. Entries without a
// name are skipped; the first of two equal names wins.
std::map<std::string, std::string> ParseEnviron(std::string_view text);

// The innermost container id (64 lowercase hex digits) named in the paths
// of /proc/PID/cgroup, or nullopt when the process is in no container.
std::optional<std::string> ParseCgroupContainerId(std::string_view text);

// /proc/uptime ("12345.67 ...") in clock ticks of `ticks_per_second`.
std::optional<uint64_t> ParseUptimeTicks(std::string_view text, uint64_t ticks_per_second);

}  // namespace gpupin
