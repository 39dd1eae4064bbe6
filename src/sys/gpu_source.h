// The narrow interface through which everything above sys/ sees the GPUs.
// The real implementation is NVML loaded with dlopen (sys/nvml); tests of the
// core hand plain Inventory values instead.
#pragma once

#include "core/error.h"
#include "core/gpu.h"
#include "core/gpu_facts.h"

namespace gpupin {

class GpuSource {
 public:
  virtual ~GpuSource() = default;
  // One consistent look at every GPU, reading the groups of facts `wanted`
  // (gpu_facts); the fields of the others are unset. Fails
  // (ExitCode::kNvmlUnavailable) only when the library as a whole cannot
  // answer; a single GPU that fails is returned with Gpu::health_error set.
  virtual Result<Inventory> Snapshot(GpuFacts wanted) = 0;
  // The groups the last snapshot read: `wanted` with kCudaOrderIfMixed
  // resolved (kCudaOrder set when compute capability and cores were read).
  // A field of a group not read means "not asked", not "not supported".
  virtual GpuFacts LastRead() const = 0;
};

}  // namespace gpupin
