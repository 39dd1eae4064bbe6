#include "core/slurm_ids.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "core/gpu_models.h"

namespace gpupin {

std::vector<std::string> SplitIdList(std::string_view text) {
  std::vector<std::string> out;
  while (true) {
    size_t comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    out.emplace_back(item);
    if (comma == std::string_view::npos) return out;
    text.remove_prefix(comma + 1);
  }
}

std::optional<SlurmGpuIds> SlurmGpus(const VisibilityEnv& env) {
  const bool step = env.slurm_step_gpus.has_value();
  const std::optional<std::string>& value = step ? env.slurm_step_gpus : env.slurm_job_gpus;
  if (!value) return std::nullopt;
  return SlurmGpuIds{step ? "SLURM_STEP_GPUS" : "SLURM_JOB_GPUS", *value, SplitIdList(*value)};
}

bool SeesWholeNode(const SlurmGpuIds& slurm, size_t gpus_seen) {
  return gpus_seen > slurm.ids.size() &&
         std::all_of(slurm.ids.begin(), slurm.ids.end(), [&](const std::string& id) {
           unsigned index = 0;
           auto [end, error] = std::from_chars(id.data(), id.data() + id.size(), index);
           return error == std::errc() && end == id.data() + id.size() && index < gpus_seen;
         });
}

std::optional<SlurmAllocation> KeepToSlurmAllocation(
    const VisibilityEnv& env, const std::vector<Gpu>& gpus,
    const std::optional<std::vector<uint32_t>>& allowed) {
  const std::optional<SlurmGpuIds> slurm = SlurmGpus(env);
  if (!slurm || !SeesWholeNode(*slurm, gpus.size())) return std::nullopt;
  std::vector<uint32_t> given;
  for (const std::string& id : slurm->ids) {
    // SeesWholeNode checked that each id is a number below gpus.size().
    size_t position = 0;
    std::from_chars(id.data(), id.data() + id.size(), position);
    if (std::find(given.begin(), given.end(), gpus[position].index) == given.end())
      given.push_back(gpus[position].index);
  }
  SlurmAllocation allocation{fmt::format("{}={}", slurm->variable, slurm->value), {}, {}};
  if (!allowed) {
    allocation.within = std::move(given);
    return allocation;
  }
  for (uint32_t index : *allowed) {
    const bool in_allocation = std::find(given.begin(), given.end(), index) != given.end();
    (in_allocation ? allocation.within : allocation.outside).push_back(index);
  }
  return allocation;
}

std::optional<SlurmIdsMisread> SlurmIdsMisreadByCuda(const VisibilityEnv& env,
                                                     const std::vector<Gpu>& gpus) {
  const std::optional<SlurmGpuIds> slurm = SlurmGpus(env);
  if (!slurm || !env.cuda_visible_devices || FollowsPciBusOrder(env)) return std::nullopt;
  if (SplitIdList(*env.cuda_visible_devices) != slurm->ids || !SeesWholeNode(*slurm, gpus.size()))
    return std::nullopt;
  const auto two = TwoModels(gpus);
  if (!two) return std::nullopt;  // one model: FASTEST_FIRST keeps PCI order
  return SlurmIdsMisread{
      fmt::format("CUDA_VISIBLE_DEVICES=\"{}\" holds Slurm's global GPU ids ({}), which count the "
                  "node's GPUs in gres.conf's order, but CUDA reads them fastest first on these "
                  "mixed models ({}, {}): they name other cards than Slurm gave this job",
                  *env.cuda_visible_devices, slurm->variable, two->first->name, two->second->name),
      "export CUDA_DEVICE_ORDER=PCI_BUS_ID in the job, with gres.conf in PCI bus order (as gpupin "
      "slurm gres writes it), or constrain devices (ConstrainDevices=yes in cgroup.conf)"};
}

}  // namespace gpupin
