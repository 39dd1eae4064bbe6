#include "sys/user_groups.h"

#include <gtest/gtest.h>
#include <unistd.h>

namespace gpupin {
namespace {

TEST(UserGroupsTest, RootIsInItsPrimaryGroupFirst) {
  const std::vector<std::string> groups = UserGroups(0);
  ASSERT_FALSE(groups.empty());
  EXPECT_EQ(groups.front(), "root");
}

TEST(UserGroupsTest, AUidWithoutAPasswordEntryHasNoGroups) {
  EXPECT_TRUE(UserGroups(4'000'000'000U).empty());
}

TEST(UserGroupsTest, GroupsAreLookedUpOnlyForRulesThatCapAGroup) {
  HouseRules rules;
  rules.user_caps["root"].max_gpus_per_user = 1;
  EXPECT_TRUE(GroupsTheRulesCap(rules, 0).empty());
  rules.group_caps["root"].max_gpus_per_user = 2;
  EXPECT_EQ(GroupsTheRulesCap(rules, 0), UserGroups(0));
}

}  // namespace
}  // namespace gpupin
