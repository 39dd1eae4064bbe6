// One libnvidia-ml loaded with dlopen, its functions resolved once (newest
// versioned symbol first), and NVML initialised. Everything else in sys/nvml
// calls NVML through the table this owns.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/error.h"
#include "sys/nvml/nvml_abi.h"

namespace gpupin {

// A process-list function and the version of its symbol (1: unversioned, 16-byte
// entries; 2: _v2, 24 bytes; 3: _v3, 24 or 32 bytes, see nvml_processes.h).
struct NvmlProcessSymbol {
  nvmlDeviceGetProcesses_fn fn = nullptr;
  int version = 0;
};

// The symbols of one process list that the library exports, newest first:
// a library may export `_v3` that its driver refuses (FUNCTION_NOT_FOUND),
// and an older one then answers, as nvtop finds at every refresh.
struct NvmlProcessQuery {
  std::vector<NvmlProcessSymbol> symbols;
  bool available() const { return !symbols.empty(); }
};

// The resolved functions. The required ones are never null once Open
// succeeded; an optional one is null when the library lacks it, which makes
// its field "not supported".
struct NvmlFunctions {
  // Required.
  nvmlInit_fn init = nullptr;
  nvmlShutdown_fn shutdown = nullptr;
  nvmlErrorString_fn error_string = nullptr;
  nvmlDeviceGetCount_fn device_count = nullptr;
  nvmlDeviceGetHandleByIndex_fn handle_by_index = nullptr;
  nvmlDeviceGetString_fn name = nullptr;
  nvmlDeviceGetString_fn uuid = nullptr;
  nvmlDeviceGetPciInfo_fn pci_info = nullptr;
  // At least one of the two memory functions is present.
  nvmlDeviceGetMemoryInfo_v2_fn memory_info_v2 = nullptr;
  nvmlDeviceGetMemoryInfo_fn memory_info_v1 = nullptr;

  // Optional.
  nvmlSystemGetString_fn driver_version = nullptr;
  nvmlSystemGetString_fn nvml_version = nullptr;
  nvmlSystemGetCudaDriverVersion_fn cuda_driver_version = nullptr;  // _v2
  nvmlSystemGetCudaDriverVersion_fn cuda_driver_version_v1 = nullptr;
  nvmlDeviceGetUtilizationRates_fn utilization = nullptr;
  nvmlDeviceGetTemperature_fn temperature = nullptr;
  nvmlDeviceGetUint_fn power_usage = nullptr;
  nvmlDeviceGetUint_fn power_limit = nullptr;
  nvmlDeviceGetInt_fn compute_mode = nullptr;
  nvmlDeviceGetInt_fn persistence_mode = nullptr;
  nvmlDeviceGetCudaComputeCapability_fn compute_capability = nullptr;
  nvmlDeviceGetUint_fn num_cores = nullptr;
  nvmlDeviceGetUint_fn minor_number = nullptr;
  nvmlDeviceGetCpuAffinity_fn cpu_affinity = nullptr;
  nvmlDeviceGetUint_fn numa_node = nullptr;
  nvmlDeviceGetUint_fn board_id = nullptr;
  nvmlDeviceGetUint_fn multi_gpu_board = nullptr;
  nvmlDeviceGetMigMode_fn mig_mode = nullptr;
  nvmlDeviceGetUint_fn max_mig_device_count = nullptr;
  nvmlDeviceGetMigDeviceHandleByIndex_fn mig_device_handle = nullptr;
  nvmlDeviceGetUint_fn gpu_instance_id = nullptr;
  nvmlDeviceGetUint_fn compute_instance_id = nullptr;
  nvmlDeviceGetNvLinkState_fn nvlink_state = nullptr;
  nvmlDeviceGetNvLinkRemotePciInfo_fn nvlink_remote_pci_info = nullptr;
  nvmlDeviceGetTopologyCommonAncestor_fn topology_common_ancestor = nullptr;
  NvmlProcessQuery compute_processes;
  NvmlProcessQuery graphics_processes;
};

class NvmlLibrary {
 public:
  // Loads the first of `candidates` that dlopen accepts (an explicit path is
  // passed alone, so it never falls back to another library), resolves the
  // functions and calls nvmlInit. Fails with ExitCode::kNvmlUnavailable and a
  // one-line message: no candidate loads (names each with dlerror's reason),
  // a required function is missing (names it), or nvmlInit fails (says what
  // to do for a missing driver, a driver/library mismatch, no permission).
  static Result<std::unique_ptr<NvmlLibrary>> Open(const std::vector<std::string>& candidates);

  // nvmlShutdown, then dlclose.
  ~NvmlLibrary();
  NvmlLibrary(const NvmlLibrary&) = delete;
  NvmlLibrary& operator=(const NvmlLibrary&) = delete;

  const NvmlFunctions& fn() const { return fn_; }
  const std::string& path() const { return path_; }

  // "NVML: GPU is lost" for a code NVML defines, "NVML error 42" for one it
  // does not (nvmlErrorString would only say "Unknown Error").
  std::string Explain(nvmlReturn_t code) const;

 private:
  NvmlLibrary(void* handle, std::string path) : handle_(handle), path_(std::move(path)) {}

  void* handle_;
  std::string path_;
  NvmlFunctions fn_;
  bool initialized_ = false;
};

}  // namespace gpupin
