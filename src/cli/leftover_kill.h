// gpupin ps --leftovers --kill: ends the caller's leftover GPU processes and
// reports what NVML shows freed afterwards.
#pragma once

#include <string>
#include <vector>

#include "cli/gpu_processes.h"
#include "cli/world.h"

namespace gpupin {

struct KillOptions {
  bool yes = false;
  bool dry_run = false;
  bool all_users = false;
  std::string grace = "5s";
};

// Ends the leftovers among `rows` (the processes of `before`) that
// DecideLeftoverKills allows. Exit 0 when every one it set out to end is
// gone, 1 when one survives.
Result<int> KillLeftovers(World& world, const KillOptions& options, const Inventory& before,
                          const std::vector<GpuProcessRow>& rows);

}  // namespace gpupin
