// How the CUDA runtime turns CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER into
// the ordinals cuda:0, cuda:1, ... (facts file §1). Pure: no environment is
// read here; callers pass the values.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/gpu.h"

namespace gpupin {

enum class DeviceOrder { kFastestFirst, kPciBusId };

// The environment that decides visibility, as plain values. An unset
// variable is std::nullopt; set-but-empty is "".
struct VisibilityEnv {
  std::optional<std::string> cuda_visible_devices;
  std::optional<std::string> cuda_device_order;
  std::optional<std::string> nvidia_visible_devices;  // container runtime
  std::optional<std::string> slurm_job_gpus;
  std::optional<std::string> slurm_step_gpus;
  std::optional<std::string> gpu_device_ordinal;
  friend bool operator==(const VisibilityEnv&, const VisibilityEnv&) = default;
};

// One device CUDA would enumerate.
struct VisibleDevice {
  int ordinal = 0;                    // the N of cuda:N
  uint32_t gpu_index = 0;             // NVML index of the physical GPU
  std::optional<uint32_t> mig_index;  // set when the device is a MIG instance of that GPU
  std::string uuid;                   // GPU-... or MIG-...
  std::string token;  // the CUDA_VISIBLE_DEVICES entry that named it ("" when unset)
  // Why CUDA reads only part of that entry (`0-2` is index 0: no ranges);
  // empty when the entry is read whole.
  std::string read_in_part;
};

enum class DropReason {
  kInvalidToken,   // not a number and not a UUID
  kNoSuchIndex,    // index >= number of devices
  kNoSuchUuid,     // names no GPU or MIG instance
  kAmbiguousUuid,  // prefix of several UUIDs
  kDuplicate,      // names a device already listed: CUDA then sees no device at all
  kAfterInvalid,   // CUDA stops at the first invalid entry
  kMigLimit,       // one MIG instance per process; no mixing MIG and whole GPUs
  kEmptyEntry,     // ",," or a trailing comma
  kNoDevice,       // names a GPU in MIG mode that has no MIG instance: no CUDA device
  kListVoided,     // valid, but a duplicate elsewhere in the list leaves CUDA no device
};

struct DroppedEntry {
  // 0-based position in the list; -1 when CUDA_VISIBLE_DEVICES is unset and
  // the device was dropped from CUDA's own enumeration (token is then "").
  int position = 0;
  std::string token;  // the entry as written, whitespace trimmed
  std::string uuid;   // the device the entry named; "" when it named none
  DropReason reason = DropReason::kInvalidToken;
  std::string detail;  // one human line: why, e.g. "index 7 but only 4 GPUs"
};

struct Resolution {
  std::vector<VisibleDevice> visible;
  std::vector<DroppedEntry> dropped;
  DeviceOrder order = DeviceOrder::kFastestFirst;
  // True when integer entries were mapped under FASTEST_FIRST on a machine
  // with mixed models: CUDA's heuristic is not public, so the mapping is a
  // guess (compute capability desc, cores desc, PCI order) and says so.
  bool order_is_guess = false;
  // True when integer entries were mapped under FASTEST_FIRST by an order
  // the caller knew (ResolveVisibleDevicesWithOrder: the driver's own).
  bool order_from_driver = false;
  std::vector<std::string> notes;  // further caveats, one line each

  // A device is named twice: cuInit then fails with CUDA_ERROR_INVALID_DEVICE
  // (seen with driver 580), and the list leaves no device at all.
  bool names_a_device_twice() const {
    return std::any_of(dropped.begin(), dropped.end(),
                       [](const DroppedEntry& d) { return d.reason == DropReason::kDuplicate; });
  }
};

// Resolves `env` against the physical GPUs (NVML order, with MIG instances).
// Never fails: every entry CUDA would not use is in `dropped` with a reason,
// and every visible device came from an entry before the first invalid one.
Resolution ResolveVisibleDevices(const std::vector<Gpu>& gpus, const VisibilityEnv& env);

// The same, with CUDA's true FASTEST_FIRST order known (NVML indices, fastest
// first), e.g. from a simulated driver or a probe: nothing is guessed then.
// NVML indices missing from the list follow the listed ones in PCI order.
Resolution ResolveVisibleDevicesWithOrder(const std::vector<Gpu>& gpus, const VisibilityEnv& env,
                                          std::span<const uint32_t> fastest_first_nvml_indices);

// The variables VisibilityEnv holds, each as `lookup` finds it by name
// (nullopt: unset).
VisibilityEnv VisibilityEnvFrom(
    const std::function<std::optional<std::string>(const char* name)>& lookup);

// Picks the variables VisibilityEnv holds out of a full environment (any map
// of NAME to value); a name not in the map is unset.
VisibilityEnv VisibilityEnvFromMap(const std::map<std::string, std::string>& environment);

// The index that names the GPU of NVML index `nvml_index` in a
// CUDA_VISIBLE_DEVICES read with CUDA_DEVICE_ORDER=PCI_BUS_ID: its place in
// PCI bus order among `gpus` (all of the machine's), which NVML's own
// numbering need not follow. nullopt when `gpus` has no such GPU.
std::optional<uint32_t> PciBusOrdinal(const std::vector<Gpu>& gpus, uint32_t nvml_index);

// Whether CUDA numbers the cards in PCI bus order because the environment
// says so (CUDA_DEVICE_ORDER=PCI_BUS_ID), whatever the models; otherwise its
// FASTEST_FIRST default applies.
bool FollowsPciBusOrder(const VisibilityEnv& env);

// Where the resolution's cuda:N come from, as --json says it: "guess"
// (order_is_guess), "driver" (order_from_driver), else "pci_bus_id": PCI
// order, which CUDA_DEVICE_ORDER=PCI_BUS_ID and a single model give, or
// no order was needed.
const char* CudaOrderSource(const Resolution& resolution);

// A short user-facing text for a drop reason ("invalid entry", ...).
const char* DropReasonName(DropReason reason);

}  // namespace gpupin
