// How close GPUs are to each other, for jobs that use several: a set on one
// board or linked by NVLink talks faster than one spread across sockets.
// Pure: reads only the inventory's values.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "core/gpu.h"

namespace gpupin {

// Closeness classes, closest first; a set is as close as its farthest pair.
enum class Closeness {
  kSameBoard = 0,   // one multi-GPU board (NVML kInternal, or equal board ids)
  kNvLink = 1,      // an active NVLink between the two
  kPcieSwitch = 2,  // NVML kSingle/kMultiple: PCIe switches, no host bridge
  kNumaNode = 3,    // NVML kHostBridge/kNode, or the same NUMA node
  kSystem = 4,      // anything else, or unknown
};

// "on one board", "linked by NVLink", ...: completes "a set ...".
const char* ClosenessName(Closeness closeness);

// Pairwise closeness of the GPUs of one inventory, by position in `gpus`
// (not NVML index). `levels` is Inventory::topology: levels[i][j] for gpus i
// and j; missing rows, columns or entries mean "unknown".
class Topology {
 public:
  Topology(const std::vector<Gpu>& gpus,
           const std::vector<std::vector<std::optional<TopologyLevel>>>& levels);

  Closeness Between(size_t a, size_t b) const { return matrix_[a * size_ + b]; }
  size_t size() const { return size_; }

 private:
  size_t size_ = 0;
  std::vector<Closeness> matrix_;
};

// "00000000:3B:00.0" and "0000:3b:00.0" name the same function: NVML writes
// an 8-digit domain in some places and 4 in others.
std::string NormalizePciBusId(const std::string& bus_id);

}  // namespace gpupin
