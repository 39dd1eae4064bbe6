#include "core/job_env.h"

#include <gtest/gtest.h>

namespace gpupin {
namespace {

TEST(JobEnvironmentTest, ExclusiveJobGetsDevicesAndPciOrderOnly) {
  EnvChanges env = JobEnvironment({.cuda_visible_devices = "2,3", .device_count = 2}, {});
  EXPECT_EQ(env.at("CUDA_VISIBLE_DEVICES"), "2,3");
  EXPECT_EQ(env.at("CUDA_DEVICE_ORDER"), "PCI_BUS_ID");
  EXPECT_FALSE(env.contains("XLA_PYTHON_CLIENT_PREALLOCATE"));
  EXPECT_FALSE(env.contains("TF_FORCE_GPU_ALLOW_GROWTH"));
}

TEST(JobEnvironmentTest, SharedJobStopsPreallocationUnlessUserChoseOtherwise) {
  EnvChanges env = JobEnvironment(
      {.cuda_visible_devices = "1", .shared_bytes = 20ULL << 30},
      {{"TF_FORCE_GPU_ALLOW_GROWTH", "false"}, {"CUDA_DEVICE_ORDER", "FASTEST_FIRST"}});
  EXPECT_EQ(env.at("XLA_PYTHON_CLIENT_PREALLOCATE"), "false");
  EXPECT_FALSE(env.contains("TF_FORCE_GPU_ALLOW_GROWTH")) << "the user's own value wins";
  EXPECT_EQ(env.at("CUDA_DEVICE_ORDER"), "PCI_BUS_ID")
      << "ids are NVML indices, so the order must be PCI";
  EXPECT_FALSE(env.contains("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"));
}

TEST(JobEnvironmentTest, MpsLimitPerVisibleOrdinal) {
  EnvChanges env = JobEnvironment({.cuda_visible_devices = "0,5",
                                   .shared_bytes = 1536ULL << 20,
                                   .device_count = 2,
                                   .mps_running = true},
                                  {});
  EXPECT_EQ(env.at("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"), "0=1536M,1=1536M");
}

TEST(WithChangesTest, SetsReplacesAndRemoves) {
  std::map<std::string, std::string> environment = WithChanges(
      {{"HOME", "/home/ada"}, {"CUDA_VISIBLE_DEVICES", "0,1"}, {"OMP_NUM_THREADS", "8"}},
      {{"CUDA_VISIBLE_DEVICES", "3"},
       {"CUDA_DEVICE_ORDER", "PCI_BUS_ID"},
       {"OMP_NUM_THREADS", std::nullopt},
       {"NEVER_SET", std::nullopt}});
  std::map<std::string, std::string> expected = {
      {"HOME", "/home/ada"}, {"CUDA_VISIBLE_DEVICES", "3"}, {"CUDA_DEVICE_ORDER", "PCI_BUS_ID"}};
  EXPECT_EQ(environment, expected);
}

}  // namespace
}  // namespace gpupin
