#pragma once

#include <memory>
#include <optional>
#include <string>

#include "core/error.h"
#include "sys/gpu_source.h"

namespace gpupin {

struct NvmlOptions {
  std::optional<std::string> library_path;
  bool simulated = false;
};

Result<std::unique_ptr<GpuSource>> OpenNvml(const NvmlOptions& options);

}  // namespace gpupin
