// The human form of `gpupin ls`: one line per GPU, MIG instances nested
// under their GPU, a summary line above.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/gpu.h"
#include "out/terminal.h"

namespace gpupin {

// What gpupin adds to NVML's view of one GPU.
struct GpuAnnotation {
  std::optional<int> cuda_ordinal;            // cuda:N under the caller's environment
  std::map<uint32_t, int> mig_cuda_ordinals;  // by MIG slot index
  std::string lease;                          // holder summary, "" when not leased
};

// `source` names where the facts came from ("simulated server lab.json"),
// empty for the real driver.
std::string RenderGpuTable(const Inventory& inventory,
                           const std::map<uint32_t, GpuAnnotation>& annotations,
                           const std::string& source, const Terminal& terminal);

// "GPU-8932f937" from "GPU-8932f937-d72c-...": enough to type as a prefix.
// Longer where another card of `among` starts alike, so that what the user
// copies names one card.
std::string ShortUuid(const std::string& uuid, const std::vector<Gpu>& among = {});

}  // namespace gpupin
