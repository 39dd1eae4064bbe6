#include "core/slurm_gres.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>

namespace gpupin {

std::string SlurmGpuType(const std::string& name) {
  std::string type;
  for (char c : name)
    type += c == ' ' ? '_' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return type;
}

std::string RenderGresConf(const Inventory& inventory, const std::string& hostname,
                           const Result<CpuTopology>& topology) {
  std::vector<const Gpu*> gpus;
  std::vector<const Gpu*> skipped;
  std::map<std::string, int> count_by_type;
  for (const Gpu& gpu : inventory.gpus) {
    if (!gpu.healthy() || !gpu.minor_number) {
      skipped.push_back(&gpu);
      continue;
    }
    gpus.push_back(&gpu);
    ++count_by_type[SlurmGpuType(gpu.name)];
  }
  auto by_index = [](const Gpu* a, const Gpu* b) { return a->index < b->index; };
  std::sort(gpus.begin(), gpus.end(), by_index);
  std::sort(skipped.begin(), skipped.end(), by_index);
  std::string gres;
  for (const auto& [type, count] : count_by_type)
    gres += fmt::format("{}gpu:{}:{}", gres.empty() ? "" : ",", type, count);
  std::string out = fmt::format(
      "# gres.conf for {}, from NVML. In slurm.conf:\n"
      "#   GresTypes=gpu\n"
      "#   NodeName={} Gres={}\n"
      "# Keep the lines in this (PCI bus) order: Slurm numbers GPUs by their line, and jobs\n"
      "# that set CUDA_DEVICE_ORDER=PCI_BUS_ID then see the same numbers in CUDA.\n",
      hostname, hostname, gres.empty() ? "gpu:0" : gres);
  bool minors_in_order = std::is_sorted(gpus.begin(), gpus.end(), [](const Gpu* a, const Gpu* b) {
    return *a->minor_number < *b->minor_number;
  });
  if (!minors_in_order) {
    out +=
        "# The /dev/nvidiaN numbers are not in PCI bus order here: do not sort the lines by "
        "File=.\n";
  }
  if (!skipped.empty() && !gpus.empty() && skipped.front()->index < gpus.back()->index) {
    out += fmt::format(
        "# GPUs are left out (below), so Slurm's numbers for the GPUs after GPU {} differ from "
        "NVML's.\n",
        skipped.front()->index);
  }
  if (!topology.ok())
    out += fmt::format("# Cores= left out: cannot read the CPU topology: {}\n",
                       topology.error().message);
  bool cores_left_out = false;
  for (const Gpu* gpu : gpus) {
    std::string cores;
    if (gpu->cpu_affinity && topology.ok()) {
      Result<std::string> indices = SlurmCoreIndices(*gpu->cpu_affinity, *topology);
      if (indices.ok()) {
        cores = " Cores=" + *indices;
      } else {
        cores_left_out = true;
        out += fmt::format("# Cores= left out for GPU {}: NVML's CPU affinity: {}\n", gpu->index,
                           indices.error().message);
      }
    }
    out += fmt::format("Name=gpu Type={} File=/dev/nvidia{}{}  # NVML index {}, {}, {}\n",
                       SlurmGpuType(gpu->name), *gpu->minor_number, cores, gpu->index,
                       gpu->pci_bus_id, gpu->uuid);
  }
  if (cores_left_out && inventory.simulated) {
    out +=
        "# (The simulated server's CPUs are not this machine's: GPUPIN_SYSFS_ROOT can name a "
        "sysfs tree with them.)\n";
  }
  for (const Gpu* gpu : skipped) {
    out += fmt::format("# GPU {} ({}) left out: {}\n", gpu->index, gpu->uuid,
                       gpu->healthy() ? "NVML gives no minor number" : *gpu->health_error);
  }
  return out;
}

}  // namespace gpupin
