// CPU sets as the kernel prints them (cpuset(7) "list format"): "0-15,32-47".
// The same text appears in /proc/PID/status Cpus_allowed_list, Slurm's
// gres.conf Cores= and taskset -c, so this is the one way gpupin writes a
// CPU set for people.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace gpupin {

// `mask` is a bitmap in the kernel's layout: bit i of word k is CPU
// k * bits-per-word + i (the layout NVML's nvmlDeviceGetCpuAffinity fills).
// Returns "" for an empty set.
std::string FormatCpuList(std::span<const unsigned long> mask);

// The same text for a set of ids.
std::string FormatCpuIds(const std::set<uint32_t>& ids);

// The ids of a list ("0-3,8" -> 0 1 2 3 8), ascending and unique; "" is
// the empty set. nullopt when malformed, or for an id of kMaxCpuId or more.
inline constexpr uint32_t kMaxCpuId = 1U << 16;
std::optional<std::vector<uint32_t>> ParseCpuList(std::string_view text);

}  // namespace gpupin
