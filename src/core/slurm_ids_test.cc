#include "core/slurm_ids.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gpupin {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// A node of `count` GPUs; NVML index i is the i-th in PCI order.
std::vector<Gpu> Node(uint32_t count, const std::string& name = "NVIDIA L40S") {
  std::vector<Gpu> gpus;
  for (uint32_t i = 0; i < count; ++i) {
    Gpu gpu;
    gpu.index = i;
    gpu.name = name;
    gpu.uuid = "GPU-" + std::to_string(i);
    gpus.push_back(gpu);
  }
  return gpus;
}

VisibilityEnv JobGpus(std::string ids) {
  VisibilityEnv env;
  env.slurm_job_gpus = std::move(ids);
  return env;
}

TEST(SlurmIdsTest, SplitTrimsSpacesAroundEachEntry) {
  EXPECT_THAT(SplitIdList(" 1, 3 ,5"), ElementsAre("1", "3", "5"));
  EXPECT_THAT(SplitIdList(""), ElementsAre(""));
}

TEST(SlurmIdsTest, TheStepsGpusGoBeforeTheJobs) {
  VisibilityEnv env = JobGpus("0,1,2,3");
  env.slurm_step_gpus = "2";
  const std::optional<SlurmGpuIds> ids = SlurmGpus(env);
  ASSERT_TRUE(ids);
  EXPECT_EQ(ids->variable, "SLURM_STEP_GPUS");
  EXPECT_THAT(ids->ids, ElementsAre("2"));
  EXPECT_FALSE(SlurmGpus(VisibilityEnv{}));
}

TEST(SlurmIdsTest, AJobSeeingOnlyItsCardsKeepsToNothingMore) {
  // A device cgroup shows the job its 2 cards only: the ids are not NVML's.
  EXPECT_FALSE(KeepToSlurmAllocation(JobGpus("1,3"), Node(2), std::nullopt));
  // An id that is not a card of the node: not global ids.
  EXPECT_FALSE(KeepToSlurmAllocation(JobGpus("1,9"), Node(4), std::nullopt));
  EXPECT_FALSE(KeepToSlurmAllocation(VisibilityEnv{}, Node(4), std::nullopt));
}

TEST(SlurmIdsTest, AJobSeeingTheWholeNodeKeepsToItsAllocation) {
  const std::optional<SlurmAllocation> kept =
      KeepToSlurmAllocation(JobGpus("3, 1"), Node(4), std::nullopt);
  ASSERT_TRUE(kept);
  EXPECT_EQ(kept->given, "SLURM_JOB_GPUS=3, 1");
  EXPECT_THAT(kept->within, ElementsAre(3, 1));
  EXPECT_THAT(kept->outside, IsEmpty());
}

TEST(SlurmIdsTest, CudaVisibleDevicesKeepsItsOrderWithinTheAllocation) {
  const std::optional<SlurmAllocation> kept =
      KeepToSlurmAllocation(JobGpus("1,2,3"), Node(8), std::vector<uint32_t>{3, 1});
  ASSERT_TRUE(kept);
  EXPECT_THAT(kept->within, ElementsAre(3, 1));
  EXPECT_THAT(kept->outside, IsEmpty());
}

TEST(SlurmIdsTest, CardsOutsideTheAllocationAreNamedAndLeftOut) {
  // A ~/.bashrc that sets CUDA_VISIBLE_DEVICES=0,1,2 in a job given 1,3.
  const std::optional<SlurmAllocation> kept =
      KeepToSlurmAllocation(JobGpus("1,3"), Node(4), std::vector<uint32_t>{0, 1, 2});
  ASSERT_TRUE(kept);
  EXPECT_THAT(kept->within, ElementsAre(1));
  EXPECT_THAT(kept->outside, ElementsAre(0, 2));
  const std::optional<SlurmAllocation> none =
      KeepToSlurmAllocation(JobGpus("1,3"), Node(4), std::vector<uint32_t>{0});
  ASSERT_TRUE(none);
  EXPECT_THAT(none->within, IsEmpty());
}

TEST(SlurmIdsTest, GlobalIdsReadFastestFirstOnMixedModelsAreMisread) {
  std::vector<Gpu> gpus = Node(4);
  gpus[1].name = "NVIDIA RTX A6000";
  VisibilityEnv env = JobGpus("1,3");
  env.cuda_visible_devices = "1,3";
  const std::optional<SlurmIdsMisread> misread = SlurmIdsMisreadByCuda(env, gpus);
  ASSERT_TRUE(misread);
  EXPECT_THAT(misread->problem, HasSubstr("Slurm's global GPU ids (SLURM_JOB_GPUS)"));
  EXPECT_THAT(misread->fix, HasSubstr("CUDA_DEVICE_ORDER=PCI_BUS_ID"));
  // One model: fastest first is PCI order.
  EXPECT_FALSE(SlurmIdsMisreadByCuda(env, Node(4)));
  env.cuda_device_order = "PCI_BUS_ID";
  EXPECT_FALSE(SlurmIdsMisreadByCuda(env, gpus));
}

}  // namespace
}  // namespace gpupin
