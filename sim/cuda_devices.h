// Which devices a CUDA program sees on the simulated server: gpupin's own
// resolver (core/cuda_visible.h) applied to the scenario's GPUs, except that
// FASTEST_FIRST follows the scenario's true order (cuda_fastest_first_order),
// which gpupin's model can only guess. Used by the simulated libcuda and by
// the workload, so both agree with each other by construction.
#pragma once

#include <vector>

#include "core/cuda_visible.h"
#include "core/gpu.h"
#include "sim/scenario.h"

namespace gpupin::sim {

// The scenario's GPUs (and MIG instances) as gpupin's core types, with the
// fields the resolver reads.
std::vector<Gpu> ScenarioGpus(const Scenario& scenario);

// The resolution a CUDA program started with `env` gets.
Resolution ResolveCudaDevices(const Scenario& scenario, const VisibilityEnv& env);

}  // namespace gpupin::sim
