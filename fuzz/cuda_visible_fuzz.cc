// Feeds arbitrary CUDA_VISIBLE_DEVICES / CUDA_DEVICE_ORDER values to the
// resolver against a fixed machine (mixed models, MIG with and without
// instances, UUIDs sharing prefixes) and traps when an invariant breaks.
//
// Input: lines. Line 1 is CUDA_VISIBLE_DEVICES (an empty input leaves it
// unset), line 2 CUDA_DEVICE_ORDER, then NVIDIA_VISIBLE_DEVICES,
// SLURM_JOB_GPUS and GPU_DEVICE_ORDINAL; a missing line is unset.
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/cuda_visible.h"

namespace gpupin {
namespace {

void Check(bool condition) {
  if (!condition) __builtin_trap();
}

Gpu MakeGpu(uint32_t index, std::string uuid, std::string name, ComputeCapability cc,
            uint32_t cores) {
  Gpu gpu;
  gpu.index = index;
  gpu.uuid = std::move(uuid);
  gpu.pci_bus_id = "00000000:" + std::to_string(17 + index) + ":00.0";
  gpu.name = std::move(name);
  gpu.compute_capability = cc;
  gpu.cores = cores;
  gpu.mig_enabled = false;
  return gpu;
}

MigDevice MakeMig(uint32_t slot, std::string uuid, uint32_t gi, uint32_t ci) {
  MigDevice mig;
  mig.index = slot;
  mig.uuid = std::move(uuid);
  mig.gpu_instance_id = gi;
  mig.compute_instance_id = ci;
  return mig;
}

const std::vector<Gpu>& Machine() {
  static const std::vector<Gpu> gpus = [] {
    std::vector<Gpu> g = {
        MakeGpu(0, "GPU-8932f937-d72c-4106-c12f-20bd9faed9f6", "Tesla T4", {7, 5}, 2560),
        MakeGpu(1, "GPU-8932f938-0000-4106-c12f-20bd9faed9f6", "A100", {8, 0}, 6912),
        MakeGpu(2, "GPU-1a2b3c4d-1111-2222-3333-444455556666", "Tesla V100", {7, 0}, 5120),
        MakeGpu(3, "GPU-1a2b9999-1111-2222-3333-444455556666", "A100", {8, 0}, 6912),
        MakeGpu(4, "GPU-ffff0000-1111-2222-3333-444455556666", "A100", {8, 0}, 6912),
    };
    g[1].mig_enabled = true;
    g[1].mig_devices = {MakeMig(0, "MIG-c788539f-c1ea-5a36-8b4d-9b07d024b1bb", 1, 0),
                        MakeMig(1, "MIG-c7885400-c1ea-5a36-8b4d-9b07d024b1bb", 2, 0)};
    g[3].mig_enabled = true;  // MIG mode, no instance
    return g;
  }();
  return gpus;
}

std::string_view Trim(std::string_view s) {
  constexpr std::string_view kSpace = " \t\n\r\f\v";
  const size_t first = s.find_first_not_of(kSpace);
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(kSpace) - first + 1);
}

std::vector<std::string> Split(std::string_view s, char separator) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    const size_t at = s.find(separator, start);
    parts.emplace_back(s.substr(start, at - start));
    if (at == std::string_view::npos) return parts;
    start = at + 1;
  }
}

bool IsCut(DropReason reason) {
  return reason == DropReason::kInvalidToken || reason == DropReason::kNoSuchIndex ||
         reason == DropReason::kNoSuchUuid || reason == DropReason::kAmbiguousUuid ||
         reason == DropReason::kEmptyEntry;
}

// The visible device names a device of the machine, consistently.
void CheckExists(const VisibleDevice& device) {
  for (const Gpu& gpu : Machine()) {
    if (gpu.index != device.gpu_index) continue;
    if (!device.mig_index) {
      Check(device.uuid == gpu.uuid && !gpu.mig_enabled.value_or(false));
      return;
    }
    for (const MigDevice& mig : gpu.mig_devices) {
      if (mig.index == *device.mig_index) {
        Check(device.uuid == mig.uuid);
        return;
      }
    }
  }
  Check(false);
}

void CheckInvariants(const VisibilityEnv& env, const Resolution& r) {
  std::set<std::string> uuids;
  bool has_mig = false;
  for (size_t i = 0; i < r.visible.size(); ++i) {
    const VisibleDevice& device = r.visible[i];
    Check(device.ordinal == static_cast<int>(i));
    Check(uuids.insert(device.uuid).second);
    CheckExists(device);
    has_mig = has_mig || device.mig_index.has_value();
  }
  Check(!has_mig || r.visible.size() == 1);

  if (!env.cuda_visible_devices) {
    for (const DroppedEntry& d : r.dropped)
      Check(d.position == -1 && d.reason == DropReason::kMigLimit);
    for (const VisibleDevice& device : r.visible) Check(device.token.empty());
    return;
  }
  if (env.cuda_visible_devices->empty()) {
    Check(r.visible.empty() && r.dropped.empty());
    return;
  }

  // Every entry is either dropped once or visible; visible ones keep list order.
  const std::vector<std::string> entries = Split(*env.cuda_visible_devices, ',');
  std::vector<const DroppedEntry*> by_position(entries.size(), nullptr);
  int cuts = 0;
  int duplicates = 0;
  for (const DroppedEntry& d : r.dropped) {
    Check(d.position >= 0 && static_cast<size_t>(d.position) < entries.size());
    Check(by_position[d.position] == nullptr);
    Check(d.token == Trim(entries[d.position]));
    Check(!d.detail.empty());
    by_position[d.position] = &d;
    cuts += IsCut(d.reason) ? 1 : 0;
    duplicates += d.reason == DropReason::kDuplicate ? 1 : 0;
  }
  Check(cuts <= 1 && duplicates <= 1);
  Check(duplicates == 0 || r.visible.empty());

  size_t next_visible = 0;
  bool after_cut = false;
  for (size_t i = 0; i < entries.size(); ++i) {
    const DroppedEntry* d = by_position[i];
    // A prefix cut: everything after the first invalid entry is dropped as such.
    Check(after_cut == (d != nullptr && d->reason == DropReason::kAfterInvalid));
    if (d != nullptr) {
      after_cut = after_cut || IsCut(d->reason);
      continue;
    }
    Check(next_visible < r.visible.size());
    Check(r.visible[next_visible].token == Trim(entries[i]));
    ++next_visible;
  }
  Check(next_visible == r.visible.size());
}

}  // namespace
}  // namespace gpupin

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gpupin;
  VisibilityEnv env;
  if (size > 0) {
    const std::vector<std::string> lines =
        Split(std::string_view(reinterpret_cast<const char*>(data), size), '\n');
    std::optional<std::string>* fields[] = {&env.cuda_visible_devices, &env.cuda_device_order,
                                            &env.nvidia_visible_devices, &env.slurm_job_gpus,
                                            &env.gpu_device_ordinal};
    for (size_t i = 0; i < lines.size() && i < std::size(fields); ++i) *fields[i] = lines[i];
  }
  CheckInvariants(env, ResolveVisibleDevices(Machine(), env));
  static const uint32_t kTrueOrder[] = {2, 4, 0, 1, 3};
  CheckInvariants(env, ResolveVisibleDevicesWithOrder(Machine(), env, kTrueOrder));
  return 0;
}
