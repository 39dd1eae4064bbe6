// Which groups of facts a snapshot of the GPUs reads (sys/gpu_source.h).
#pragma once

#include <cstdint>

namespace gpupin {

// Which groups of facts a snapshot reads, so that each command pays only for
// what it uses (on a real driver every query is an ioctl, and topology walks
// the PCI tree). The identity of every GPU (UUID, bus id, name) and its
// health are always read.
using GpuFacts = uint32_t;
namespace gpu_facts {
inline constexpr GpuFacts kMemory = 1u << 0;       // memory figures
inline constexpr GpuFacts kUtilization = 1u << 1;  // GPU and memory utilization
inline constexpr GpuFacts kSensors = 1u << 2;      // temperature, power draw and limit
inline constexpr GpuFacts kMig = 1u << 3;          // MIG mode and instances (with their memory)
inline constexpr GpuFacts kProcesses = 1u << 4;    // process lists (per MIG instance in MIG mode)
inline constexpr GpuFacts kComputeMode = 1u << 5;  // compute mode (EXCLUSIVE_PROCESS: one process)
inline constexpr GpuFacts kCudaOrder = 1u << 6;    // compute capability and cores
// kCudaOrder only where CUDA's default order needs it: cards of more than one
// model (by name), where FASTEST_FIRST is not PCI order.
inline constexpr GpuFacts kCudaOrderIfMixed = 1u << 7;
inline constexpr GpuFacts kAffinity = 1u << 8;          // CPU affinity (slurm gres)
inline constexpr GpuFacts kBoard = 1u << 9;             // board id, multi-GPU board
inline constexpr GpuFacts kNvLinks = 1u << 10;          // active NVLink peers
inline constexpr GpuFacts kTopology = 1u << 11;         // common ancestor of every pair of GPUs
inline constexpr GpuFacts kPersistenceMode = 1u << 12;  // persistence mode (doctor, ls --all)
inline constexpr GpuFacts kMinorNumber = 1u << 13;      // /dev/nvidiaN (slurm gres, ps --devfiles)
inline constexpr GpuFacts kNumaNode = 1u << 14;         // NUMA node
inline constexpr GpuFacts kAll = (1u << 15) - 1;
// What choosing cards reads: a set of several cards also needs how close they are.
inline constexpr GpuFacts kChoice = kMemory | kUtilization | kMig | kProcesses | kComputeMode;
inline constexpr GpuFacts kCloseness = kNvLinks | kTopology | kNumaNode | kBoard;
}  // namespace gpu_facts

}  // namespace gpupin
