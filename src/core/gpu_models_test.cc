#include "core/gpu_models.h"

#include <gtest/gtest.h>

namespace gpupin {
namespace {

Gpu Model(uint32_t index, std::string name, ComputeCapability capability) {
  Gpu gpu;
  gpu.index = index;
  gpu.name = std::move(name);
  gpu.compute_capability = capability;
  return gpu;
}

TEST(TwoModels, OneModelIsNone) {
  EXPECT_FALSE(TwoModels({Model(0, "NVIDIA L40S", {8, 9}), Model(1, "NVIDIA L40S", {8, 9})}));
  EXPECT_FALSE(TwoModels({}));
}

TEST(TwoModels, ANameOrACapabilityDiffers) {
  std::vector<Gpu> gpus = {Model(0, "NVIDIA L40S", {8, 9}), Model(1, "NVIDIA L40S", {8, 9}),
                           Model(2, "NVIDIA A100", {8, 0})};
  auto two = TwoModels(gpus);
  ASSERT_TRUE(two);
  EXPECT_EQ(two->first->index, 0u);
  EXPECT_EQ(two->second->index, 2u);
  EXPECT_TRUE(TwoModels({Model(0, "GPU", {8, 0}), Model(1, "GPU", {8, 6})}));
}

TEST(TwoModels, AGpuOfUnreadableModelIsNoEvidence) {
  Gpu lost;
  lost.index = 0;
  lost.health_error = "reading its name failed (NVML: GPU is lost)";
  EXPECT_FALSE(TwoModels({lost, Model(1, "NVIDIA L40S", {8, 9}), Model(2, "NVIDIA L40S", {8, 9})}));
}

// A card whose memory query failed (in reset) still gives its name, but its
// compute capability was never read.
TEST(TwoModels, AnUnreadCapabilityIsNoEvidence) {
  Gpu in_reset = Model(1, "NVIDIA A100-SXM4-40GB", {8, 0});
  in_reset.compute_capability.reset();
  in_reset.health_error = "reading memory failed (NVML: GPU requires restart)";
  EXPECT_FALSE(TwoModels({Model(0, "NVIDIA A100-SXM4-40GB", {8, 0}), in_reset,
                          Model(2, "NVIDIA A100-SXM4-40GB", {8, 0})}));
  in_reset.name = "NVIDIA H100";
  EXPECT_TRUE(TwoModels({Model(0, "NVIDIA A100-SXM4-40GB", {8, 0}), in_reset}))
      << "its name still tells";
}

}  // namespace
}  // namespace gpupin
