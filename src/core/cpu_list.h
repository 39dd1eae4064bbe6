// CPU sets as the kernel prints them (cpuset(7) "list format"): "0-15,32-47".
// The same text appears in /proc/PID/status Cpus_allowed_list, Slurm's
// gres.conf Cores= and taskset -c, so this is the one way gpupin writes a
// CPU set for people.
#pragma once

#include <span>
#include <string>

namespace gpupin {

// `mask` is a bitmap in the kernel's layout: bit i of word k is CPU
// k * bits-per-word + i (the layout NVML's nvmlDeviceGetCpuAffinity fills).
// Returns "" for an empty set.
std::string FormatCpuList(std::span<const unsigned long> mask);

}  // namespace gpupin
