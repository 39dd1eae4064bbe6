#include "core/gpu_process_walk.h"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

namespace gpupin {
namespace {

GpuProcess Process(uint32_t pid) {
  GpuProcess process;
  process.pid = pid;
  process.compute = true;
  return process;
}

// (pid, MIG slot or -1) in the order visited.
std::vector<std::pair<uint32_t, int>> Walk(const Gpu& gpu) {
  std::vector<std::pair<uint32_t, int>> visited;
  ForEachGpuProcess(gpu, [&](const GpuProcess& process, const MigDevice* mig) {
    visited.emplace_back(process.pid, mig ? static_cast<int>(mig->index) : -1);
  });
  return visited;
}

TEST(ForEachGpuProcess, AWholeGpuGivesItsOwnList) {
  Gpu gpu;
  gpu.processes = {Process(10), Process(11)};
  EXPECT_EQ(Walk(gpu), (std::vector<std::pair<uint32_t, int>>{{10, -1}, {11, -1}}));
}

TEST(ForEachGpuProcess, InstancesFirstAndTheirProcessesNotAgain) {
  Gpu gpu;
  gpu.mig_devices.resize(2);
  gpu.mig_devices[0].index = 1;
  gpu.mig_devices[0].processes = {Process(20)};
  gpu.mig_devices[1].index = 5;
  gpu.mig_devices[1].processes = {Process(21), Process(22)};
  // The GPU's own list repeats the instances' processes, and may hold one
  // that no instance lists.
  gpu.processes = {Process(20), Process(21), Process(22), Process(30)};
  EXPECT_EQ(Walk(gpu),
            (std::vector<std::pair<uint32_t, int>>{{20, 1}, {21, 5}, {22, 5}, {30, -1}}));
}

TEST(ForEachGpuProcess, AProcessOnTwoInstancesIsVisitedOnEach) {
  Gpu gpu;
  gpu.mig_devices.resize(2);
  gpu.mig_devices[0].index = 0;
  gpu.mig_devices[0].processes = {Process(40)};
  gpu.mig_devices[1].index = 1;
  gpu.mig_devices[1].processes = {Process(40)};
  gpu.processes = {Process(40)};
  EXPECT_EQ(Walk(gpu), (std::vector<std::pair<uint32_t, int>>{{40, 0}, {40, 1}}));
}

}  // namespace
}  // namespace gpupin
