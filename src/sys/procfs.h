// The facts gpupin reads about processes, from /proc (root path injectable
// for tests). Every file under /proc/PID can vanish or belong to another
// user at any moment: every call returns nullopt / an Error, never throws.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "sys/procfs_parse.h"  // ProcessStat

namespace gpupin {

class ProcFs {
 public:
  explicit ProcFs(std::string root = "/proc");

  // A ProcFs over the same root whose Stat reads each process once, for one
  // decision: a ticket's holder is asked whether it lives, runs gpupin and
  // is stopped, each a read of /proc/PID/stat, for every ticket in the
  // queue at every turn (most of a burst's reads), and one view that cannot
  // change halfway through is what a decision wants. Copies share what was
  // read.
  ProcFs RememberingStats() const;

  std::optional<ProcessStat> Stat(int pid) const;
  std::optional<uint32_t> Uid(int pid) const;         // real uid from status
  std::optional<std::string> Cmdline(int pid) const;  // args joined by spaces
  std::optional<std::vector<std::string>> Argv(int pid) const;
  // Environment of a process; an Error that says why when unreadable
  // (another user's process without root: EACCES).
  Result<std::map<std::string, std::string>> Environ(int pid) const;
  std::optional<std::string> ContainerId(int pid) const;  // from /proc/PID/cgroup
  // The parent pid; nullopt when the process is gone or unreadable.
  std::optional<int> ParentOf(int pid) const;
  // Whether `pid` is `ancestor` or descends from it.
  bool DescendsFrom(int pid, int ancestor) const;
  std::vector<int> AllPids() const;
  // Whether process `pid` exists though its /proc entry cannot be read:
  // /proc mounted with hidepid hides other users' processes, which kill()
  // still finds. Never init (pid 1), and always false under a root other
  // than /proc (a test's made-up processes).
  bool Hidden(int pid) const;
  // Minor numbers of the NVIDIA GPU device files (/dev/nvidiaN: character
  // major 195, minor < 255) the process holds open, found by stat() on its
  // fds rather than by path, since paths differ inside containers. Only
  // our own processes' fds are readable unless root.
  std::vector<uint32_t> OpenNvidiaDeviceMinors(int pid) const;
  // Whether the process holds the file (device, inode) open, found as
  // OpenNvidiaDeviceMinors finds devices; nullopt when its descriptors
  // cannot be read (another user's, unless root).
  std::optional<bool> HoldsOpen(int pid, uint64_t device, uint64_t inode) const;
  // The process holding a flock on the file (device, inode), from
  // /proc/locks; nullopt when none or outside our PID namespace.
  std::optional<int> FlockHolder(uint64_t device, uint64_t inode) const;
  // Clock ticks since boot, now (for ages and elapsed times).
  std::optional<uint64_t> UptimeTicks() const;
  // The kernel's boot id (sys/kernel/random/boot_id), a random UUID drawn
  // at each boot; nullopt when it cannot be read.
  std::optional<std::string> BootId() const;

  const std::string& root() const { return root_; }

 private:
  // Calls `visit` with what each open descriptor of the process refers to
  // until it returns false; whether its descriptors could all be listed (or
  // `visit` stopped the listing).
  bool EachOpenFile(int pid, const std::function<bool(const struct stat&)>& visit) const;

  std::string root_;
  // Set by RememberingStats: what Stat read, by pid (nullopt: no such process).
  std::shared_ptr<std::map<int, std::optional<ProcessStat>>> remembered_stats_;
};

// The start time of a process that has not exited, for lease liveness: a
// zombie (state Z or X) has exited and only waits for its parent to collect
// its status, so it holds nothing. nullopt when there is no such process.
std::optional<uint64_t> LiveProcessStartTime(const ProcFs& procfs, int pid);

// Whether process `pid` is stopped: by a signal (Ctrl-Z, SIGSTOP; state T)
// or by a debugger (t). It runs no code of its own until continued.
bool ProcessStopped(const ProcFs& procfs, int pid);

// The process that a reservation made by process `self` (a `gpupin pick`
// or `gpupin env`, whose parent is `parent`) belongs to: the shell or
// program that will start the job. Walks up from `parent` past processes
// that end as soon as gpupin's output is read, since a reservation held by
// one of them would end at once:
// - forked copies of a shell (same command line as their parent, and no
//   exec since: the same stack), which run a command substitution `$(...)`
//   or a `( ... )`;
// - wrappers that only run their child's command (core/wrapper_command):
//   `timeout 30 gpupin pick`, `sudo gpupin pick`, `sh -c 'gpupin pick'`.
// It never leaves `self`'s session. `parent` itself when it is none of these.
int ReservationHolder(const ProcFs& procfs, int self, int parent);

// "pid 4711 (nobody: flock lock sleep 40)": a process as a message names
// it, its command as a lease records it (escaped by whoever prints it).
std::string DescribeProcess(const ProcFs& procfs, int pid);

// Name of a uid from the password database, or the number as text.
std::string UserName(uint32_t uid);

}  // namespace gpupin
