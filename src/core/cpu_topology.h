// Which core and socket each CPU of this machine belongs to, and Slurm's
// numbering of cores (gres.conf `Cores=`), which is not the kernel's CPU
// numbering that NVML's affinity and taskset use.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace gpupin {

// One online logical CPU (hardware thread).
struct LogicalCpu {
  uint32_t cpu = 0;      // the kernel's CPU id, as in "0-15,32-47"
  uint32_t package = 0;  // socket: physical_package_id
  uint32_t core = 0;     // shared by the threads of one core, unique on the machine
};

using CpuTopology = std::vector<LogicalCpu>;

// Slurm's core index numbers for the cores holding any CPU of `cpu_list`
// ("0-15,32-47"), as a list ("0-15"). Slurm numbers cores in hwloc's
// logical order: socket by socket, core by core, each ordered by its lowest
// CPU id, with every hardware thread of a core behind one number; a core
// counts when any of its threads is in the list, as in Slurm's own NVML
// autodetection (xcpuinfo_mac_to_abs). Fails when the list is malformed or
// empty, or names a CPU the topology lacks.
Result<std::string> SlurmCoreIndices(std::string_view cpu_list, const CpuTopology& topology);

}  // namespace gpupin
