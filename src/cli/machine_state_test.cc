#include "cli/machine_state.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

namespace gpupin {
namespace {

Lease HeldBy(const std::string& id, int pid) {
  Lease lease;
  lease.id = id;
  lease.holder = {pid, 1};
  return lease;
}

TEST(JobOfProcess, OnlyALiveLeaseHeldUpTheCallersTreeIsItsJob) {
  // 1 <- 40 (a job's gpupin run) <- 45 (its shell) <- 41 (a nested gpupin); 1 <- 50 (another job)
  std::map<int, int> parents = {{40, 1}, {45, 40}, {41, 45}, {50, 1}};
  auto parent_of = [&](int pid) -> std::optional<int> {
    auto it = parents.find(pid);
    if (it == parents.end()) return std::nullopt;
    return it->second;
  };
  Lease container = HeldBy("container", 45);
  container.container_id = std::string(64, 'a');
  std::vector<Lease> live = {HeldBy("outer", 40), HeldBy("elsewhere", 50), container};
  EXPECT_EQ(JobOfProcess(41, "outer", live, parent_of), &live[0]);
  EXPECT_EQ(JobOfProcess(41, std::nullopt, live, parent_of), nullptr);
  EXPECT_EQ(JobOfProcess(41, "elsewhere", live, parent_of), nullptr) << "not an ancestor";
  EXPECT_EQ(JobOfProcess(41, "gone", live, parent_of), nullptr) << "no such live lease";
  EXPECT_EQ(JobOfProcess(41, "container", live, parent_of), nullptr);
  EXPECT_EQ(JobOfProcess(40, "outer", live, parent_of), &live[0]) << "the holder itself";
  EXPECT_EQ(JobOfProcess(50, "outer", live, parent_of), nullptr) << "another tree";
}

TEST(AttributeToLeases, AProcessBelongsToTheNearestHolderAmongItselfAndItsAncestors) {
  // 1 <- 40 <- 45 <- 41, 40 <- 30 (a holder whose child 31 holds a lease of its own), 1 <- 50
  std::map<int, int> parents = {{30, 40}, {31, 30}, {40, 1}, {45, 40}, {41, 45}, {50, 1}, {60, 1}};
  std::vector<int> asked;
  auto parent_of = [&](int pid) -> std::optional<int> {
    asked.push_back(pid);
    auto it = parents.find(pid);
    if (it == parents.end()) return std::nullopt;
    return it->second;
  };
  GpuProcessFacts facts;
  for (uint32_t pid : {30u, 31u, 41u, 50u, 60u}) facts.owners[pid] = {};
  facts.owners[60].lease_id = "ended";  // attributed by an earlier call, to a lease gone since

  AttributeToLeases(facts, {HeldBy("outer", 40), HeldBy("inner", 31), HeldBy("job", 30)},
                    parent_of);

  EXPECT_EQ(facts.owners[30].lease_id, "job");
  EXPECT_EQ(facts.owners[31].lease_id, "inner");
  EXPECT_EQ(facts.owners[41].lease_id, "outer");
  EXPECT_FALSE(facts.owners[50].lease_id.has_value());
  EXPECT_FALSE(facts.owners[60].lease_id.has_value());
  EXPECT_EQ(std::count(asked.begin(), asked.end(), 30), 0) << "a holder's parents are not read";
  EXPECT_EQ(std::count(asked.begin(), asked.end(), 31), 0);
}

TEST(AttributeToLeases, ACycleInTheProcessTreeEnds) {
  GpuProcessFacts facts;
  facts.owners[20] = {};
  AttributeToLeases(facts, {HeldBy("a", 99)},
                    [](int pid) -> std::optional<int> { return pid == 20 ? 21 : 20; });
  EXPECT_FALSE(facts.owners[20].lease_id.has_value());
}

}  // namespace
}  // namespace gpupin
