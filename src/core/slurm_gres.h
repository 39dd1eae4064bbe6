// gres.conf lines for this node's GPUs (PRODUCT.md, `gpupin slurm gres`),
// so that a lab moving to Slurm starts from what NVML says rather than from
// guesses about /dev/nvidiaN numbering.
#pragma once

#include <string>

#include "core/gpu.h"

namespace gpupin {

// Slurm's AutoDetect type for a GPU name: lower case, spaces as '_'
// ("NVIDIA A100-SXM4-40GB" -> "nvidia_a100-sxm4-40gb").
std::string SlurmGpuType(const std::string& name);

// A gres.conf for `hostname`: one `Name=gpu Type=… File=/dev/nvidiaN
// Cores=…` line per healthy GPU (File is the minor number, not the index),
// in File order as Slurm wants, preceded by comments with the matching
// slurm.conf settings. GPUs without a minor number are listed in a comment.
std::string RenderGresConf(const Inventory& inventory, const std::string& hostname);

}  // namespace gpupin
