// CUDA's own FASTEST_FIRST numbering of this machine's GPUs, as a probe of
// the driver found it (sys/cuda_probe.h), kept in the state directory so
// that one probe serves every command until the machine changes
// (doc/state-dir.md); or, when the probe gave no order, why and when, so
// that later commands guess at once instead of waiting for the driver
// again. Pure: plain values in, plain values out.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/error.h"
#include "core/gpu.h"
#include "core/probe_comparison.h"

namespace gpupin {

inline constexpr int kDriverOrderFormatVersion = 2;

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

// A probe that gave no order: the driver hung until the probe was killed,
// cuInit failed, the probe crashed, or the driver listed a device NVML does
// not. Kept so that a driver that hangs costs one time-out every
// kProbeRetryAfterMs, not one per command.
struct DriverOrderFailure {
  DriverOrderKey key;
  int64_t failed_unix_ms = 0;  // when the probe ended, wall clock
  std::string reason;          // one printable line (core/printable.h), at most 1024 bytes
  friend bool operator==(const DriverOrderFailure&, const DriverOrderFailure&) = default;
};

// What cuda-order-<uid>.json keeps for its key: the order, or a failure.
using KeptDriverOrder = std::variant<DriverOrder, DriverOrderFailure>;

const DriverOrderKey& KeyOf(const KeptDriverOrder& kept);

// A failure stands, and the driver is not asked again, for this long after
// it was recorded: long enough that a hung driver costs at most one
// time-out per user every ten minutes, short enough that one that was only
// slow (still loading after boot, a card being reset) is not given up on
// for the rest of the boot. A success stands while its key matches.
inline constexpr int64_t kProbeRetryAfterMs = int64_t{10} * 60 * 1000;

// Whether `failure` stands at now_unix_ms: from failed_unix_ms until
// kProbeRetryAfterMs later. A failure dated after now (the clock was set
// back) does not stand, so no record can hold for longer than that.
bool FailureStands(const DriverOrderFailure& failure, int64_t now_unix_ms);

// The key of this machine now: the UUIDs of `gpus` that NVML could read.
DriverOrderKey MachineKey(std::string boot_id, std::string driver_version,
                          const std::vector<Gpu>& gpus);

// The order a probe run with every CUDA_* variable unset found, by the
// physical GPUs of `gpus` (a MIG instance stands for its card, which keeps
// the place of its first instance). nullopt when the probe gave no list
// (status not kOk), listed a device that is none of `gpus` or theirs (it
// answered about another machine than NVML's), or left out a card that
// answers NVML and is not in MIG mode (it numbered only part of the
// machine, as CUDA does once it lists a MIG instance).
std::optional<DriverOrder> DriverOrderFromProbe(DriverOrderKey key, const ProbeResult& probe,
                                                const std::vector<Gpu>& gpus);

// Why `probe` gave no order for `gpus` (DriverOrderFromProbe gave
// nullopt), as the failure to keep, dated now_unix_ms; the reason is made
// one printable line of at most 400 bytes.
DriverOrderFailure FailureFromProbe(DriverOrderKey key, const ProbeResult& probe,
                                    const std::vector<Gpu>& gpus, int64_t now_unix_ms);

// Whether a probe that gave no order is worth keeping: not when libcuda
// could not be loaded (kUnavailable), which the next command finds out
// again at once without waiting for any driver.
bool KeepsFailure(const ProbeResult& probe);

// Why a kept order is no order of `gpus`: it leaves out a card the driver
// lists (one that answers, not in MIG mode), as no probe's order does. A
// file edited by hand, or written by another program, can.
std::optional<std::string> OrderGap(const DriverOrder& order, const std::vector<Gpu>& gpus);

// NVML indices of `gpus` in the order's sequence, for
// ResolveVisibleDevicesWithOrder. Only meaningful when the order's key is
// the machine's (order.key == MachineKey(...)).
std::vector<uint32_t> FastestFirstIndices(const DriverOrder& order, const std::vector<Gpu>& gpus);

// The file format (doc/state-dir.md). The reader takes another user's
// file as hostile: a missing or mistyped field, an unknown version, more
// than 1024 GPUs, a UUID that is not UUID-shaped, an order that names a
// card outside the key or twice, both an order and a failure or neither,
// a negative time, or a reason that is not one printable line of at most
// 1024 bytes is an error (the file is ignored).
std::string KeptDriverOrderToJson(const KeptDriverOrder& kept);
Result<KeptDriverOrder> KeptDriverOrderFromJson(std::string_view text);

}  // namespace gpupin
