#include "core/leftovers.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gpupin {
namespace {

constexpr uint64_t kGiB = 1ULL << 30;

LeftoverProcess On(uint32_t gpu, uint32_t pid, std::optional<uint64_t> bytes, bool own = true) {
  return {{gpu}, pid, own ? "alice" : "bob", "python train.py", bytes, "orphaned", own, false};
}

TEST(MergeLeftoversTest, OneProcessOnFourGpusIsOneLeftoverWithItsTotalMemory) {
  std::vector<LeftoverProcess> merged =
      MergeLeftovers({On(0, 30484, 2 * kGiB), On(1, 30484, 2 * kGiB), On(3, 500, kGiB),
                      On(2, 30484, 2 * kGiB), On(3, 30484, 2 * kGiB)});
  ASSERT_EQ(merged.size(), 2u);
  EXPECT_EQ(merged[0].pid, 30484u);
  EXPECT_EQ(merged[0].gpu_indices, (std::vector<uint32_t>{0, 1, 2, 3}));
  EXPECT_EQ(merged[0].used_memory_bytes, 8 * kGiB);
  EXPECT_EQ(merged[1].pid, 500u);
  EXPECT_EQ(merged[1].gpu_indices, (std::vector<uint32_t>{3}));
}

TEST(MergeLeftoversTest, MemoryIsKnownWhenKnownOnAnyGpu) {
  std::vector<LeftoverProcess> merged =
      MergeLeftovers({On(0, 7, std::nullopt), On(1, 7, kGiB), On(2, 8, std::nullopt)});
  EXPECT_EQ(merged[0].used_memory_bytes, kGiB);
  EXPECT_EQ(merged[1].used_memory_bytes, std::nullopt);
}

TEST(DecideLeftoverKillsTest, EndsOnlyTheCallersOwn) {
  std::vector<KillDecision> decisions =
      DecideLeftoverKills({On(0, 10, kGiB), On(1, 11, kGiB, false)}, {});
  ASSERT_EQ(decisions.size(), 2u);
  EXPECT_TRUE(decisions[0].end);
  EXPECT_FALSE(decisions[1].end);
  EXPECT_EQ(decisions[1].why_not, "bob's, not yours (root ends it with --all-users)");
}

TEST(DecideLeftoverKillsTest, AllUsersEndsOthersToo) {
  std::vector<KillDecision> decisions =
      DecideLeftoverKills({On(0, 10, kGiB), On(1, 11, kGiB, false)}, {.all_users = true});
  EXPECT_TRUE(decisions[0].end);
  EXPECT_TRUE(decisions[1].end);
}

TEST(DecideLeftoverKillsTest, NeverTheProcessesGpupinRunsIn) {
  std::vector<KillDecision> decisions = DecideLeftoverKills(
      {On(0, 10, kGiB), On(1, 11, kGiB, false)}, {.all_users = true, .protected_pids = {10, 11}});
  EXPECT_FALSE(decisions[0].end);
  EXPECT_EQ(decisions[0].why_not, "gpupin runs in it");
  EXPECT_FALSE(decisions[1].end);
}

}  // namespace
}  // namespace gpupin
