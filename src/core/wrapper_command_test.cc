#include "core/wrapper_command.h"

#include <gtest/gtest.h>

namespace gpupin {
namespace {

using Argv = std::vector<std::string>;

const Argv kPick = {"gpupin", "pick", "--only", "1,2"};

TEST(OnlyRunsCommand, AWrapperWhoseArgumentsEndWithTheChildsOnlyRunsIt) {
  EXPECT_TRUE(OnlyRunsCommand({"timeout", "30", "gpupin", "pick", "--only", "1,2"}, kPick));
  EXPECT_TRUE(OnlyRunsCommand({"sudo", "gpupin", "pick", "--only", "1,2"}, kPick));
  EXPECT_TRUE(OnlyRunsCommand({"flock", "/tmp/l", "gpupin", "pick", "--only", "1,2"}, kPick));
}

TEST(OnlyRunsCommand, AProgramWithOtherArgumentsIsNoWrapper) {
  EXPECT_FALSE(OnlyRunsCommand({"bash"}, kPick));
  EXPECT_FALSE(OnlyRunsCommand({"bash", "./sweep.sh"}, kPick));
  EXPECT_FALSE(OnlyRunsCommand({"python3", "launch.py"}, kPick));
  // The same command line is a forked copy, not a wrapper.
  EXPECT_FALSE(OnlyRunsCommand(kPick, kPick));
  EXPECT_FALSE(OnlyRunsCommand({"timeout", "30", "gpupin", "pick"}, kPick));
  EXPECT_FALSE(OnlyRunsCommand({"timeout", "30"}, {}));
}

TEST(OnlyRunsCommand, AShellWhoseScriptIsExactlyTheCommandOnlyRunsIt) {
  EXPECT_TRUE(OnlyRunsCommand({"/bin/sh", "-c", "gpupin pick --only 1,2"}, kPick));
  EXPECT_TRUE(OnlyRunsCommand({"bash", "-c", "  gpupin pick --only '1,2' "}, kPick));
  EXPECT_TRUE(OnlyRunsCommand({"dash", "-ec", "gpupin pick --only \"1,2\""}, kPick));
  EXPECT_TRUE(OnlyRunsCommand({"-zsh", "-lc", "gpupin pick --only 1,2", "name"}, kPick));
}

TEST(OnlyRunsCommand, AShellScriptThatDoesMoreIsNoWrapper) {
  for (const char* script :
       {"gpupin pick --only 1,2; python train.py", "gpupin pick --only 1,2 > ids",
        "gpupin pick --only $IDS", "gpupin pick --only '1,2", "x=$(gpupin pick --only 1,2)"}) {
    EXPECT_FALSE(OnlyRunsCommand({"sh", "-c", script}, kPick)) << script;
  }
  EXPECT_FALSE(OnlyRunsCommand({"sh", "script.sh"}, kPick));
  EXPECT_FALSE(OnlyRunsCommand({"sh", "-x", "gpupin pick --only 1,2"}, kPick));
  EXPECT_FALSE(OnlyRunsCommand({"sh", "--c", "gpupin pick --only 1,2"}, kPick));
  EXPECT_FALSE(OnlyRunsCommand({"python3", "-c", "gpupin pick --only 1,2"}, kPick));
}

}  // namespace
}  // namespace gpupin
