// The machine's CPU topology from sysfs (the root is injectable, so tests
// and `gpupin --simulate` can describe a machine other than this one).
#pragma once

#include <string>

#include "core/cpu_topology.h"
#include "core/error.h"

namespace gpupin {

// GPUPIN_SYSFS_ROOT when set (a directory laid out like /sys), else "/sys".
std::string SysfsRoot();

// Every online CPU under `sysfs_root`/devices/system/cpu: its socket
// (topology/physical_package_id) and core (the first CPU of
// topology/core_cpus_list, or of thread_siblings_list on kernels before
// 5.6). Fails, naming the file, when one cannot be read.
Result<CpuTopology> ReadCpuTopology(const std::string& sysfs_root);

}  // namespace gpupin
