// NVML return codes by name, as scenario files write them and as the
// simulated nvmlErrorString prints them.
#pragma once

#include <optional>
#include <string_view>

#include "sys/nvml/nvml_abi.h"

namespace gpupin::sim {

// "NO_PERMISSION", "NVML_ERROR_NO_PERMISSION" or "4" -> 4. nullopt when the
// text names no code NVML defines.
std::optional<nvmlReturn_t> ParseNvmlReturn(std::string_view text);

// The text nvmlErrorString gives for a code ("Driver Not Loaded").
const char* NvmlReturnText(nvmlReturn_t code);

}  // namespace gpupin::sim
