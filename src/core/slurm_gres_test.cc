#include "core/slurm_gres.h"

#include <gtest/gtest.h>

namespace gpupin {
namespace {

Gpu MakeGpu(uint32_t index, uint32_t minor, std::string name) {
  Gpu gpu;
  gpu.index = index;
  gpu.minor_number = minor;
  gpu.name = std::move(name);
  gpu.uuid = "GPU-" + std::to_string(index);
  gpu.pci_bus_id = "00000000:0" + std::to_string(index) + ":00.0";
  gpu.cpu_affinity = "0-15";
  return gpu;
}

TEST(SlurmGresTest, TypeIsSlurmsAutoDetectSpelling) {
  EXPECT_EQ(SlurmGpuType("NVIDIA A100-SXM4-40GB"), "nvidia_a100-sxm4-40gb");
  EXPECT_EQ(SlurmGpuType("NVIDIA GeForce RTX 3090"), "nvidia_geforce_rtx_3090");
}

TEST(SlurmGresTest, LinesInDeviceFileOrderWithCoresAndCounts) {
  Inventory inventory;
  inventory.gpus = {MakeGpu(0, 3, "NVIDIA L40S"), MakeGpu(1, 2, "NVIDIA L40S"),
                    MakeGpu(2, 0, "NVIDIA A2")};
  Gpu lost = MakeGpu(3, 1, "NVIDIA L40S");
  lost.health_error = "GPU is lost";
  inventory.gpus.push_back(lost);
  std::string conf = RenderGresConf(inventory, "node7");
  EXPECT_NE(conf.find("#   NodeName=node7 Gres=gpu:nvidia_a2:1,gpu:nvidia_l40s:2\n"),
            std::string::npos)
      << conf;
  size_t a2 = conf.find("Name=gpu Type=nvidia_a2 File=/dev/nvidia0 Cores=0-15  # NVML index 2");
  size_t minor2 = conf.find("File=/dev/nvidia2 Cores=0-15  # NVML index 1");
  size_t minor3 = conf.find("File=/dev/nvidia3 Cores=0-15  # NVML index 0");
  ASSERT_NE(a2, std::string::npos) << conf;
  ASSERT_NE(minor2, std::string::npos);
  ASSERT_NE(minor3, std::string::npos);
  EXPECT_LT(a2, minor2);
  EXPECT_LT(minor2, minor3);
  EXPECT_NE(conf.find("# GPU 3 (GPU-3) left out: GPU is lost"), std::string::npos);
  EXPECT_EQ(conf.find("/dev/nvidia1"), std::string::npos);
}

}  // namespace
}  // namespace gpupin
