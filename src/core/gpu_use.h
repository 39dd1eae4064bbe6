// Which GPUs a process really uses (NVML's process lists), set against the
// cuda:N its environment makes visible: a GPU used but visible as no cuda:N
// is the symptom of CUDA_VISIBLE_DEVICES set after CUDA initialised (doctor,
// in doc/commands.md). Pure: the inventory and the resolution come in as values.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/cuda_visible.h"
#include "core/gpu.h"

namespace gpupin {

struct GpuUse {
  uint32_t pid = 0;
  uint32_t gpu_index = 0;
  std::optional<uint32_t> mig_index;  // the MIG instance, when NVML lists it on one
  std::string uuid;                   // of the GPU or the MIG instance
  std::optional<uint64_t> used_memory_bytes;
  // The cuda:N under which the resolution makes this device visible;
  // nullopt: the process uses a device its environment does not show.
  std::optional<int> cuda_ordinal;
  // The process started with a visibility of its own (OwnResolution), under
  // which cuda_ordinal is counted.
  bool own_environment = false;
};

// How a process's own environment resolves, when it differs from the one
// examined (a child started with a CUDA_VISIBLE_DEVICES of its own); nullopt:
// as examined.
using OwnResolution = std::function<std::optional<Resolution>(uint32_t pid)>;

// Every (process, device) pair for the pids `belongs` accepts, in NVML
// order, each with its cuda:N under `resolution` or the process's own. A
// process listed both on a MIG instance and on its parent GPU is reported
// once, on the instance.
std::vector<GpuUse> FindGpuUses(const Inventory& inventory, const Resolution& resolution,
                                const std::function<bool(uint32_t pid)>& belongs,
                                const OwnResolution& own_resolution = {});

// The NVML indices of GPUs used with no cuda:N, each once, ascending.
std::vector<uint32_t> GpusUsedButNotVisible(const std::vector<GpuUse>& uses);

}  // namespace gpupin
