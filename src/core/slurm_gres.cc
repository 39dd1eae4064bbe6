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

std::string RenderGresConf(const Inventory& inventory, const std::string& hostname) {
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
  std::sort(gpus.begin(), gpus.end(),
            [](const Gpu* a, const Gpu* b) { return *a->minor_number < *b->minor_number; });
  std::string gres;
  for (const auto& [type, count] : count_by_type)
    gres += fmt::format("{}gpu:{}:{}", gres.empty() ? "" : ",", type, count);
  std::string out = fmt::format(
      "# gres.conf for {}, from NVML. In slurm.conf:\n"
      "#   GresTypes=gpu\n"
      "#   NodeName={} Gres={}\n"
      "# Jobs should also set CUDA_DEVICE_ORDER=PCI_BUS_ID: /dev/nvidiaN numbers are not NVML or "
      "CUDA indices.\n",
      hostname, hostname, gres.empty() ? "gpu:0" : gres);
  for (const Gpu* gpu : gpus) {
    out += fmt::format("Name=gpu Type={} File=/dev/nvidia{}", SlurmGpuType(gpu->name),
                       *gpu->minor_number);
    if (gpu->cpu_affinity) out += " Cores=" + *gpu->cpu_affinity;
    out += fmt::format("  # NVML index {}, {}, {}\n", gpu->index, gpu->pci_bus_id, gpu->uuid);
  }
  for (const Gpu* gpu : skipped) {
    out += fmt::format("# GPU {} ({}) left out: {}\n", gpu->index, gpu->uuid,
                       gpu->healthy() ? "NVML gives no minor number" : *gpu->health_error);
  }
  return out;
}

}  // namespace gpupin
