#include "out/inventory_json.h"

#include <fmt/format.h>

#include "out/json_value.h"

namespace gpupin {
namespace {

nlohmann::ordered_json ProcessesToJson(const std::vector<GpuProcess>& processes) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const GpuProcess& p : processes) {
    const char* type = p.compute && p.graphics ? "compute+graphics"
                       : p.graphics            ? "graphics"
                                               : "compute";
    list.push_back({{"pid", p.pid},
                    {"used_memory_bytes", OrNull(p.used_memory_bytes)},
                    {"type", type},
                    {"gpu_instance_id", OrNull(p.gpu_instance_id)},
                    {"compute_instance_id", OrNull(p.compute_instance_id)}});
  }
  return list;
}

nlohmann::ordered_json MigToJson(const MigDevice& mig) {
  return {{"index", mig.index},
          {"uuid", mig.uuid},
          {"name", mig.name},
          {"gpu_instance_id", OrNull(mig.gpu_instance_id)},
          {"compute_instance_id", OrNull(mig.compute_instance_id)},
          {"memory",
           {{"total_bytes", OrNull(mig.memory_total_bytes)},
            {"used_bytes", OrNull(mig.memory_used_bytes)},
            {"free_bytes", OrNull(mig.memory_free_bytes)}}},
          {"processes", ProcessesToJson(mig.processes)}};
}

}  // namespace

const char* ComputeModeName(ComputeMode mode) {
  switch (mode) {
    case ComputeMode::kDefault:
      return "default";
    case ComputeMode::kExclusiveThread:
      return "exclusive_thread";
    case ComputeMode::kProhibited:
      return "prohibited";
    case ComputeMode::kExclusiveProcess:
      return "exclusive_process";
  }
  return "unknown";
}

nlohmann::ordered_json GpuToJson(const Gpu& gpu, GpuFacts facts) {
  namespace f = gpu_facts;
  nlohmann::ordered_json json = {
      {"index", gpu.index},
      {"uuid", TextOrNull(gpu.uuid)},
      {"pci_bus_id", TextOrNull(gpu.pci_bus_id)},
      {"name", TextOrNull(gpu.name)},
      {"healthy", gpu.healthy()},
      {"error", OrNull(gpu.health_error)},
  };
  if (facts & f::kMemory) {
    json["memory"] = {{"total_bytes", OrNull(gpu.memory_total_bytes)},
                      {"used_bytes", OrNull(gpu.memory_used_bytes)},
                      {"free_bytes", OrNull(gpu.memory_free_bytes)},
                      {"reserved_bytes", OrNull(gpu.memory_reserved_bytes)}};
  }
  if (facts & f::kUtilization) {
    json["utilization"] = {{"gpu_percent", OrNull(gpu.utilization_gpu_percent)},
                           {"memory_percent", OrNull(gpu.utilization_memory_percent)}};
  }
  if (facts & f::kSensors) {
    json["temperature_c"] = OrNull(gpu.temperature_c);
    json["power"] = {{"draw_mw", OrNull(gpu.power_draw_mw)},
                     {"limit_mw", OrNull(gpu.power_limit_mw)}};
  }
  if (facts & f::kComputeMode) {
    json["compute_mode"] = gpu.compute_mode
                               ? nlohmann::ordered_json(ComputeModeName(*gpu.compute_mode))
                               : nlohmann::ordered_json(nullptr);
  }
  if (facts & f::kPersistenceMode) json["persistence_mode"] = OrNull(gpu.persistence_mode);
  if (facts & f::kCudaOrder) {
    nlohmann::ordered_json capability = nullptr;
    if (gpu.compute_capability) {
      capability =
          fmt::format("{}.{}", gpu.compute_capability->major, gpu.compute_capability->minor);
    }
    json["compute_capability"] = capability;
    json["cores"] = OrNull(gpu.cores);
  }
  if (facts & f::kMinorNumber) {
    nlohmann::ordered_json device_file = nullptr;
    if (gpu.minor_number) device_file = fmt::format("/dev/nvidia{}", *gpu.minor_number);
    json["minor_number"] = OrNull(gpu.minor_number);
    json["device_file"] = device_file;
  }
  if (facts & f::kAffinity) json["cpu_affinity"] = OrNull(gpu.cpu_affinity);
  if (facts & f::kNumaNode) json["numa_node"] = OrNull(gpu.numa_node);
  if (facts & f::kBoard) {
    json["board_id"] = OrNull(gpu.board_id);
    json["multi_gpu_board"] = OrNull(gpu.multi_gpu_board);
  }
  if (facts & f::kMig) {
    nlohmann::ordered_json mig_devices = nlohmann::ordered_json::array();
    for (const MigDevice& mig : gpu.mig_devices) mig_devices.push_back(MigToJson(mig));
    json["mig"] = {{"enabled", OrNull(gpu.mig_enabled)}, {"devices", std::move(mig_devices)}};
  }
  if (facts & f::kNvLinks) json["nvlink_peers"] = gpu.nvlink_peer_bus_ids;
  if (facts & f::kProcesses) {
    json["processes_known"] = gpu.processes_known;
    json["processes"] = ProcessesToJson(gpu.processes);
  }
  return json;
}

namespace {

const char* TopologyLevelId(TopologyLevel level) {
  switch (level) {
    case TopologyLevel::kInternal:
      return "same_board";
    case TopologyLevel::kSingle:
      return "pcie_switch";
    case TopologyLevel::kMultiple:
      return "pcie_switches";
    case TopologyLevel::kHostBridge:
      return "host_bridge";
    case TopologyLevel::kNode:
      return "numa_node";
    case TopologyLevel::kSystem:
      return "system";
  }
  return "system";
}

// Every pair of GPUs once, by NVML index, with what joins them.
nlohmann::ordered_json TopologyToJson(const Inventory& inventory) {
  nlohmann::ordered_json pairs = nlohmann::ordered_json::array();
  for (size_t i = 0; i < inventory.topology.size() && i < inventory.gpus.size(); ++i) {
    for (size_t j = i + 1; j < inventory.topology[i].size() && j < inventory.gpus.size(); ++j) {
      const std::optional<TopologyLevel>& level = inventory.topology[i][j];
      pairs.push_back({{"gpus", {inventory.gpus[i].index, inventory.gpus[j].index}},
                       {"level", level ? nlohmann::ordered_json(TopologyLevelId(*level))
                                       : nlohmann::ordered_json()}});
    }
  }
  return pairs;
}

}  // namespace

nlohmann::ordered_json InventoryToJson(const Inventory& inventory, GpuFacts facts) {
  nlohmann::ordered_json gpus = nlohmann::ordered_json::array();
  for (const Gpu& gpu : inventory.gpus) gpus.push_back(GpuToJson(gpu, facts));
  nlohmann::ordered_json cuda = nullptr;
  if (inventory.cuda_driver_version) {
    cuda = fmt::format("{}.{}", *inventory.cuda_driver_version / 1000,
                       (*inventory.cuda_driver_version % 1000) / 10);
  }
  nlohmann::ordered_json json = {{"schema_version", kJsonSchemaVersion},
                                 {"simulated", inventory.simulated},
                                 {"driver_version", OrNull(inventory.driver_version)},
                                 {"nvml_version", OrNull(inventory.nvml_version)},
                                 {"cuda_driver_version", cuda},
                                 {"gpus", std::move(gpus)}};
  if (facts & gpu_facts::kTopology) json["topology"] = TopologyToJson(inventory);
  return json;
}

}  // namespace gpupin
