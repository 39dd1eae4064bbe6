// The walk over the processes NVML lists on a GPU, written once for every
// reader: in MIG mode a process is listed on its instance and again in the
// GPU's own list (which sys/nvml fills from the instances), so instances
// come first, and the GPU's own list then gives only the processes no
// instance listed.
#pragma once

#include <set>

#include "core/gpu.h"

namespace gpupin {

// Calls visit(process, mig) for each process of `gpu`: every instance's
// processes (mig: that instance), then those of the GPU's own list that no
// instance listed (mig: null).
template <class Visit>
void ForEachGpuProcess(const Gpu& gpu, Visit&& visit) {
  std::set<uint32_t> on_instances;
  for (const MigDevice& mig : gpu.mig_devices) {
    for (const GpuProcess& process : mig.processes) {
      on_instances.insert(process.pid);
      visit(process, &mig);
    }
  }
  for (const GpuProcess& process : gpu.processes) {
    if (!on_instances.contains(process.pid)) visit(process, static_cast<const MigDevice*>(nullptr));
  }
}

}  // namespace gpupin
