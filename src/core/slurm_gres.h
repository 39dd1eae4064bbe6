// gres.conf lines for this node's GPUs (`gpupin slurm gres`),
// so that a lab moving to Slurm starts from what NVML says rather than from
// guesses about /dev/nvidiaN numbering.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/cpu_topology.h"
#include "core/error.h"
#include "core/gpu.h"

namespace gpupin {

// Slurm's AutoDetect type for a GPU name: lower case, spaces as '_'
// ("NVIDIA A100-SXM4-40GB" -> "nvidia_a100-sxm4-40gb").
std::string SlurmGpuType(const std::string& name);

// One GPU's line in gres.conf.
struct GresLine {
  uint32_t nvml_index = 0;
  std::string type;                           // SlurmGpuType
  uint32_t minor_number = 0;                  // File=/dev/nvidia<minor_number>
  std::optional<std::string> cores;           // Slurm core indices, or left out:
  std::optional<std::string> cores_left_out;  // why, when only this line lacks them
  std::string pci_bus_id;
  std::string uuid;
};

// A GPU that gets no line.
struct GresLeftOut {
  uint32_t nvml_index = 0;
  std::string uuid;
  std::string reason;
};

// What gres.conf should say for one node, before it is written out as
// text or JSON.
struct GresConf {
  std::string hostname;
  std::string node_gres;  // slurm.conf: NodeName=<hostname> Gres=<node_gres>
  std::vector<GresLine> lines;
  std::vector<GresLeftOut> left_out;
  std::vector<std::string> notes;  // what the reader must know, one sentence each
};

// The gres.conf for `hostname`: one `Name=gpu Type=… File=/dev/nvidiaN
// Cores=…` line per healthy GPU; GPUs without a minor number are left out.
//
// Lines are in NVML index (PCI bus) order, whatever their minor numbers:
// Slurm numbers a node's GPUs by their position in gres.conf
// (CUDA_VISIBLE_DEVICES, SLURM_JOB_GPUS), so only this order makes Slurm's
// numbers CUDA's PCI_BUS_ID numbers. A note says so when sorting by File
// would differ, and when a GPU left out shifts the numbers after it.
//
// Cores= is Slurm's core index list for the GPU's NVML CPU affinity, by
// `topology` (SlurmCoreIndices). When `topology` is an Error, or does not
// hold the CPUs NVML names, Cores= is left out and a note says why:
// wrong core numbers would bind jobs to the wrong socket.
GresConf PlanGresConf(const Inventory& inventory, const std::string& hostname,
                      const Result<CpuTopology>& topology);

// `/dev/nvidiaN`: the device file that names the GPU to Slurm.
std::string GresDeviceFile(const GresLine& line);

// `Name=gpu Type=… File=/dev/nvidiaN[ Cores=…]`, as gres.conf takes it.
std::string GresLineText(const GresLine& line);

// The file itself: the matching slurm.conf settings and the notes as
// comments, then the lines, each with a comment naming its GPU.
std::string RenderGresConf(const GresConf& conf);

}  // namespace gpupin
