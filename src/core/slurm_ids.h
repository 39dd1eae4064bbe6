// A Slurm job's GPU ids, and how CUDA reads them. Without a device cgroup
// a job sees every GPU of the node, and Slurm sets CUDA_VISIBLE_DEVICES to
// its global ids, which count the node's GPUs in gres.conf's order
// (PCI bus order, as `gpupin slurm gres` writes it). CUDA reads them in
// CUDA_DEVICE_ORDER, FASTEST_FIRST unless set: on mixed models the ids then
// name other cards than Slurm allocated.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/cuda_visible.h"
#include "core/gpu.h"

namespace gpupin {

struct SlurmGpuIds {
  std::string variable;  // SLURM_STEP_GPUS, else SLURM_JOB_GPUS
  std::string value;
  std::vector<std::string> ids;  // the value's entries, spaces trimmed
};

// The entries of a comma-separated list, spaces around each trimmed.
std::vector<std::string> SplitIdList(std::string_view text);

// The job's GPU ids; nullopt outside a Slurm job with GPUs.
std::optional<SlurmGpuIds> SlurmGpus(const VisibilityEnv& env);

// Whether every one of the ids names one of the `gpus_seen` GPUs and the
// job sees more GPUs than it was given: no device cgroup hides the others,
// so the ids are the node's global ones.
bool SeesWholeNode(const SlurmGpuIds& slurm, size_t gpus_seen);

// Where a Slurm job sees the whole node (SeesWholeNode: no device cgroup
// hides the others), the cards a choice keeps to. Its global ids count the
// node's GPUs in gres.conf's order, PCI bus order as `gpupin slurm gres`
// writes it, which is NVML's.
struct SlurmAllocation {
  std::string given;  // "SLURM_STEP_GPUS=1,3"
  // The NVML indices both Slurm and `allowed` allow: `allowed` in its own
  // order, or the allocation when `allowed` does not restrict.
  std::vector<uint32_t> within;
  // Those of `allowed` that Slurm did not give the job.
  std::vector<uint32_t> outside;
};

// `allowed`: the NVML indices CUDA_VISIBLE_DEVICES allows (nullopt: it does
// not restrict). nullopt outside a Slurm job that sees the whole node.
std::optional<SlurmAllocation> KeepToSlurmAllocation(
    const VisibilityEnv& env, const std::vector<Gpu>& gpus,
    const std::optional<std::vector<uint32_t>>& allowed);

// One line on why CUDA reads the job's CUDA_VISIBLE_DEVICES, Slurm's own
// global ids, as other cards than Slurm allocated (mixed models, no
// CUDA_DEVICE_ORDER=PCI_BUS_ID), and one line of fix; nullopt when it reads
// them as Slurm meant, or the job is no Slurm job with GPUs.
struct SlurmIdsMisread {
  std::string problem;
  std::string fix;
};
std::optional<SlurmIdsMisread> SlurmIdsMisreadByCuda(const VisibilityEnv& env,
                                                     const std::vector<Gpu>& gpus);

}  // namespace gpupin
