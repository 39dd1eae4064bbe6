#include "out/map_output.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/printable.h"
#include "core/units.h"
#include "out/inventory_json.h"
#include "out/json_value.h"
#include "out/table.h"

namespace gpupin {
namespace {

using Json = nlohmann::ordered_json;

// The examined environment can be another user's process (--pid): its
// values, and the notes and dropped entries that quote them, are shown
// through Printable, whole.
std::string Quoted(const std::optional<std::string>& value) {
  return value ? fmt::format("\"{}\"", PrintableWhole(*value)) : "unset";
}

const char* OrderName(DeviceOrder order) {
  return order == DeviceOrder::kPciBusId ? "PCI_BUS_ID" : "FASTEST_FIRST";
}

const char* ProbeStatusId(ProbeStatus status) {
  switch (status) {
    case ProbeStatus::kOk:
      return "ok";
    case ProbeStatus::kNoDevice:
      return "no_device";
    case ProbeStatus::kUnavailable:
      return "unavailable";
    case ProbeStatus::kInitFailed:
      return "init_failed";
    case ProbeStatus::kTimedOut:
      return "timed_out";
    case ProbeStatus::kCrashed:
      return "crashed";
  }
  return "unknown";
}

// The physical device a visible device or a probed UUID stands for.
struct DeviceFacts {
  std::string gpu;  // "2", or "0/mig1" for a MIG instance
  std::optional<uint32_t> gpu_index;
  std::optional<uint32_t> mig_index;
  std::string pci_bus_id;
  std::string name;
  // NVML's spelling, with the prefix (MIG- for an instance) that the
  // driver's 16 bytes do not carry.
  std::string uuid;
};

// Finds a device by UUID, as the model or the driver writes it.
std::optional<DeviceFacts> FindDevice(const Inventory& inventory, std::string_view uuid) {
  for (const Gpu& gpu : inventory.gpus) {
    if (SameCudaUuid(gpu.uuid, uuid))
      return DeviceFacts{
          std::to_string(gpu.index), gpu.index, std::nullopt, gpu.pci_bus_id, gpu.name, gpu.uuid};
    for (const MigDevice& mig : gpu.mig_devices) {
      if (SameCudaUuid(mig.uuid, uuid)) {
        return DeviceFacts{
            fmt::format("{}/mig{}", gpu.index, mig.index), gpu.index, mig.index, gpu.pci_bus_id,
            mig.name.empty() ? gpu.name : mig.name,        mig.uuid};
      }
    }
  }
  return std::nullopt;
}

DeviceFacts FactsOf(const Inventory& inventory, const VisibleDevice& device) {
  return FindDevice(inventory, device.uuid)
      .value_or(DeviceFacts{std::to_string(device.gpu_index), device.gpu_index, device.mig_index,
                            "", "", device.uuid});
}

std::vector<const VisibleDevice*> ShownDevices(const MapView& view) {
  std::vector<const VisibleDevice*> shown;
  for (const VisibleDevice& device : view.resolution.visible) {
    if (!view.asked_ordinal || device.ordinal == *view.asked_ordinal) shown.push_back(&device);
  }
  return shown;
}

std::string DeviceTable(const MapView& view) {
  Table table({{"CUDA"}, {"GPU", Align::kRight}, {"BUS ID"}, {"UUID"}, {"NAME"}});
  for (const VisibleDevice* device : ShownDevices(view)) {
    DeviceFacts facts = FactsOf(*view.inventory, *device);
    table.AddRow({fmt::format("cuda:{}", device->ordinal), facts.gpu, facts.pci_bus_id,
                  device->uuid, facts.name});
  }
  return table.Render();
}

std::string ProbeTable(const MapView& view) {
  Table table({{"CUDA"}, {"GPU", Align::kRight}, {"BUS ID"}, {"UUID"}, {"NAME"}});
  for (const ProbedDevice& device : view.probe->devices) {
    std::optional<DeviceFacts> facts =
        device.uuid ? FindDevice(*view.inventory, *device.uuid) : std::nullopt;
    table.AddRow({fmt::format("cuda:{}", device.ordinal), facts ? facts->gpu : "?",
                  device.pci_bus_id.value_or("?"), facts ? facts->uuid : device.uuid.value_or("?"),
                  device.name.value_or("?")});
  }
  return table.Render();
}

std::string RenderDropped(const MapView& view) {
  if (view.resolution.dropped.empty()) return "";
  std::string out = "dropped:\n";
  for (const DroppedEntry& entry : view.resolution.dropped) {
    // Positions count from 0, as the resolver's details do.
    std::string where = entry.position >= 0 ? fmt::format("entry {} \"{}\"", entry.position,
                                                          PrintableWhole(entry.token))
                                            : entry.uuid;
    out += fmt::format("  {}: {}{}\n", where, DropReasonName(entry.reason),
                       entry.detail.empty() ? "" : " (" + PrintableWhole(entry.detail) + ")");
  }
  return out;
}

std::string RenderNotes(const MapView& view) {
  std::string out;
  for (const std::string& note : view.resolution.notes)
    out += "note: " + PrintableWhole(note) + "\n";
  if (view.resolution.order_is_guess && !view.probe)
    out += "note: gpupin map --probe asks the driver itself\n";
  return out;
}

std::string RenderUses(const MapView& view, const Terminal& terminal) {
  std::string out;
  if (view.uses.empty()) {
    out += fmt::format("uses: no GPU (NVML lists neither pid {} nor its descendants)\n", *view.pid);
  } else {
    out += "uses:\n";
    for (const GpuUse& use : view.uses) {
      std::string device = use.mig_index
                               ? fmt::format("GPU {} MIG {}", use.gpu_index, *use.mig_index)
                               : fmt::format("GPU {}", use.gpu_index);
      std::string as = !use.cuda_ordinal ? terminal.Paint("not visible", Color::kRed)
                       : use.own_environment
                           ? fmt::format("cuda:{} under its own environment", *use.cuda_ordinal)
                           : fmt::format("cuda:{}", *use.cuda_ordinal);
      out += fmt::format(
          "  {} ({}): pid {}, {}\n", device, as, use.pid,
          use.used_memory_bytes ? FormatBytes(*use.used_memory_bytes) : "memory unknown");
    }
  }
  for (uint32_t gpu : view.unknown_process_gpus) {
    out += fmt::format("note: NVML does not list the processes of GPU {}; a use there is unknown\n",
                       gpu);
  }
  for (uint32_t gpu : GpusUsedButNotVisible(view.uses)) {
    out += terminal.Paint(
               fmt::format("warning: GPU {} is used but is not visible as any cuda:N under the "
                           "environment its process started with: CUDA_VISIBLE_DEVICES was "
                           "changed inside it (os.environ in Python, which /proc does not show), "
                           "or set after CUDA initialised (e.g. after import torch), when it no "
                           "longer counts",
                           gpu),
               Color::kYellow) +
           "\n";
  }
  return out;
}

std::string RenderProbe(const MapView& view, const Terminal& terminal) {
  const ProbeResult& probe = *view.probe;
  std::string version = probe.driver_version
                            ? fmt::format(", CUDA {}.{}", *probe.driver_version / 1000,
                                          *probe.driver_version % 1000 / 10)
                            : "";
  std::string out = fmt::format("driver ({}{}):\n", view.libcuda.value_or("libcuda"), version);
  if (probe.status == ProbeStatus::kOk) {
    out += ProbeTable(view);
  } else {
    out += fmt::format("  {}\n", probe.detail);
  }
  const ProbeComparison& comparison = *view.comparison;
  if (!comparison.comparable) {
    out += "model and driver: not compared (the driver gave no answer)\n";
  } else if (comparison.agree && comparison.unchecked.empty()) {
    out += terminal.Paint("model and driver agree", Color::kGreen) + "\n";
  } else if (comparison.agree) {
    out += terminal.Paint("model and driver agree on every card NVML can read; not checked:",
                          Color::kYellow) +
           "\n";
    for (const std::string& line : comparison.unchecked) out += "  " + line + "\n";
  } else {
    out += terminal.Paint("model and driver DISAGREE; the driver is right:", Color::kRed) + "\n";
    for (const std::string& line : comparison.differences) out += "  " + line + "\n";
  }
  return out;
}

Json DeviceJson(const Inventory& inventory, const VisibleDevice& device) {
  DeviceFacts facts = FactsOf(inventory, device);
  return Json{{"cuda_ordinal", device.ordinal},
              {"gpu_index", device.gpu_index},
              {"mig_index", OrNull(device.mig_index)},
              {"uuid", TextOrNull(device.uuid)},
              {"pci_bus_id", TextOrNull(facts.pci_bus_id)},
              {"name", TextOrNull(facts.name)},
              {"token", device.token}};
}

Json ProbeJson(const MapView& view) {
  const ProbeResult& probe = *view.probe;
  Json devices = Json::array();
  for (const ProbedDevice& device : probe.devices) {
    std::optional<DeviceFacts> facts =
        device.uuid ? FindDevice(*view.inventory, *device.uuid) : std::nullopt;
    devices.push_back({{"cuda_ordinal", device.ordinal},
                       {"gpu_index", facts ? OrNull(facts->gpu_index) : Json()},
                       {"mig_index", facts ? OrNull(facts->mig_index) : Json()},
                       {"uuid", facts ? Json(facts->uuid) : OrNull(device.uuid)},
                       {"pci_bus_id", OrNull(device.pci_bus_id)},
                       {"name", OrNull(device.name)},
                       {"errors", device.errors}});
  }
  const ProbeComparison& comparison = *view.comparison;
  return Json{{"libcuda", OrNull(view.libcuda)},
              {"status", ProbeStatusId(probe.status)},
              {"detail", probe.detail},
              {"cuda_error", OrNull(probe.cuda_error)},
              {"driver_version", OrNull(probe.driver_version)},
              {"devices", devices},
              {"agree", comparison.comparable ? Json(comparison.agree) : Json()},
              {"differences", comparison.differences},
              {"unchecked", comparison.unchecked}};
}

}  // namespace

const char* DropReasonId(DropReason reason) {
  switch (reason) {
    case DropReason::kInvalidToken:
      return "invalid_token";
    case DropReason::kNoSuchIndex:
      return "no_such_index";
    case DropReason::kNoSuchUuid:
      return "no_such_uuid";
    case DropReason::kAmbiguousUuid:
      return "ambiguous_uuid";
    case DropReason::kDuplicate:
      return "duplicate";
    case DropReason::kAfterInvalid:
      return "after_invalid";
    case DropReason::kMigLimit:
      return "mig_limit";
    case DropReason::kEmptyEntry:
      return "empty_entry";
    case DropReason::kNoDevice:
      return "no_device";
    case DropReason::kListVoided:
      return "list_voided";
  }
  return "unknown";
}

std::string RenderMap(const MapView& view, const Terminal& terminal) {
  std::string out =
      fmt::format("{}: CUDA_VISIBLE_DEVICES={}, CUDA_DEVICE_ORDER={}\n", view.environment_label,
                  Quoted(view.env.cuda_visible_devices), Quoted(view.env.cuda_device_order));
  if (view.resolution.visible.empty()) {
    out += terminal.Paint("CUDA sees no device", Color::kRed) + "\n";
  } else {
    out += DeviceTable(view);
  }
  if (!view.asked_ordinal) out += RenderDropped(view);
  out += RenderNotes(view);
  if (view.pid) out += RenderUses(view, terminal);
  if (view.probe) out += RenderProbe(view, terminal);
  return out;
}

Json MapToJson(const MapView& view) {
  Json devices = Json::array();
  for (const VisibleDevice* device : ShownDevices(view))
    devices.push_back(DeviceJson(*view.inventory, *device));
  Json dropped = Json::array();
  for (const DroppedEntry& entry : view.resolution.dropped) {
    dropped.push_back({{"position", entry.position},
                       {"token", entry.token},
                       {"uuid", TextOrNull(entry.uuid)},
                       {"reason", DropReasonId(entry.reason)},
                       {"detail", entry.detail}});
  }
  Json json{{"schema_version", kJsonSchemaVersion},
            {"environment", view.environment_label},
            {"pid", OrNull(view.pid)},
            {"cuda_visible_devices", OrNull(view.env.cuda_visible_devices)},
            {"cuda_device_order", OrNull(view.env.cuda_device_order)},
            {"order", OrderName(view.resolution.order)},
            {"cuda_order_is_guess", view.resolution.order_is_guess},
            {"cuda_order", CudaOrderSource(view.resolution)},
            {"devices", devices},
            {"dropped", dropped},
            {"notes", view.resolution.notes}};
  if (view.pid) {
    Json uses = Json::array();
    for (const GpuUse& use : view.uses) {
      uses.push_back({{"pid", use.pid},
                      {"gpu_index", use.gpu_index},
                      {"mig_index", OrNull(use.mig_index)},
                      {"uuid", use.uuid},
                      {"used_memory_bytes", OrNull(use.used_memory_bytes)},
                      {"cuda_ordinal", OrNull(use.cuda_ordinal)},
                      {"own_environment", use.own_environment}});
    }
    json["uses"] = uses;
    json["used_but_not_visible"] = GpusUsedButNotVisible(view.uses);
    json["process_lists_unknown"] = view.unknown_process_gpus;
  }
  json["probe"] = view.probe ? ProbeJson(view) : Json();
  return json;
}

}  // namespace gpupin
