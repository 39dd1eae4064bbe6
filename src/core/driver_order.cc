#include "core/driver_order.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <nlohmann/json.hpp>

#include "core/json_fields.h"
#include "core/printable.h"

namespace gpupin {
namespace {

// Far above any server's cards; bounds what a planted file can make us read.
constexpr size_t kMaxGpus = 1024;
// A reason is made at most 400 bytes (and "..."); the reader takes up to
// 1024, so that no reason the writer keeps is refused.
constexpr size_t kKeptReasonBytes = 400;
constexpr size_t kMaxReasonBytes = 1024;

// The physical GPU a probed device is: the card itself, or the card of a
// MIG instance. nullptr when it is none of `gpus`.
const Gpu* CardOf(const ProbedDevice& device, const std::vector<Gpu>& gpus) {
  if (!device.uuid) return nullptr;
  for (const Gpu& gpu : gpus) {
    if (!gpu.uuid.empty() && SameCudaUuid(*device.uuid, gpu.uuid)) return &gpu;
    for (const MigDevice& mig : gpu.mig_devices) {
      if (!mig.uuid.empty() && SameCudaUuid(*device.uuid, mig.uuid)) return &gpu;
    }
  }
  return nullptr;
}

bool Contains(const std::vector<std::string>& values, const std::string& value) {
  return std::find(values.begin(), values.end(), value) != values.end();
}

DriverOrderKey ReadKey(FieldReader& fields) {
  DriverOrderKey key;
  key.boot_id = fields.String("boot_id");
  key.driver_version = fields.String("driver_version");
  key.gpu_uuids = fields.StringArray("gpu_uuids");
  std::vector<std::string>& uuids = key.gpu_uuids;
  if (!fields.error() && (uuids.size() > kMaxGpus ||
                          !std::all_of(uuids.begin(), uuids.end(),
                                       [](const std::string& u) { return IsGpuUuidShaped(u); }))) {
    fields.Fail("gpu_uuids", "must be at most 1024 GPU UUIDs");
  }
  // Kept sorted and unique whatever the writer did, so that the key
  // compares equal to the machine's exactly when the sets are equal.
  std::sort(uuids.begin(), uuids.end());
  uuids.erase(std::unique(uuids.begin(), uuids.end()), uuids.end());
  return key;
}

DriverOrder ReadOrder(FieldReader& fields, DriverOrderKey key) {
  DriverOrder order{std::move(key), fields.StringArray("fastest_first_uuids")};
  const std::vector<std::string>& uuids = order.key.gpu_uuids;
  std::vector<std::string> seen;
  for (const std::string& uuid : order.fastest_first_uuids) {
    if (fields.error()) break;
    if (!std::binary_search(uuids.begin(), uuids.end(), uuid) || Contains(seen, uuid))
      fields.Fail("fastest_first_uuids", "must name each of gpu_uuids at most once");
    seen.push_back(uuid);
  }
  return order;
}

DriverOrderFailure ReadFailure(FieldReader& fields, DriverOrderKey key) {
  FieldReader failed(fields.Object("probe_failed"), "probe_failed.");
  DriverOrderFailure failure{std::move(key), 0, {}};
  failure.failed_unix_ms =
      static_cast<int64_t>(failed.Unsigned("unix_ms", std::numeric_limits<int64_t>::max()));
  failure.reason = failed.String("reason");
  if (!failed.error() && Printable(failure.reason, kMaxReasonBytes) != failure.reason)
    failed.Fail("reason", "must be one printable line of at most 1024 bytes");
  if (failed.error()) fields.Fail("probe_failed", "is invalid: " + *failed.error());
  return failure;
}

}  // namespace

const DriverOrderKey& KeyOf(const KeptDriverOrder& kept) {
  return std::visit([](const auto& record) -> const DriverOrderKey& { return record.key; }, kept);
}

bool FailureStands(const DriverOrderFailure& failure, int64_t now_unix_ms) {
  // Subtracted only when now is at or after the failure: between 0 and now.
  return now_unix_ms >= failure.failed_unix_ms &&
         now_unix_ms - failure.failed_unix_ms < kProbeRetryAfterMs;
}

DriverOrderKey MachineKey(std::string boot_id, std::string driver_version,
                          const std::vector<Gpu>& gpus) {
  DriverOrderKey key{std::move(boot_id), std::move(driver_version), {}};
  for (const Gpu& gpu : gpus) {
    if (!gpu.uuid.empty()) key.gpu_uuids.push_back(gpu.uuid);
  }
  std::sort(key.gpu_uuids.begin(), key.gpu_uuids.end());
  key.gpu_uuids.erase(std::unique(key.gpu_uuids.begin(), key.gpu_uuids.end()), key.gpu_uuids.end());
  return key;
}

namespace {

// A card that answers and is a CUDA device itself (not in MIG mode): the
// driver's order lists it.
bool CudaListsWhole(const Gpu& gpu) {
  return !gpu.uuid.empty() && gpu.healthy() && !gpu.mig_enabled.value_or(false);
}

// Why the devices a probe that ended well listed are no order of `gpus`, or
// nullopt when they are one: each is one of `gpus` (or theirs), and every
// card that answers and is a CUDA device itself (not in MIG mode) is there.
// CUDA leaves whole GPUs out of its enumeration once it lists a MIG
// instance (facts file §1.4): such a list numbers only part of the machine.
std::optional<std::string> ListingGap(const ProbeResult& probe, const std::vector<Gpu>& gpus) {
  std::vector<const Gpu*> listed;
  for (const ProbedDevice& device : probe.devices) {
    const Gpu* card = CardOf(device, gpus);
    if (card == nullptr) return "the CUDA driver listed a device NVML does not";
    listed.push_back(card);
  }
  for (const Gpu& gpu : gpus) {
    if (!CudaListsWhole(gpu)) continue;
    if (std::find(listed.begin(), listed.end(), &gpu) != listed.end()) continue;
    const bool mig_listed = std::any_of(listed.begin(), listed.end(), [](const Gpu* card) {
      return card->mig_enabled.value_or(false);
    });
    return fmt::format(
        "the CUDA driver did not list GPU {} ({}){}", gpu.index, gpu.uuid,
        mig_listed ? ": CUDA leaves whole GPUs out where it lists a MIG instance" : "");
  }
  return std::nullopt;
}

}  // namespace

std::optional<DriverOrder> DriverOrderFromProbe(DriverOrderKey key, const ProbeResult& probe,
                                                const std::vector<Gpu>& gpus) {
  if (probe.status != ProbeStatus::kOk || ListingGap(probe, gpus)) return std::nullopt;
  DriverOrder order{std::move(key), {}};
  for (const ProbedDevice& device : probe.devices) {
    const Gpu* card = CardOf(device, gpus);
    if (!Contains(order.fastest_first_uuids, card->uuid))
      order.fastest_first_uuids.push_back(card->uuid);
  }
  return order;
}

DriverOrderFailure FailureFromProbe(DriverOrderKey key, const ProbeResult& probe,
                                    const std::vector<Gpu>& gpus, int64_t now_unix_ms) {
  // A probe that did not end well says why in its detail.
  const std::string reason =
      probe.status == ProbeStatus::kOk ? ListingGap(probe, gpus).value_or("") : probe.detail;
  return {std::move(key), now_unix_ms, Printable(reason, kKeptReasonBytes)};
}

std::optional<std::string> OrderGap(const DriverOrder& order, const std::vector<Gpu>& gpus) {
  for (const Gpu& gpu : gpus) {
    if (CudaListsWhole(gpu) && !Contains(order.fastest_first_uuids, gpu.uuid))
      return fmt::format("it leaves out GPU {} ({})", gpu.index, gpu.uuid);
  }
  return std::nullopt;
}

bool KeepsFailure(const ProbeResult& probe) { return probe.status != ProbeStatus::kUnavailable; }

std::vector<uint32_t> FastestFirstIndices(const DriverOrder& order, const std::vector<Gpu>& gpus) {
  std::vector<uint32_t> indices;
  for (const std::string& uuid : order.fastest_first_uuids) {
    auto gpu = std::find_if(gpus.begin(), gpus.end(), [&](const Gpu& g) { return g.uuid == uuid; });
    if (gpu != gpus.end()) indices.push_back(gpu->index);
  }
  return indices;
}

std::string KeptDriverOrderToJson(const KeptDriverOrder& kept) {
  const DriverOrderKey& key = KeyOf(kept);
  nlohmann::ordered_json json = {
      {"format_version", kDriverOrderFormatVersion},
      {"boot_id", key.boot_id},
      {"driver_version", key.driver_version},
      {"gpu_uuids", key.gpu_uuids},
  };
  if (const auto* order = std::get_if<DriverOrder>(&kept)) {
    json["fastest_first_uuids"] = order->fastest_first_uuids;
  } else {
    const auto& failure = std::get<DriverOrderFailure>(kept);
    json["probe_failed"] = nlohmann::ordered_json::object(
        {{"unix_ms", failure.failed_unix_ms}, {"reason", failure.reason}});
  }
  // NVML's version string is the driver's to choose: bytes that are not
  // UTF-8 are replaced rather than thrown on.
  return json.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

Result<KeptDriverOrder> KeptDriverOrderFromJson(std::string_view text) {
  Result<nlohmann::json> json =
      ParseVersionedObject(text, kDriverOrderFormatVersion, "driver order");
  if (!json) return json.error();
  FieldReader fields(*json);
  DriverOrderKey key = ReadKey(fields);
  KeptDriverOrder kept;
  if (json->contains("probe_failed")) {
    if (json->contains("fastest_first_uuids"))
      fields.Fail("probe_failed", "cannot stand beside fastest_first_uuids");
    kept = ReadFailure(fields, std::move(key));
  } else {
    kept = ReadOrder(fields, std::move(key));
  }
  if (fields.error()) return MakeError(ExitCode::kError, "driver order: " + *fields.error());
  return kept;
}

}  // namespace gpupin
