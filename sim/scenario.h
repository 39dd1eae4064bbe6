// The simulated server as a scenario file describes it (doc/scenario.md).
// Plain values: the simulated NVML and libcuda answer from these, live
// processes (live_registry.h) are added on top at call time. Every optional
// field that is absent makes the NVML call that reads it answer
// NVML_ERROR_NOT_SUPPORTED.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "sys/nvml/nvml_abi.h"

namespace gpupin::sim {

struct SimProcess {
  uint32_t pid = 0;
  std::optional<uint64_t> used_memory_bytes;  // absent: NVML_VALUE_NOT_AVAILABLE
  bool compute = true;
  bool graphics = false;
};

struct SimMemory {
  uint64_t total_bytes = 0;
  // Used before live workloads are added. Defaults to the sum of the static
  // processes' memory (of the GPU and, for a MIG parent, of its instances).
  uint64_t used_bytes = 0;
  uint64_t reserved_bytes = 0;  // driver-reserved; only _v2 reports it apart
};

struct SimMigInstance {
  uint32_t slot = 0;  // nvmlDeviceGetMigDeviceHandleByIndex index
  std::string uuid;   // MIG-...
  std::optional<std::string> name;
  std::optional<SimMemory> memory;
  std::optional<uint32_t> gpu_instance_id;
  std::optional<uint32_t> compute_instance_id;
  std::vector<SimProcess> processes;
};

struct SimPci {
  std::string bus_id;  // normalised "0000000D:BB:DD.0", upper-case
  uint32_t domain = 0;
  uint32_t bus = 0;
  uint32_t device = 0;
  uint32_t pci_device_id = 0;  // device id << 16 | 0x10de
};

struct SimGpu {
  std::string uuid;  // GPU-..., required: it keys the live registry and CUDA
  std::optional<std::string> name;
  std::optional<SimPci> pci;
  std::optional<SimMemory> memory;
  std::optional<nvmlUtilization_t> utilization;
  std::optional<uint32_t> temperature_c;
  std::optional<uint32_t> power_draw_mw;
  std::optional<uint32_t> power_limit_mw;
  std::optional<int> compute_mode;  // nvmlComputeMode_t value
  std::optional<bool> persistence_mode;
  std::optional<std::pair<int, int>> compute_capability;
  std::optional<uint32_t> cores;
  std::optional<uint32_t> minor_number;
  std::optional<std::vector<uint32_t>> cpu_affinity;  // CPU numbers
  std::optional<uint32_t> numa_node;
  std::optional<uint32_t> board_id;
  std::optional<bool> multi_gpu_board;
  std::optional<uint32_t> pcie_switch;  // same value: GPUs behind one switch
  std::optional<uint32_t> host_bridge;  // same value: GPUs under one host bridge
  // One entry per NVLink: the remote bus id (normalised), or nullopt when
  // the link is inactive. Absent: NVLink not supported.
  std::optional<std::vector<std::optional<std::string>>> nvlinks;
  // Absent: the GPU has no MIG support.
  std::optional<bool> mig_enabled;
  uint32_t mig_max_devices = 0;
  std::vector<SimMigInstance> mig_instances;
  bool lost = false;  // every call on its handle: NVML_ERROR_GPU_IS_LOST
  // Call name (with or without version suffix) -> the code it returns.
  std::map<std::string, nvmlReturn_t, std::less<>> errors;
  std::vector<SimProcess> processes;
};

struct Scenario {
  std::optional<std::string> driver_version;
  std::optional<std::string> nvml_version;
  std::optional<int> cuda_driver_version;                   // 1000*major + 10*minor
  std::optional<nvmlReturn_t> init_error;                   // nvmlInit (and cuInit) fail with it
  std::map<std::string, nvmlReturn_t, std::less<>> errors;  // calls that take no device
  uint32_t process_stride = 24;          // bytes per entry written by the _v3 process calls
  uint32_t grow_processes_on_fetch = 0;  // see doc/scenario.md
  // The simulated driver's true FASTEST_FIRST order, as NVML indices.
  std::optional<std::vector<uint32_t>> cuda_fastest_first_order;
  // cuInit never returns: a driver that hangs, as gpupin's probe meets one.
  bool cuda_init_hangs = false;
  // How long a first nvmlInit takes, as a real driver's tens of milliseconds.
  uint32_t nvml_init_ms = 0;
  std::vector<SimGpu> gpus;
};

// Parses and validates a scenario. The error names the offending field by
// its JSON path ("gpus[2].memory.total: ...").
Result<Scenario> ParseScenario(std::string_view json_text);

// Reads and parses the file; the error starts with the file's path.
Result<Scenario> LoadScenario(const std::string& path);

// Whether a fault configured for `configured` (a call name, with or without
// a version suffix) applies to the exported symbol `call`.
bool FaultMatches(std::string_view configured, std::string_view call);

// The error a call on `gpu` is configured to fail with, if any.
std::optional<nvmlReturn_t> ConfiguredError(
    const std::map<std::string, nvmlReturn_t, std::less<>>& errors, std::string_view call);

// "0000:3b:00.0" or "00000000:3B:00.0" -> the normalised form NVML
// prints ("00000000:3B:00.0") and its numbers; nullopt when malformed.
std::optional<SimPci> ParsePciBusId(std::string_view text);

// "GPU-8932f937-d72c-4106-c12f-20bd9faed9f6" -> its 16 bytes. nullopt when
// the text is not a GPU-/MIG- UUID.
std::optional<std::array<unsigned char, 16>> UuidBytes(std::string_view uuid);

}  // namespace gpupin::sim
