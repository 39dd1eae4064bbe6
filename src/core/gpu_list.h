// How a message names some GPUs by their NVML indices: "GPU 2", "GPUs 0,1,3".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gpupin {

std::string GpuList(const std::vector<uint32_t>& indices);

}  // namespace gpupin
