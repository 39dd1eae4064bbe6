#include "core/gpu_list.h"

#include <fmt/format.h>

namespace gpupin {

std::string GpuList(const std::vector<uint32_t>& indices) {
  return fmt::format("GPU{} {}", indices.size() == 1 ? "" : "s", fmt::join(indices, ","));
}

}  // namespace gpupin
