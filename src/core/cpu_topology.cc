#include "core/cpu_topology.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "core/cpu_list.h"

namespace gpupin {

namespace {

// Slurm's index of every core, by LogicalCpu::core.
std::map<uint32_t, uint32_t> CoreIndices(const CpuTopology& topology) {
  std::map<uint32_t, uint32_t> first_cpu_of_package, first_cpu_of_core, package_of_core;
  for (const LogicalCpu& cpu : topology) {
    auto lower = [&](std::map<uint32_t, uint32_t>& first, uint32_t key) {
      auto [it, inserted] = first.emplace(key, cpu.cpu);
      if (!inserted) it->second = std::min(it->second, cpu.cpu);
    };
    lower(first_cpu_of_package, cpu.package);
    lower(first_cpu_of_core, cpu.core);
    package_of_core[cpu.core] = cpu.package;
  }
  std::vector<uint32_t> cores;
  cores.reserve(first_cpu_of_core.size());
  for (const auto& [core, first] : first_cpu_of_core) cores.push_back(core);
  std::sort(cores.begin(), cores.end(), [&](uint32_t a, uint32_t b) {
    return std::pair(first_cpu_of_package[package_of_core[a]], first_cpu_of_core[a]) <
           std::pair(first_cpu_of_package[package_of_core[b]], first_cpu_of_core[b]);
  });
  std::map<uint32_t, uint32_t> index;
  for (uint32_t position = 0; position < cores.size(); ++position)
    index[cores[position]] = position;
  return index;
}

}  // namespace

Result<std::string> SlurmCoreIndices(std::string_view cpu_list, const CpuTopology& topology) {
  std::optional<std::vector<uint32_t>> cpus = ParseCpuList(cpu_list);
  if (!cpus || cpus->empty())
    return MakeError(ExitCode::kError, fmt::format("malformed CPU list \"{}\"", cpu_list));
  std::map<uint32_t, uint32_t> core_of_cpu;
  for (const LogicalCpu& cpu : topology) core_of_cpu[cpu.cpu] = cpu.core;
  std::map<uint32_t, uint32_t> core_index = CoreIndices(topology);
  std::set<uint32_t> indices, missing;
  for (uint32_t cpu : *cpus) {
    auto core = core_of_cpu.find(cpu);
    if (core == core_of_cpu.end()) {
      missing.insert(cpu);
    } else {
      indices.insert(core_index[core->second]);
    }
  }
  if (!missing.empty()) {
    return MakeError(ExitCode::kError,
                     fmt::format("CPU{} {} of \"{}\" not on this machine",
                                 missing.size() == 1 ? "" : "s", FormatCpuIds(missing), cpu_list));
  }
  return FormatCpuIds(indices);
}

}  // namespace gpupin
