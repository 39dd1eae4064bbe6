#include "core/slurm_gres.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>

#include "core/cuda_visible.h"

namespace gpupin {

std::string SlurmGpuType(const std::string& name) {
  std::string type;
  for (char c : name)
    type += c == ' ' ? '_' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return type;
}

GresConf PlanGresConf(const Inventory& inventory, const std::string& hostname,
                      const Result<CpuTopology>& topology) {
  std::vector<const Gpu*> gpus;
  std::vector<const Gpu*> skipped;
  std::map<std::string, int> count_by_type;
  for (const Gpu& gpu : inventory.gpus) {
    if (!gpu.healthy() || !gpu.minor_number || gpu.mig_enabled.value_or(false)) {
      skipped.push_back(&gpu);
      continue;
    }
    gpus.push_back(&gpu);
    ++count_by_type[SlurmGpuType(gpu.name)];
  }
  // In PCI bus order, which NVML's numbering need not follow: each card's
  // place found once, not at every comparison.
  std::map<uint32_t, uint32_t> bus_place;
  for (const Gpu& gpu : inventory.gpus)
    bus_place[gpu.index] = PciBusOrdinal(inventory.gpus, gpu.index).value_or(gpu.index);
  auto by_bus = [&](const Gpu* a, const Gpu* b) {
    return bus_place.at(a->index) < bus_place.at(b->index);
  };
  std::sort(gpus.begin(), gpus.end(), by_bus);
  std::sort(skipped.begin(), skipped.end(), by_bus);

  GresConf conf;
  conf.hostname = hostname;
  for (const auto& [type, count] : count_by_type)
    conf.node_gres += fmt::format("{}gpu:{}:{}", conf.node_gres.empty() ? "" : ",", type, count);
  if (conf.node_gres.empty()) conf.node_gres = "gpu:0";
  bool minors_in_order = std::is_sorted(gpus.begin(), gpus.end(), [](const Gpu* a, const Gpu* b) {
    return *a->minor_number < *b->minor_number;
  });
  if (!minors_in_order)
    conf.notes.emplace_back(
        "The /dev/nvidiaN numbers are not in PCI bus order here: do not sort the lines by File=.");
  if (!skipped.empty() && !gpus.empty() && skipped.front()->index < gpus.back()->index) {
    conf.notes.push_back(
        fmt::format("{} left out (below), so Slurm's numbers for the GPUs after GPU {} differ from "
                    "NVML's.",
                    skipped.size() == 1 ? "A GPU is" : "GPUs are", skipped.front()->index));
  }
  if (count_by_type.size() > 1) {
    conf.notes.emplace_back(
        "Several models: Slurm may number typed GPUs type by type, in the order of the types in "
        "Gres= (22.05 does), not by line; a job's global ids then differ from PCI bus order. "
        "Constrain devices (ConstrainDevices=yes in cgroup.conf: a job sees only its GPUs, "
        "numbered from 0), or leave Type= out to keep Slurm's numbers in line order.");
  }
  if (!topology.ok())
    conf.notes.push_back(
        fmt::format("Cores= left out: cannot read the CPU topology: {}", topology.error().message));
  bool cores_left_out = false;
  for (const Gpu* gpu : gpus) {
    GresLine line;
    line.nvml_index = gpu->index;
    line.type = SlurmGpuType(gpu->name);
    line.minor_number = *gpu->minor_number;
    line.pci_bus_id = gpu->pci_bus_id;
    line.uuid = gpu->uuid;
    if (!gpu->cpu_affinity && topology.ok()) {
      line.cores_left_out = "NVML gives no CPU affinity for it";
    } else if (topology.ok()) {
      Result<std::string> indices = SlurmCoreIndices(*gpu->cpu_affinity, *topology);
      if (indices.ok()) {
        line.cores = *indices;
      } else {
        cores_left_out = true;
        line.cores_left_out = "NVML's CPU affinity: " + indices.error().message;
      }
    }
    conf.lines.push_back(std::move(line));
  }
  if (cores_left_out && inventory.simulated) {
    conf.notes.emplace_back(
        "The simulated server's CPUs are not this machine's: GPUPIN_SYSFS_ROOT can name a sysfs "
        "tree with them.");
  }
  for (const Gpu* gpu : skipped) {
    std::string reason = !gpu->healthy() ? *gpu->health_error
                         : gpu->minor_number
                             ? "in MIG mode: give Slurm its MIG devices (MultipleFiles= in "
                               "gres.conf, or AutoDetect=nvml), not the whole card"
                             : "NVML gives no minor number";
    conf.left_out.push_back({gpu->index, gpu->uuid, std::move(reason)});
  }
  return conf;
}

std::string GresDeviceFile(const GresLine& line) {
  return fmt::format("/dev/nvidia{}", line.minor_number);
}

std::string GresLineText(const GresLine& line) {
  return fmt::format("Name=gpu Type={} File={}{}", line.type, GresDeviceFile(line),
                     line.cores ? " Cores=" + *line.cores : "");
}

std::string RenderGresConf(const GresConf& conf) {
  std::string out = fmt::format(
      "# gres.conf for {}, from NVML. In slurm.conf:\n"
      "#   GresTypes=gpu\n"
      "#   NodeName={} Gres={}\n"
      "# Keep the lines in this (PCI bus) order: Slurm numbers GPUs by their line, and jobs\n"
      "# that set CUDA_DEVICE_ORDER=PCI_BUS_ID then see the same numbers in CUDA.\n",
      conf.hostname, conf.hostname, conf.node_gres);
  for (const std::string& note : conf.notes) out += "# " + note + "\n";
  for (const GresLine& line : conf.lines) {
    if (line.cores_left_out)
      out +=
          fmt::format("# Cores= left out for GPU {}: {}\n", line.nvml_index, *line.cores_left_out);
    out += fmt::format("{}  # NVML index {}, {}, {}\n", GresLineText(line), line.nvml_index,
                       line.pci_bus_id, line.uuid);
  }
  for (const GresLeftOut& gpu : conf.left_out)
    out += fmt::format("# GPU {}{} left out: {}\n", gpu.nvml_index,
                       gpu.uuid.empty() ? "" : " (" + gpu.uuid + ")", gpu.reason);
  return out;
}

}  // namespace gpupin
