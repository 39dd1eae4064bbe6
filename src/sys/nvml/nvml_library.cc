#include "sys/nvml/nvml_library.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <initializer_list>
#include <utility>

namespace gpupin {
namespace {

// Looks each function up once, newest symbol first, and remembers which
// required ones no candidate name provided.
class SymbolResolver {
 public:
  explicit SymbolResolver(void* handle) : handle_(handle) {}

  // Fills `slot` from the first of `names` the library exports; returns its
  // position in `names`, or -1 (and leaves `slot` null) when none is there.
  template <class F>
  int Optional(F& slot, std::initializer_list<const char*> names) {
    int position = 0;
    for (const char* name : names) {
      if (void* symbol = dlsym(handle_, name)) {
        slot = reinterpret_cast<F>(symbol);
        return position;
      }
      ++position;
    }
    return -1;
  }

  template <class F>
  void Required(F& slot, std::initializer_list<const char*> names) {
    if (Optional(slot, names) < 0) NoteMissing(names);
  }

  void NoteMissing(std::initializer_list<const char*> names) {
    std::string alternatives;
    for (const char* name : names) {
      if (!alternatives.empty()) alternatives += " or ";
      alternatives += name;
    }
    missing_.push_back(std::move(alternatives));
  }

  // Those of `base`_v3, `base`_v2 and `base` the library exports.
  NvmlProcessQuery Processes(const std::string& base) {
    NvmlProcessQuery query;
    for (int version = 3; version >= 1; --version) {
      const std::string name = version == 1 ? base : fmt::format("{}_v{}", base, version);
      if (void* symbol = dlsym(handle_, name.c_str()))
        query.symbols.push_back({reinterpret_cast<nvmlDeviceGetProcesses_fn>(symbol), version});
    }
    return query;
  }

  const std::vector<std::string>& missing() const { return missing_; }

 private:
  void* handle_;
  std::vector<std::string> missing_;
};

NvmlFunctions ResolveFunctions(SymbolResolver& r) {
  NvmlFunctions f;
  r.Required(f.init, {"nvmlInit_v2", "nvmlInit"});
  r.Required(f.shutdown, {"nvmlShutdown"});
  r.Required(f.error_string, {"nvmlErrorString"});
  r.Required(f.device_count, {"nvmlDeviceGetCount_v2", "nvmlDeviceGetCount"});
  r.Required(f.handle_by_index, {"nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex"});
  r.Required(f.name, {"nvmlDeviceGetName"});
  r.Required(f.uuid, {"nvmlDeviceGetUUID"});
  r.Required(f.pci_info,
             {"nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetPciInfo_v2", "nvmlDeviceGetPciInfo"});
  // nvmlMemory_t and nvmlMemory_v2_t differ, so the two are separate slots:
  // the newer one splits out driver-reserved memory, the older is the fallback.
  const bool has_memory_v2 = r.Optional(f.memory_info_v2, {"nvmlDeviceGetMemoryInfo_v2"}) >= 0;
  const bool has_memory_v1 = r.Optional(f.memory_info_v1, {"nvmlDeviceGetMemoryInfo"}) >= 0;
  if (!has_memory_v2 && !has_memory_v1)
    r.NoteMissing({"nvmlDeviceGetMemoryInfo_v2", "nvmlDeviceGetMemoryInfo"});

  r.Optional(f.driver_version, {"nvmlSystemGetDriverVersion"});
  r.Optional(f.nvml_version, {"nvmlSystemGetNVMLVersion"});
  // Both asked, newest first: _v2 reads the installed libcuda and fails
  // without one (a container without the compute capability), where the
  // older one still gives the version the driver supports.
  r.Optional(f.cuda_driver_version, {"nvmlSystemGetCudaDriverVersion_v2"});
  r.Optional(f.cuda_driver_version_v1, {"nvmlSystemGetCudaDriverVersion"});
  r.Optional(f.utilization, {"nvmlDeviceGetUtilizationRates"});
  r.Optional(f.temperature, {"nvmlDeviceGetTemperature"});
  r.Optional(f.power_usage, {"nvmlDeviceGetPowerUsage"});
  r.Optional(f.power_limit, {"nvmlDeviceGetEnforcedPowerLimit"});
  r.Optional(f.compute_mode, {"nvmlDeviceGetComputeMode"});
  r.Optional(f.persistence_mode, {"nvmlDeviceGetPersistenceMode"});
  r.Optional(f.compute_capability, {"nvmlDeviceGetCudaComputeCapability"});
  r.Optional(f.num_cores, {"nvmlDeviceGetNumGpuCores"});
  r.Optional(f.minor_number, {"nvmlDeviceGetMinorNumber"});
  r.Optional(f.cpu_affinity, {"nvmlDeviceGetCpuAffinity"});
  r.Optional(f.numa_node, {"nvmlDeviceGetNumaNodeId"});
  r.Optional(f.board_id, {"nvmlDeviceGetBoardId"});
  r.Optional(f.multi_gpu_board, {"nvmlDeviceGetMultiGpuBoard"});
  r.Optional(f.mig_mode, {"nvmlDeviceGetMigMode"});
  r.Optional(f.max_mig_device_count, {"nvmlDeviceGetMaxMigDeviceCount"});
  r.Optional(f.mig_device_handle, {"nvmlDeviceGetMigDeviceHandleByIndex"});
  r.Optional(f.gpu_instance_id, {"nvmlDeviceGetGpuInstanceId"});
  r.Optional(f.compute_instance_id, {"nvmlDeviceGetComputeInstanceId"});
  r.Optional(f.nvlink_state, {"nvmlDeviceGetNvLinkState"});
  r.Optional(f.nvlink_remote_pci_info,
             {"nvmlDeviceGetNvLinkRemotePciInfo_v2", "nvmlDeviceGetNvLinkRemotePciInfo"});
  r.Optional(f.topology_common_ancestor, {"nvmlDeviceGetTopologyCommonAncestor"});
  f.compute_processes = r.Processes("nvmlDeviceGetComputeRunningProcesses");
  f.graphics_processes = r.Processes("nvmlDeviceGetGraphicsRunningProcesses");
  return f;
}

Error InitError(nvmlReturn_t code, const std::string& why) {
  switch (code) {
    case NVML_ERROR_DRIVER_NOT_LOADED:
      return MakeError(ExitCode::kNvmlUnavailable, "NVIDIA driver not loaded (" + why +
                                                       "); is this a GPU machine? Try nvidia-smi.");
    case NVML_ERROR_LIB_RM_VERSION_MISMATCH:
      return MakeError(ExitCode::kNvmlUnavailable,
                       "the NVIDIA kernel driver and its NVML library have different versions (" +
                           why +
                           "); after a driver update, reboot or reload the nvidia kernel module.");
    case NVML_ERROR_NO_PERMISSION:
      return MakeError(ExitCode::kNvmlUnavailable,
                       "no permission to use the NVIDIA driver (" + why +
                           "); check the permissions of /dev/nvidia* and your groups.");
    default:
      return MakeError(ExitCode::kNvmlUnavailable,
                       "cannot initialise NVML (" + why + "); try nvidia-smi.");
  }
}

}  // namespace

Result<std::unique_ptr<NvmlLibrary>> NvmlLibrary::Open(const std::vector<std::string>& candidates) {
  void* handle = nullptr;
  std::string path;
  std::string reasons;
  for (const std::string& candidate : candidates) {
    // RTLD_NOW: a library that cannot bind its own dependencies fails here,
    // with dlerror's reason, rather than at the first call.
    handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle) {
      path = candidate;
      break;
    }
    const char* reason = dlerror();
    reasons +=
        (reasons.empty() ? "" : "; ") + std::string(reason ? reason : candidate + ": cannot load");
  }
  if (!handle) {
    return MakeError(
        ExitCode::kNvmlUnavailable,
        "cannot load NVML (" + reasons +
            "); is the NVIDIA driver installed? Try nvidia-smi; or use --simulate FILE.");
  }

  std::unique_ptr<NvmlLibrary> library(new NvmlLibrary(handle, path));
  SymbolResolver resolver(handle);
  library->fn_ = ResolveFunctions(resolver);
  if (!resolver.missing().empty()) {
    return MakeError(ExitCode::kNvmlUnavailable,
                     path + " is not a usable NVML library: it lacks " +
                         resolver.missing().front() +
                         "; point --nvml at the driver's libnvidia-ml.so.1.");
  }
  if (nvmlReturn_t code = library->fn_.init(); code != NVML_SUCCESS) {
    // The simulated library says why it could not load its scenario file
    // (a --simulate mistake), instead of a driver hint that does not apply.
    using LoadErrorFn = const char* (*)();
    auto load_error = reinterpret_cast<LoadErrorFn>(dlsym(handle, "gpupinSimLoadError"));
    if (const char* why = load_error ? load_error() : nullptr; why && *why) {
      return MakeError(ExitCode::kUsage, "cannot use the simulated server: " + std::string(why) +
                                             "; see doc/scenario.md, or start from "
                                             "examples/lab-8gpu.json");
    }
    return InitError(code, library->Explain(code));
  }
  library->initialized_ = true;
  return library;
}

NvmlLibrary::~NvmlLibrary() {
  if (initialized_) fn_.shutdown();
  dlclose(handle_);
}

std::string NvmlLibrary::Explain(nvmlReturn_t code) const {
  // Codes 0-30 and 999 are defined by the 13.3 header (facts §5.2); for any
  // other nvmlErrorString only says "Unknown Error", which hides the number.
  const bool defined = (code >= NVML_SUCCESS && code <= 30) || code == NVML_ERROR_UNKNOWN;
  const char* text = defined ? fn_.error_string(code) : nullptr;
  if (!text) return "NVML error " + std::to_string(code);
  return std::string("NVML: ") + text;
}

}  // namespace gpupin
