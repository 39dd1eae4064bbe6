#include "core/gpu_use.h"

#include <algorithm>
#include <map>
#include <set>

#include "core/gpu_process_walk.h"

namespace gpupin {
namespace {

std::optional<int> OrdinalOf(const Resolution& resolution, uint32_t gpu_index,
                             std::optional<uint32_t> mig_index) {
  for (const VisibleDevice& device : resolution.visible) {
    if (device.gpu_index != gpu_index) continue;
    // A use seen only on the parent GPU counts for any of its visible instances.
    if (!mig_index || device.mig_index == mig_index) return device.ordinal;
  }
  return std::nullopt;
}

}  // namespace

std::vector<GpuUse> FindGpuUses(const Inventory& inventory, const Resolution& resolution,
                                const std::function<bool(uint32_t pid)>& belongs,
                                const OwnResolution& own_resolution) {
  std::map<uint32_t, std::optional<Resolution>> own;
  auto own_of = [&](uint32_t pid) -> const std::optional<Resolution>& {
    if (!own.contains(pid)) own[pid] = own_resolution ? own_resolution(pid) : std::nullopt;
    return own[pid];
  };
  auto use = [&](uint32_t pid, uint32_t gpu_index, std::optional<uint32_t> mig_index,
                 const std::string& uuid, std::optional<uint64_t> bytes) {
    const std::optional<Resolution>& mine = own_of(pid);
    return GpuUse{pid,
                  gpu_index,
                  mig_index,
                  uuid,
                  bytes,
                  OrdinalOf(mine ? *mine : resolution, gpu_index, mig_index),
                  mine.has_value()};
  };
  std::vector<GpuUse> uses;
  for (const Gpu& gpu : inventory.gpus) {
    ForEachGpuProcess(gpu, [&](const GpuProcess& process, const MigDevice* mig) {
      if (!belongs(process.pid)) return;
      uses.push_back(use(process.pid, gpu.index,
                         mig ? std::optional<uint32_t>(mig->index) : std::nullopt,
                         mig ? mig->uuid : gpu.uuid, process.used_memory_bytes));
    });
  }
  return uses;
}

std::vector<uint32_t> GpusUsedButNotVisible(const std::vector<GpuUse>& uses) {
  std::set<uint32_t> gpus;
  for (const GpuUse& use : uses) {
    if (!use.cuda_ordinal) gpus.insert(use.gpu_index);
  }
  return {gpus.begin(), gpus.end()};
}

}  // namespace gpupin
