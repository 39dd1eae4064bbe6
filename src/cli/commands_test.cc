#include "cli/commands.h"

#include <gtest/gtest.h>

#include <set>

namespace gpupin {
namespace {

TEST(SuggestCommandTest, CloseTyposAndPrefixesButNotNoise) {
  std::vector<std::string> commands;
  for (const CommandSpec& command : AllCommands()) commands.emplace_back(command.name);
  EXPECT_EQ(SuggestCommand("lss", commands), "ls");
  EXPECT_EQ(SuggestCommand("rn", commands), "run");
  EXPECT_EQ(SuggestCommand("lease", commands), "leases");
  EXPECT_EQ(SuggestCommand("dokcer", commands), "docker");
  EXPECT_EQ(SuggestCommand("kubernetes", commands), "");
}

TEST(CommandTableTest, NamesAreUniqueAndEveryCommandHasASummary) {
  std::set<std::string_view> names;
  for (const CommandSpec& command : AllCommands()) {
    EXPECT_TRUE(names.insert(command.name).second) << command.name;
    EXPECT_FALSE(command.summary.empty()) << command.name;
  }
}

}  // namespace
}  // namespace gpupin
