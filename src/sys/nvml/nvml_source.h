// The real GpuSource: NVML loaded with dlopen (the driver's libnvidia-ml, or
// the project's simulated one, through the same path).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "sys/gpu_source.h"

namespace gpupin {

// The variable that names the libnvidia-ml to load, when --nvml does not.
inline constexpr const char* kNvmlLibraryVariable = "GPUPIN_NVML_LIBRARY";

struct NvmlOptions {
  // --nvml PATH; else env GPUPIN_NVML_LIBRARY; else libnvidia-ml.so.1, then
  // libnvidia-ml.so (the unversioned name exists only with a dev package).
  std::optional<std::string> library_path;
  bool simulated = false;  // copied into Inventory::simulated
};

// The libraries OpenNvml tries, in order, given the options and the value of
// GPUPIN_NVML_LIBRARY (null or empty: unset). An explicit path is the only
// candidate: loading some other library instead would hide a typo.
std::vector<std::string> NvmlLibraryCandidates(const NvmlOptions& options, const char* env_library);

// Loads NVML, resolves its functions and initialises it once; the source's
// destructor shuts NVML down and unloads it. Fails with
// ExitCode::kNvmlUnavailable and a one-line message a user can act on (see
// NvmlLibrary::Open).
Result<std::unique_ptr<GpuSource>> OpenNvml(const NvmlOptions& options);

}  // namespace gpupin
