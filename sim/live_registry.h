// The live-process registry: workloads started on the simulated server
// record here which GPUs they use, and the simulated NVML lists them while
// they live. One file per process, named <pid>-<start time>.json, written
// atomically; a file whose process is gone (kill -9 included) or whose pid
// was reused is ignored and removed when possible. The directory is shared
// by every user of the machine, so each file is read as hostile input.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace gpupin::sim {

struct LiveProcess {
  int pid = 0;
  uint64_t start_time_ticks = 0;   // /proc/PID/stat field 22
  std::vector<std::string> uuids;  // GPU-... or MIG-... it uses
  uint64_t used_memory_bytes = 0;  // on each of those devices
  bool graphics = false;           // listed as a graphics process instead of compute
  std::string name;
};

// $GPUPIN_SIM_LIVE_DIR, or /tmp/gpupin-sim-live-<16 hex digits of a hash of
// the scenario file's real path>.
std::string LiveDir(const std::string& scenario_path);

// When `pid` started, in clock ticks since boot; nullopt when it does not
// exist or is a zombie (a dead process holds no GPU memory).
std::optional<uint64_t> ProcessStartTime(int pid);

// Writes the entry (temp file + rename), creating `dir` mode 1777 if needed.
Status RegisterLive(const std::string& dir, const LiveProcess& process);

// Removes the entry of `process` (its pid and start time).
void UnregisterLive(const std::string& dir, const LiveProcess& process);

// Whether a file of that name in the registry directory can be an entry;
// ListLive ignores the others (temporary files among them).
bool IsEntryName(std::string_view name);

// Calls `visit` with the directory's descriptor and the name of each file
// that IsEntryName accepts; nothing when the directory cannot be read.
void ForEachEntryName(const std::string& dir,
                      const std::function<void(int dir_fd, const char* name)>& visit);

// Every registered process that is still alive; stale entries are removed
// on the way when permissions allow. Unreadable or malformed files are skipped.
std::vector<LiveProcess> ListLive(const std::string& dir);

}  // namespace gpupin::sim
