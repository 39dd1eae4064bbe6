// CUDA's own FASTEST_FIRST numbering of this machine's GPUs, as a probe of
// the driver found it (sys/cuda_probe.h), kept in the state directory so
// that one probe serves every command until the machine changes
// (doc/state-dir.md). Pure: plain values in, plain values out.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "core/gpu.h"
#include "core/probe_comparison.h"

namespace gpupin {

inline constexpr int kDriverOrderFormatVersion = 1;

// What the order depends on: the boot (the kernel's boot id), the driver
// (NVML's version string) and the GPUs present (their UUIDs, sorted). The
// driver numbers the same cards the same way while all three stay.
struct DriverOrderKey {
  std::string boot_id;
  std::string driver_version;
  std::vector<std::string> gpu_uuids;  // sorted, each once
  friend bool operator==(const DriverOrderKey&, const DriverOrderKey&) = default;
};

struct DriverOrder {
  DriverOrderKey key;
  // The physical GPUs' UUIDs in the order CUDA enumerates them with
  // CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER unset: each one of
  // key.gpu_uuids at most once (a card the driver lists no device for,
  // a MIG card without instances, is left out).
  std::vector<std::string> fastest_first_uuids;
  friend bool operator==(const DriverOrder&, const DriverOrder&) = default;
};

// The key of this machine now: the UUIDs of `gpus` that NVML could read.
DriverOrderKey MachineKey(std::string boot_id, std::string driver_version,
                          const std::vector<Gpu>& gpus);

// The order a probe run with every CUDA_* variable unset found, by the
// physical GPUs of `gpus` (a MIG instance stands for its card, which keeps
// the place of its first instance). nullopt when the probe gave no list
// (status not kOk) or listed a device that is none of `gpus` or theirs:
// then it answered about another machine than NVML's.
std::optional<DriverOrder> DriverOrderFromProbe(DriverOrderKey key, const ProbeResult& probe,
                                                const std::vector<Gpu>& gpus);

// NVML indices of `gpus` in the order's sequence, for
// ResolveVisibleDevicesWithOrder. Only meaningful when the order's key is
// the machine's (order.key == MachineKey(...)).
std::vector<uint32_t> FastestFirstIndices(const DriverOrder& order, const std::vector<Gpu>& gpus);

// The file format (doc/state-dir.md). The reader takes another user's
// file as hostile: a missing or mistyped field, an unknown version, more
// than 1024 GPUs, a UUID that is not UUID-shaped, or an order that names a
// card outside the key or twice is an error (the file is ignored).
std::string DriverOrderToJson(const DriverOrder& order);
Result<DriverOrder> DriverOrderFromJson(std::string_view text);

}  // namespace gpupin
