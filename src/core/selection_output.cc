#include "core/selection_output.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/cuda_visible.h"
#include "core/gpu_models.h"

namespace gpupin {
namespace {

const Gpu* FindGpu(const std::vector<Gpu>& gpus, uint32_t index) {
  auto found =
      std::find_if(gpus.begin(), gpus.end(), [&](const Gpu& gpu) { return gpu.index == index; });
  return found == gpus.end() ? nullptr : &*found;
}

// Indices as CUDA counts them in PCI bus order, which NVML's numbering
// need not follow.
std::string JoinIds(const std::vector<uint32_t>& chosen, const std::vector<Gpu>& gpus, bool uuids) {
  std::vector<std::string> ids;
  for (uint32_t index : chosen) {
    const Gpu* gpu = FindGpu(gpus, index);
    if (uuids && gpu && !gpu->uuid.empty()) {
      ids.push_back(gpu->uuid);
    } else {
      ids.push_back(std::to_string(PciBusOrdinal(gpus, index).value_or(index)));
    }
  }
  return fmt::format("{}", fmt::join(ids, ","));
}

}  // namespace

std::string ChildVisibleDevices(const std::vector<uint32_t>& chosen_gpu_indices,
                                const std::vector<Gpu>& gpus, bool uuids) {
  return PickIds(chosen_gpu_indices, gpus, uuids, "PCI_BUS_ID").value;
}

DeviceIds PickIds(const std::vector<uint32_t>& chosen_gpu_indices, const std::vector<Gpu>& gpus,
                  bool uuids, const std::optional<std::string>& reader_device_order) {
  if (uuids || reader_device_order == "PCI_BUS_ID")
    return {JoinIds(chosen_gpu_indices, gpus, uuids), std::nullopt};
  // FASTEST_FIRST orders by speed, so among identical GPUs only the PCI
  // order is left to decide (facts file §1.3; the heuristic is not public,
  // which is why any difference in model or capability counts).
  const auto two = TwoModels(gpus);
  if (!two) return {JoinIds(chosen_gpu_indices, gpus, false), std::nullopt};
  std::string note = fmt::format(
      "printing UUIDs: GPU {} ({}) and GPU {} ({}) differ and CUDA_DEVICE_ORDER is not PCI_BUS_ID, "
      "so CUDA may "
      "number them unlike nvidia-smi; set CUDA_DEVICE_ORDER=PCI_BUS_ID to get indices",
      two->first->index, two->first->name, two->second->index, two->second->name);
  return {JoinIds(chosen_gpu_indices, gpus, true), std::move(note)};
}

}  // namespace gpupin
