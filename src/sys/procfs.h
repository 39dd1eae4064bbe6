// The facts gpupin reads about processes, from /proc (root path injectable
// for tests). Every file under /proc/PID can vanish or belong to another
// user at any moment: every call returns nullopt / an Error, never throws.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "sys/procfs_parse.h"  // ProcessStat

namespace gpupin {

class ProcFs {
 public:
  explicit ProcFs(std::string root = "/proc");

  std::optional<ProcessStat> Stat(int pid) const;
  std::optional<uint32_t> Uid(int pid) const;         // real uid from status
  std::optional<std::string> Cmdline(int pid) const;  // args joined by spaces
  // Environment of a process; an Error that says why when unreadable
  // (another user's process without root: EACCES).
  Result<std::map<std::string, std::string>> Environ(int pid) const;
  std::optional<std::string> ContainerId(int pid) const;  // from /proc/PID/cgroup
  // The parent pid; nullopt when the process is gone or unreadable.
  std::optional<int> ParentOf(int pid) const;
  // Whether `pid` is `ancestor` or descends from it.
  bool DescendsFrom(int pid, int ancestor) const;
  std::vector<int> AllPids() const;
  // Minor numbers of the NVIDIA GPU device files (/dev/nvidiaN: character
  // major 195, minor < 255) the process holds open, found by stat() on its
  // fds rather than by path, since paths differ inside containers. Only
  // our own processes' fds are readable unless root.
  std::vector<uint32_t> OpenNvidiaDeviceMinors(int pid) const;
  // Clock ticks since boot, now (for ages and elapsed times).
  std::optional<uint64_t> UptimeTicks() const;

  const std::string& root() const { return root_; }

 private:
  std::string root_;
};

// The start time of a process that has not exited, for lease liveness: a
// zombie (state Z or X) has exited and only waits for its parent to collect
// its status, so it holds nothing. nullopt when there is no such process.
std::optional<uint64_t> LiveProcessStartTime(const ProcFs& procfs, int pid);

// Whether process `pid` is stopped: by a signal (Ctrl-Z, SIGSTOP; state T)
// or by a debugger (t). It runs no code of its own until continued.
bool ProcessStopped(const ProcFs& procfs, int pid);

// The shell a `$(gpupin pick)` or `eval "$(gpupin env)"` belongs to, from
// gpupin's parent `pid`: a command substitution or `( ... )` runs in a forked
// copy of the shell (same command line as its parent) that exits as soon as
// gpupin's output is read, so a reservation held by it would end at once.
// Walks up past such copies; `pid` itself when its parent differs.
int SkipForkedSubshells(const ProcFs& procfs, int pid);

// Name of a uid from the password database, or the number as text.
std::string UserName(uint32_t uid);

}  // namespace gpupin
