#include "core/gpu_use.h"

#include <gtest/gtest.h>

namespace gpupin {
namespace {

Gpu MakeGpu(uint32_t index, std::vector<uint32_t> pids) {
  Gpu gpu;
  gpu.index = index;
  gpu.uuid = "GPU-" + std::to_string(index);
  for (uint32_t pid : pids) gpu.processes.push_back({pid, 1024, true, false, {}, {}});
  return gpu;
}

Resolution Visible(std::vector<std::pair<uint32_t, std::optional<uint32_t>>> devices) {
  Resolution resolution;
  int ordinal = 0;
  for (auto [gpu, mig] : devices) resolution.visible.push_back({ordinal++, gpu, mig, "", ""});
  return resolution;
}

TEST(GpuUseTest, MapsUsedGpusToTheirOrdinals) {
  Inventory inventory;
  inventory.gpus = {MakeGpu(0, {10}), MakeGpu(1, {}), MakeGpu(2, {42, 43})};
  std::vector<GpuUse> uses =
      FindGpuUses(inventory, Visible({{2, std::nullopt}}), [](uint32_t pid) { return pid == 42; });
  ASSERT_EQ(uses.size(), 1u);
  EXPECT_EQ(uses[0].pid, 42u);
  EXPECT_EQ(uses[0].gpu_index, 2u);
  EXPECT_EQ(uses[0].uuid, "GPU-2");
  EXPECT_EQ(uses[0].used_memory_bytes, 1024u);
  EXPECT_EQ(uses[0].cuda_ordinal, 0);
  EXPECT_TRUE(GpusUsedButNotVisible(uses).empty());
}

TEST(GpuUseTest, FlagsGpusUsedButNotVisible) {
  Inventory inventory;
  inventory.gpus = {MakeGpu(0, {7}), MakeGpu(1, {}), MakeGpu(2, {}), MakeGpu(3, {7, 8})};
  std::vector<GpuUse> uses = FindGpuUses(inventory, Visible({{0, std::nullopt}}),
                                         [](uint32_t pid) { return pid == 7 || pid == 8; });
  ASSERT_EQ(uses.size(), 3u);
  EXPECT_EQ(uses[0].cuda_ordinal, 0);
  EXPECT_FALSE(uses[1].cuda_ordinal);
  EXPECT_EQ(GpusUsedButNotVisible(uses), std::vector<uint32_t>{3});
}

TEST(GpuUseTest, AChildWithItsOwnEnvironmentIsJudgedByIt) {
  // pid 7 was examined with GPU 0 visible; its child 8 was started with GPU 3.
  Inventory inventory;
  inventory.gpus = {MakeGpu(0, {7}), MakeGpu(1, {}), MakeGpu(2, {}), MakeGpu(3, {8})};
  std::vector<GpuUse> uses = FindGpuUses(
      inventory, Visible({{0, std::nullopt}}), [](uint32_t pid) { return pid == 7 || pid == 8; },
      [](uint32_t pid) -> std::optional<Resolution> {
        if (pid == 8) return Visible({{3, std::nullopt}});
        return std::nullopt;
      });
  ASSERT_EQ(uses.size(), 2u);
  EXPECT_EQ(uses[0].cuda_ordinal, 0);
  EXPECT_EQ(uses[1].pid, 8u);
  EXPECT_EQ(uses[1].cuda_ordinal, 0) << "cuda:0 of its own environment";
  EXPECT_FALSE(uses[0].own_environment);
  EXPECT_TRUE(uses[1].own_environment);
  EXPECT_TRUE(GpusUsedButNotVisible(uses).empty());
}

TEST(GpuUseTest, MigProcessIsReportedOnceOnItsInstance) {
  Gpu gpu = MakeGpu(0, {5});
  MigDevice first;
  first.index = 0;
  first.uuid = "MIG-a";
  MigDevice second;
  second.index = 1;
  second.uuid = "MIG-b";
  second.processes.push_back({5, 2048, true, false, 1, 0});
  gpu.mig_devices = {first, second};
  Inventory inventory;
  inventory.gpus = {gpu};

  std::vector<GpuUse> visible =
      FindGpuUses(inventory, Visible({{0, 1}}), [](uint32_t) { return true; });
  ASSERT_EQ(visible.size(), 1u);
  EXPECT_EQ(visible[0].mig_index, 1u);
  EXPECT_EQ(visible[0].uuid, "MIG-b");
  EXPECT_EQ(visible[0].cuda_ordinal, 0);

  std::vector<GpuUse> other_instance =
      FindGpuUses(inventory, Visible({{0, 0}}), [](uint32_t) { return true; });
  ASSERT_EQ(other_instance.size(), 1u);
  EXPECT_FALSE(other_instance[0].cuda_ordinal);
}

}  // namespace
}  // namespace gpupin
