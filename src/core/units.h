// Sizes and percentages as users write them and as tables print them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "core/error.h"

namespace gpupin {

// "24G", "500M", "1.5GiB", "5Gi", "1024B" (bytes), "0". Binary multiples:
// K/M/G/T/P mean KiB/MiB/GiB/TiB/PiB, as nvidia-smi and frameworks count GPU
// memory. A number without a unit, other than 0, is refused.
Result<uint64_t> ParseSize(std::string_view text);

// "80%" or "80" -> 80. Accepts 0..100.
Result<double> ParsePercent(std::string_view text);

// "500ms", "30s", "5m", "2h", "1d", "1.5" (seconds) -> milliseconds; at most 1000
// days, so that a deadline computed from it cannot overflow.
Result<int64_t> ParseDurationMs(std::string_view text);

// 1536 MiB -> "1.5G", 512 KiB -> "512K": short, for tables.
std::string FormatBytes(uint64_t bytes);

// Both as FormatBytes writes them or, where that would write them alike
// ("busy: 1G used > 1G"), in the largest unit that tells them apart
// ("1025M", "1024M").
std::pair<std::string, std::string> FormatBytesApart(uint64_t a, uint64_t b);

}  // namespace gpupin
