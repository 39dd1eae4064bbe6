// Reading NVML's running-process lists safely: the two-call size protocol
// (facts §5.7) and the entry layout of each symbol version, including the
// _v3 stride that some R535 drivers change without saying so (facts §5.5).
#pragma once

#include <cstddef>
#include <vector>

#include "core/gpu.h"
#include "sys/nvml/nvml_abi.h"
#include "sys/nvml/nvml_library.h"

namespace gpupin {

enum class ProcessKind { kCompute, kGraphics };

// Reads one list (compute or graphics, per `kind`) of `device` and merges its
// entries into `processes` by pid, so a process in both lists appears once
// with both flags. `scratch` is a buffer reused across calls.
//
// Each symbol the library exports is tried, newest first, while the driver
// answers FUNCTION_NOT_FOUND or ARGUMENT_VERSION_MISMATCH.
//
// Returns NVML_SUCCESS, or the code that stopped the read (NO_PERMISSION,
// NOT_SUPPORTED, GPU_IS_LOST, ...; INSUFFICIENT_SIZE when the list kept
// growing for every retry or claims an absurd length); `processes` is then
// left as it was.
nvmlReturn_t ReadProcessList(const NvmlProcessQuery& query, nvmlDevice_t device, ProcessKind kind,
                             std::vector<std::byte>& scratch, std::vector<GpuProcess>& processes);

}  // namespace gpupin
