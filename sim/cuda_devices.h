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

// What cuInit answers for that resolution, as driver 580 does: 0 when a
// device is visible, CUDA_ERROR_INVALID_DEVICE (101) when a device is named
// twice, CUDA_ERROR_NO_DEVICE (100) when none is visible.
int CudaInitResult(const Resolution& resolution);

}  // namespace gpupin::sim
