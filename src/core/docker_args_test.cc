#include "core/docker_args.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace gpupin {
namespace {

using Args = std::vector<std::string>;

TEST(DockerArgsTest, InsertsQuotedDeviceListAfterRun) {
  auto result =
      RewriteDockerArgs({"run", "--rm", "img", "nvidia-smi"}, {"GPU-a", "GPU-b"}, {}, "/tmp/cid");
  ASSERT_TRUE(result.ok()) << result.error().message;
  EXPECT_EQ(result->args,
            (Args{"run", "--gpus", "\"device=GPU-a,GPU-b\"", "--rm", "img", "nvidia-smi"}));
  EXPECT_FALSE(result->detached);
  EXPECT_FALSE(result->cidfile);
}

TEST(DockerArgsTest, GlobalClientOptionsBeforeCreateStayInPlace) {
  auto result = RewriteDockerArgs({"--context", "lab", "create", "img"}, {"GPU-a"}, {}, "/tmp/cid");
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->args,
            (Args{"--context", "lab", "create", "--gpus", "\"device=GPU-a\"", "img"}));
  EXPECT_TRUE(result->creates_only);
}

TEST(DockerArgsTest, AClientOptionsValueIsNotTheCommand) {
  auto result = RewriteDockerArgs({"-H", "run", "--debug", "container", "run", "-d", "img"},
                                  {"GPU-a"}, {}, "/tmp/cid");
  ASSERT_TRUE(result.ok()) << result.error().message;
  EXPECT_EQ(result->prefix, (Args{"-H", "run", "--debug", "container"}));
  EXPECT_EQ(result->args[4], "run");
  EXPECT_EQ(result->args[5], "--gpus");
  EXPECT_TRUE(result->detached);
  // `docker image ls run` has no run command: nothing to rewrite.
  EXPECT_FALSE(RewriteDockerArgs({"image", "ls", "run"}, {"GPU-a"}, {}, "/tmp/cid").ok());
}

TEST(DockerArgsTest, DetachedRunGetsOurCidfile) {
  for (const char* flag : {"-d", "--detach", "-dit", "-itd"}) {
    auto result = RewriteDockerArgs({"run", flag, "img"}, {"GPU-a"}, {}, "/tmp/cid");
    ASSERT_TRUE(result.ok());
    EXPECT_TRUE(result->detached) << flag;
    EXPECT_EQ(result->cidfile, "/tmp/cid");
    EXPECT_EQ(result->args[3], "--cidfile");
  }
}

TEST(DockerArgsTest, FlagsAfterTheImageBelongToTheContainer) {
  auto result =
      RewriteDockerArgs({"run", "-e", "X=1", "img", "python", "-d"}, {"GPU-a"}, {}, "/tmp/cid");
  ASSERT_TRUE(result.ok());
  EXPECT_FALSE(result->detached);
}

TEST(DockerArgsTest, UsersOwnCidfileIsRead) {
  auto result =
      RewriteDockerArgs({"run", "-d", "--cidfile", "/x/id", "img"}, {"GPU-a"}, {}, "/tmp/cid");
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->cidfile, "/x/id");
  EXPECT_EQ(std::count(result->args.begin(), result->args.end(), "--cidfile"), 1);
}

TEST(DockerArgsTest, RefusesOwnGpusAndMissingRun) {
  auto own = RewriteDockerArgs({"run", "--gpus", "all", "img"}, {"GPU-a"}, {}, "/tmp/cid");
  ASSERT_FALSE(own.ok());
  EXPECT_EQ(own.error().code, ExitCode::kUsage);
  auto ps = RewriteDockerArgs({"ps"}, {"GPU-a"}, {}, "/tmp/cid");
  ASSERT_FALSE(ps.ok());
  EXPECT_EQ(ps.error().code, ExitCode::kUsage);
}

TEST(DockerArgsTest, AContainerIdIsSixtyFourLowercaseHexDigits) {
  EXPECT_TRUE(IsContainerId(std::string(64, 'a')));
  EXPECT_TRUE(IsContainerId("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"));
  EXPECT_FALSE(IsContainerId(""));
  EXPECT_FALSE(IsContainerId("-f"));
  EXPECT_FALSE(IsContainerId(std::string(12, 'a'))) << "a short id is not what --cidfile holds";
  EXPECT_FALSE(IsContainerId(std::string(63, 'a') + "A"));
  EXPECT_FALSE(IsContainerId(std::string(63, 'a') + "g"));
  EXPECT_FALSE(IsContainerId(std::string(65, 'a')));
}

TEST(DockerArgsTest, SharedCardSettingsGoInUnlessTheCommandSetsThem) {
  const std::vector<std::pair<std::string, std::string>> settings = {{"XLA_A", "false"},
                                                                     {"TF_B", "true"}};
  auto result = RewriteDockerArgs({"run", "--rm", "img"}, {"GPU-a"}, settings, "/tmp/cid");
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->args,
            (std::vector<std::string>{"run", "--gpus", "\"device=GPU-a\"", "-e", "XLA_A=false",
                                      "-e", "TF_B=true", "--rm", "img"}));
  // Each spelling of the user's own: theirs stays, ours does not go in.
  for (const std::vector<std::string>& own : std::vector<std::vector<std::string>>{
           {"-e", "XLA_A=true"}, {"-eXLA_A=true"}, {"--env", "XLA_A"}, {"--env=XLA_A=1"}}) {
    std::vector<std::string> args = {"run"};
    args.insert(args.end(), own.begin(), own.end());
    args.push_back("img");
    result = RewriteDockerArgs(args, {"GPU-a"}, settings, "/tmp/cid");
    ASSERT_TRUE(result.ok());
    EXPECT_EQ(std::count(result->args.begin(), result->args.end(), "XLA_A=false"), 0)
        << own.front();
    EXPECT_EQ(std::count(result->args.begin(), result->args.end(), "TF_B=true"), 1) << own.front();
  }
  // Beside an --env-file, whose names cannot be seen, none.
  result = RewriteDockerArgs({"run", "--env-file", "f", "img"}, {"GPU-a"}, settings, "/tmp/cid");
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(std::count(result->args.begin(), result->args.end(), "-e"), 0);
  // Words after the image are the container's command, not docker's.
  result = RewriteDockerArgs({"run", "img", "-e", "XLA_A=1"}, {"GPU-a"}, settings, "/tmp/cid");
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(std::count(result->args.begin(), result->args.end(), "XLA_A=false"), 1);
}

}  // namespace
}  // namespace gpupin
