// Whether a server's GPUs are one model: under CUDA_DEVICE_ORDER=FASTEST_FIRST
// (CUDA's default) only then does CUDA number them in PCI order, as
// nvidia-smi does.
#pragma once

#include <optional>
#include <utility>
#include <vector>

#include "core/gpu.h"

namespace gpupin {

// Two GPUs of different models (name or compute capability), or nullopt
// when all are one. What could not be read is no evidence that the models
// differ: a GPU without a name (lost, fallen off the bus) is left out, and
// compute capabilities count only where both were read (a card in reset
// may still give its name but nothing more).
std::optional<std::pair<const Gpu*, const Gpu*>> TwoModels(const std::vector<Gpu>& gpus);

}  // namespace gpupin
