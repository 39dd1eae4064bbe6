// What gpupin knows about the GPUs of this machine at one instant: plain
// values filled by sys/nvml and read by the pure core. Every metric a driver
// may not support is an std::optional ("not supported" is data: `-` in
// tables, null in JSON).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gpupin {

struct GpuProcess {
  uint32_t pid = 0;
  // Absent when the driver does not report it (NVML_VALUE_NOT_AVAILABLE).
  std::optional<uint64_t> used_memory_bytes;
  bool compute = false;
  bool graphics = false;
  // The MIG instance the process runs in, when the GPU is in MIG mode.
  std::optional<uint32_t> gpu_instance_id;
  std::optional<uint32_t> compute_instance_id;
};

enum class ComputeMode { kDefault, kExclusiveThread, kProhibited, kExclusiveProcess };

struct ComputeCapability {
  int major = 0;
  int minor = 0;
  friend bool operator==(const ComputeCapability&, const ComputeCapability&) = default;
  // NOLINTNEXTLINE(modernize-use-nullptr): clang-tidy 14 misreads the defaulted <=>
  friend auto operator<=>(const ComputeCapability&, const ComputeCapability&) = default;
};

struct MigDevice {
  uint32_t index = 0;  // slot within the parent GPU
  std::string uuid;    // MIG-...
  std::string name;
  std::optional<uint32_t> gpu_instance_id;
  std::optional<uint32_t> compute_instance_id;
  std::optional<uint64_t> memory_total_bytes;
  std::optional<uint64_t> memory_used_bytes;
  std::optional<uint64_t> memory_free_bytes;
  std::vector<GpuProcess> processes;
};

// How close two GPUs are, NVML's nvmlGpuTopologyLevel_t: smaller is closer.
enum class TopologyLevel : int {
  kInternal = 0,     // same board
  kSingle = 10,      // one PCIe switch
  kMultiple = 20,    // several switches, no host bridge
  kHostBridge = 30,  // same host bridge
  kNode = 40,        // same NUMA node
  kSystem = 50,      // across sockets
};

struct Gpu {
  uint32_t index = 0;      // NVML index (PCI bus order)
  std::string uuid;        // GPU-...
  std::string pci_bus_id;  // "00000000:3B:00.0"
  std::string name;

  // Set when the GPU's queries fail (lost, reset required, unknown error):
  // the GPU is listed as unhealthy, never selected, and the others still show.
  std::optional<std::string> health_error;

  std::optional<uint64_t> memory_total_bytes;
  std::optional<uint64_t> memory_used_bytes;
  std::optional<uint64_t> memory_free_bytes;
  std::optional<uint64_t> memory_reserved_bytes;  // only from nvmlDeviceGetMemoryInfo_v2
  std::optional<uint32_t> utilization_gpu_percent;
  std::optional<uint32_t> utilization_memory_percent;
  std::optional<uint32_t> temperature_c;
  std::optional<uint32_t> power_draw_mw;
  std::optional<uint32_t> power_limit_mw;
  std::optional<ComputeMode> compute_mode;
  std::optional<bool> persistence_mode;
  std::optional<ComputeCapability> compute_capability;
  std::optional<uint32_t> cores;
  std::optional<uint32_t> minor_number;     // /dev/nvidia<minor>
  std::optional<std::string> cpu_affinity;  // CPU list, "0-15,32-47"
  std::optional<int> numa_node;
  std::optional<uint32_t> board_id;
  std::optional<bool> multi_gpu_board;
  std::optional<bool> mig_enabled;
  std::vector<MigDevice> mig_devices;
  // Bus ids of the GPUs this one has an active NVLink to.
  std::vector<std::string> nvlink_peer_bus_ids;

  // False when the process lists could not be read (NO_PERMISSION,
  // NOT_SUPPORTED): "unknown", which is not the same as "idle".
  bool processes_known = true;
  std::vector<GpuProcess> processes;

  bool healthy() const { return !health_error.has_value(); }
};

struct Inventory {
  std::optional<std::string> driver_version;
  std::optional<std::string> nvml_version;
  std::optional<int> cuda_driver_version;  // 1000*major + 10*minor, e.g. 12020
  std::vector<Gpu> gpus;
  // topology[i][j] for gpus i and j; empty when the driver cannot tell.
  std::vector<std::vector<std::optional<TopologyLevel>>> topology;
  // True when answered by the simulated server rather than a real driver.
  bool simulated = false;
};

// The GPUs (NVML indices) whose process lists NVML would not give, lost
// ones included: what runs there is unknown, which is not "nothing".
inline std::vector<uint32_t> GpusWithUnknownProcesses(const Inventory& inventory) {
  std::vector<uint32_t> unknown;
  for (const Gpu& gpu : inventory.gpus) {
    if (!gpu.processes_known) unknown.push_back(gpu.index);
  }
  return unknown;
}

}  // namespace gpupin
