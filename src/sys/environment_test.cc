#include "sys/environment.h"

#include <gtest/gtest.h>
#include <stdlib.h>

namespace gpupin {
namespace {

TEST(EnvironmentTest, ReadsSetAndEmptyAndUnsetVariables) {
  ASSERT_EQ(setenv("CUDA_VISIBLE_DEVICES", "1,0", 1), 0);
  ASSERT_EQ(setenv("CUDA_DEVICE_ORDER", "", 1), 0);
  ASSERT_EQ(unsetenv("NVIDIA_VISIBLE_DEVICES"), 0);
  const VisibilityEnv env = VisibilityEnvFromProcess();
  EXPECT_EQ(env.cuda_visible_devices, "1,0");
  EXPECT_EQ(env.cuda_device_order, "");
  EXPECT_FALSE(env.nvidia_visible_devices.has_value());
  EXPECT_EQ(ProcessEnvironment().at("CUDA_VISIBLE_DEVICES"), "1,0");
  unsetenv("CUDA_VISIBLE_DEVICES");
  unsetenv("CUDA_DEVICE_ORDER");
}

}  // namespace
}  // namespace gpupin
