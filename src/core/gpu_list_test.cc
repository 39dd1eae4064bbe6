#include "core/gpu_list.h"

#include <gtest/gtest.h>

namespace gpupin {
namespace {

TEST(GpuList, OneGpuOrSeveral) {
  EXPECT_EQ(GpuList({2}), "GPU 2");
  EXPECT_EQ(GpuList({0, 1, 3}), "GPUs 0,1,3");
}

}  // namespace
}  // namespace gpupin
