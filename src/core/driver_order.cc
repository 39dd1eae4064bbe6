#include "core/driver_order.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/json_fields.h"

namespace gpupin {
namespace {

// Far above any server's cards; bounds what a planted file can make us read.
constexpr size_t kMaxGpus = 1024;

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

}  // namespace

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

std::optional<DriverOrder> DriverOrderFromProbe(DriverOrderKey key, const ProbeResult& probe,
                                                const std::vector<Gpu>& gpus) {
  if (probe.status != ProbeStatus::kOk) return std::nullopt;
  DriverOrder order{std::move(key), {}};
  for (const ProbedDevice& device : probe.devices) {
    const Gpu* card = CardOf(device, gpus);
    if (card == nullptr) return std::nullopt;
    if (!Contains(order.fastest_first_uuids, card->uuid))
      order.fastest_first_uuids.push_back(card->uuid);
  }
  return order;
}

std::vector<uint32_t> FastestFirstIndices(const DriverOrder& order, const std::vector<Gpu>& gpus) {
  std::vector<uint32_t> indices;
  for (const std::string& uuid : order.fastest_first_uuids) {
    auto gpu = std::find_if(gpus.begin(), gpus.end(), [&](const Gpu& g) { return g.uuid == uuid; });
    if (gpu != gpus.end()) indices.push_back(gpu->index);
  }
  return indices;
}

std::string DriverOrderToJson(const DriverOrder& order) {
  nlohmann::ordered_json json = {
      {"format_version", kDriverOrderFormatVersion},      {"boot_id", order.key.boot_id},
      {"driver_version", order.key.driver_version},       {"gpu_uuids", order.key.gpu_uuids},
      {"fastest_first_uuids", order.fastest_first_uuids},
  };
  // NVML's version string is the driver's to choose: bytes that are not
  // UTF-8 are replaced rather than thrown on.
  return json.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

Result<DriverOrder> DriverOrderFromJson(std::string_view text) {
  Result<nlohmann::json> json =
      ParseVersionedObject(text, kDriverOrderFormatVersion, "driver order");
  if (!json) return json.error();
  FieldReader fields(*json);
  DriverOrder order;
  order.key.boot_id = fields.String("boot_id");
  order.key.driver_version = fields.String("driver_version");
  order.key.gpu_uuids = fields.StringArray("gpu_uuids");
  order.fastest_first_uuids = fields.StringArray("fastest_first_uuids");
  std::vector<std::string>& uuids = order.key.gpu_uuids;
  if (!fields.error() && (uuids.size() > kMaxGpus ||
                          !std::all_of(uuids.begin(), uuids.end(),
                                       [](const std::string& u) { return IsGpuUuidShaped(u); }))) {
    fields.Fail("gpu_uuids", "must be at most 1024 GPU UUIDs");
  }
  // Kept sorted and unique whatever the writer did, so that the key
  // compares equal to the machine's exactly when the sets are equal.
  std::sort(uuids.begin(), uuids.end());
  uuids.erase(std::unique(uuids.begin(), uuids.end()), uuids.end());
  std::vector<std::string> seen;
  for (const std::string& uuid : order.fastest_first_uuids) {
    if (fields.error()) break;
    if (!std::binary_search(uuids.begin(), uuids.end(), uuid) || Contains(seen, uuid))
      fields.Fail("fastest_first_uuids", "must name each of gpu_uuids at most once");
    seen.push_back(uuid);
  }
  if (fields.error()) return MakeError(ExitCode::kError, "driver order: " + *fields.error());
  return order;
}

}  // namespace gpupin
