// gres.conf lines for this node's GPUs (PRODUCT.md, `gpupin slurm gres`),
// so that a lab moving to Slurm starts from what NVML says rather than from
// guesses about /dev/nvidiaN numbering.
#pragma once

#include <string>

#include "core/cpu_topology.h"
#include "core/error.h"
#include "core/gpu.h"

namespace gpupin {

// Slurm's AutoDetect type for a GPU name: lower case, spaces as '_'
// ("NVIDIA A100-SXM4-40GB" -> "nvidia_a100-sxm4-40gb").
std::string SlurmGpuType(const std::string& name);

// A gres.conf for `hostname`: one `Name=gpu Type=… File=/dev/nvidiaN
// Cores=…` line per healthy GPU, preceded by comments with the matching
// slurm.conf settings. GPUs without a minor number are listed in a comment.
//
// Lines are in NVML index (PCI bus) order, whatever their minor numbers:
// Slurm numbers a node's GPUs by their position in gres.conf
// (CUDA_VISIBLE_DEVICES, SLURM_JOB_GPUS), so only this order makes Slurm's
// numbers CUDA's PCI_BUS_ID numbers. A comment says so when sorting by File
// would differ, and when a GPU left out shifts the numbers after it.
//
// Cores= is Slurm's core index list for the GPU's NVML CPU affinity, by
// `topology` (SlurmCoreIndices). When `topology` is an Error, or does not
// hold the CPUs NVML names, Cores= is left out and a comment says why:
// wrong core numbers would bind jobs to the wrong socket.
std::string RenderGresConf(const Inventory& inventory, const std::string& hostname,
                           const Result<CpuTopology>& topology);

}  // namespace gpupin
