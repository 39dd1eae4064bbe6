// The live registry as the simulated NVML reads it at each look: the same
// answer as ListLive(dir) gives at that moment, without reading and parsing
// every entry and every /proc/PID/stat each time. Each call scans only the
// directory itself (names, and each entry's inode, size, times and mode):
// when anything there differs from the last listing, everything is listed
// again. A pidfd per listed process says when one died, so a process killed
// with SIGKILL vanishes from the very next answer as with ListLive; where
// pidfd_open fails, that process is checked through /proc as ListLive does.
//
// Not inotify: closing an inotify instance that held a watch waits for an
// RCU grace period (~20 ms here), which every short gpupin run would pay.
//
// Not thread-safe: callers serialise. The pidfds are close-on-exec and
// closed by the destructor.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "sim/live_registry.h"

namespace gpupin::sim {

class LiveCache {
 public:
  explicit LiveCache(std::string dir);
  ~LiveCache();
  LiveCache(const LiveCache&) = delete;
  LiveCache& operator=(const LiveCache&) = delete;

  // Every registered process that is alive now, as ListLive(dir) would
  // answer (stale entries are removed on the way likewise). Valid until the
  // next call.
  const std::vector<LiveProcess>& List();
  // The answer of the last List(), without looking again (List() when
  // there was none yet).
  const std::vector<LiveProcess>& Last();

  // What a directory entry looked like when it was last listed.
  struct Stamp {
    std::string name;
    ino_t ino = 0;
    off_t size = 0;
    int64_t mtime_ns = 0;
    int64_t ctime_ns = 0;
    mode_t mode = 0;
    bool operator==(const Stamp&) const = default;
  };

 private:
  void Relist(std::vector<Stamp> stamps);
  void DropDead();
  void ClosePidfds();

  std::string dir_;
  bool listed_ = false;
  std::vector<Stamp> stamps_;  // the directory's candidate entries, by name
  std::vector<LiveProcess> live_;
  std::vector<int> pidfds_;  // one per entry of live_; -1: checked through /proc
};

}  // namespace gpupin::sim
