#include "core/gpu_models.h"

#include <algorithm>

namespace gpupin {

std::optional<std::pair<const Gpu*, const Gpu*>> TwoModels(const std::vector<Gpu>& gpus) {
  const Gpu* first = nullptr;
  for (const Gpu& gpu : gpus) {
    if (gpu.name.empty()) continue;
    if (!first) {
      first = &gpu;
    } else if (gpu.name != first->name || (gpu.compute_capability && first->compute_capability &&
                                           *gpu.compute_capability != *first->compute_capability)) {
      return std::pair{first, &gpu};
    }
  }
  return std::nullopt;
}

}  // namespace gpupin
