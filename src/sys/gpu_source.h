// The narrow interface through which everything above sys/ sees the GPUs.
// The real implementation is NVML loaded with dlopen (sys/nvml); tests of the
// core hand plain Inventory values instead.
#pragma once

#include "core/error.h"
#include "core/gpu.h"

namespace gpupin {

class GpuSource {
 public:
  virtual ~GpuSource() = default;
  // One consistent look at every GPU. Fails (ExitCode::kNvmlUnavailable)
  // only when the library as a whole cannot answer; a single GPU that fails
  // is returned with Gpu::health_error set.
  virtual Result<Inventory> Snapshot() = 0;
};

}  // namespace gpupin
