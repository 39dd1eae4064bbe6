#include "core/house_rules.h"

#include <gtest/gtest.h>

namespace gpupin {
namespace {

HouseRules Rules() {
  HouseRules rules;
  rules.file = "/etc/gpupin/config.toml";
  rules.caps.max_gpus_per_user = 2;
  rules.caps.max_gpus_per_job = 4;
  rules.user_caps["alice"].max_gpus_per_user = 6;
  rules.group_caps["interns"].max_gpus_per_user = 1;
  rules.group_caps["students"].max_gpus_per_user = 3;
  rules.group_caps["students"].max_gpus_per_job = 1;
  rules.lines = {{"max_gpus_per_user", 3},
                 {"max_gpus_per_job", 4},
                 {"users.alice.max_gpus_per_user", 8},
                 {"groups.interns.max_gpus_per_user", 10},
                 {"groups.students.max_gpus_per_user", 12},
                 {"groups.students.max_gpus_per_job", 13}};
  return rules;
}

TEST(CapFor, NoRulesNoLimit) {
  AppliedCap cap = CapFor(HouseRules{}, CapKind::kPerUser, "bob", {"bob"});
  EXPECT_FALSE(cap.limit);
  EXPECT_EQ(cap.rule, "");
  EXPECT_EQ(DescribeCap(HouseRules{}, cap), "no limit");
}

TEST(CapFor, EveryoneGetsTheGlobalCap) {
  AppliedCap cap = CapFor(Rules(), CapKind::kPerUser, "bob", {"bob", "staff"});
  EXPECT_EQ(cap.limit, 2);
  EXPECT_EQ(DescribeCap(Rules(), cap), "max_gpus_per_user = 2 in /etc/gpupin/config.toml:3");
}

TEST(CapFor, TheUsersOwnEntryWinsOverGroups) {
  AppliedCap cap = CapFor(Rules(), CapKind::kPerUser, "alice", {"interns"});
  EXPECT_EQ(cap.limit, 6);
  EXPECT_EQ(DescribeCap(Rules(), cap),
            "max_gpus_per_user = 6 of [limits.users.alice] in /etc/gpupin/config.toml:8");
}

TEST(CapFor, TheUsersEntryWithoutThatKeyFallsThrough) {
  AppliedCap cap = CapFor(Rules(), CapKind::kPerJob, "alice", {});
  EXPECT_EQ(cap.limit, 4);
  EXPECT_EQ(cap.rule, "max_gpus_per_job");
}

TEST(CapFor, TheStrictestGroupWins) {
  AppliedCap cap = CapFor(Rules(), CapKind::kPerUser, "carol", {"students", "interns"});
  EXPECT_EQ(cap.limit, 1);
  EXPECT_EQ(cap.rule, "groups.interns.max_gpus_per_user");
  EXPECT_EQ(DescribeCap(Rules(), cap),
            "max_gpus_per_user = 1 of [limits.groups.interns] in /etc/gpupin/config.toml:10");
}

TEST(CapFor, AGroupMayRaiseTheGlobalCap) {
  AppliedCap cap = CapFor(Rules(), CapKind::kPerUser, "dave", {"students"});
  EXPECT_EQ(cap.limit, 3);
  EXPECT_EQ(CapFor(Rules(), CapKind::kPerJob, "dave", {"students"}).limit, 1);
}

Lease Held(uint32_t uid, std::vector<std::string> cards, bool shared = false) {
  Lease lease;
  lease.uid = uid;
  lease.gpu_uuids = std::move(cards);
  if (shared) lease.shared_bytes = uint64_t{1} << 30;
  return lease;
}

TEST(AnyPerUserCap, ForEveryoneAUserOrAGroup) {
  HouseRules rules;
  EXPECT_FALSE(AnyPerUserCap(rules));
  rules.caps.max_gpus_per_job = 2;
  EXPECT_FALSE(AnyPerUserCap(rules)) << "a per-job cap caps no user's holdings";
  rules.group_caps["interns"].max_gpus_per_user = 1;
  EXPECT_TRUE(AnyPerUserCap(rules));
  rules.group_caps.clear();
  rules.user_caps["alice"].max_gpus_per_user = 3;
  EXPECT_TRUE(AnyPerUserCap(rules));
  rules.user_caps.clear();
  rules.caps.max_gpus_per_user = 4;
  EXPECT_TRUE(AnyPerUserCap(rules));
}

TEST(CardsHeldByUser, CountsEachCardOfTheUserOnce) {
  std::vector<Lease> live = {Held(1000, {"GPU-a", "GPU-b"}), Held(1000, {"GPU-b"}, true),
                             Held(1001, {"GPU-c"}), Held(1000, {"GPU-d"}, true)};
  EXPECT_EQ(CardsHeldByUser(live)[1000], 3);
  EXPECT_EQ(CardsHeldByUser(live)[1001], 1);
  EXPECT_EQ(CardsHeldByUser(live)[0], 0);
}

}  // namespace
}  // namespace gpupin
