// The ids of chosen GPUs as the chosen program's CUDA runtime must read them
// (facts file §1.3): indices count in CUDA_DEVICE_ORDER, and the default,
// FASTEST_FIRST, may differ from NVML's PCI order on a mixed machine.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/gpu.h"

namespace gpupin {

struct DeviceIds {
  std::string value;                // "1,3" or "GPU-…,GPU-…": a CUDA_VISIBLE_DEVICES value
  std::optional<std::string> note;  // one line: why UUIDs stand where indices were expected
};

// CUDA_VISIBLE_DEVICES for a child gpupin starts itself: NVML indices (or
// UUIDs when asked for), valid because gpupin also sets
// CUDA_DEVICE_ORDER=PCI_BUS_ID for it. A caller that does not set
// CUDA_DEVICE_ORDER must use PickIds instead.
std::string ChildVisibleDevices(const std::vector<uint32_t>& chosen_gpu_indices,
                                const std::vector<Gpu>& gpus, bool uuids);

// What `pick` prints, to be read by a program whose CUDA_DEVICE_ORDER is
// `reader_device_order` (nullopt: unset): indices when that program will
// count in PCI order (CUDA_DEVICE_ORDER=PCI_BUS_ID, or every GPU the same
// model, where FASTEST_FIRST cannot reorder them), else full UUIDs with a
// note, so that `CUDA_VISIBLE_DEVICES=$(gpupin pick)` is never misnumbered.
DeviceIds PickIds(const std::vector<uint32_t>& chosen_gpu_indices, const std::vector<Gpu>& gpus,
                  bool uuids, const std::optional<std::string>& reader_device_order);

}  // namespace gpupin
