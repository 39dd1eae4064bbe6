#include "sys/spawn.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "sys/procfs.h"

namespace gpupin {
namespace {

TEST(SpawnTest, ChildRunsWithTheEnvironmentGivenAtStart) {
  Result<PendingChild> child = CreatePendingChild();
  ASSERT_TRUE(child.ok());
  EXPECT_GT(child->identity().start_time_ticks, 0u) << "the lease needs the job's start time";
  ASSERT_TRUE(
      child
          ->Start({"sh", "-c", "test \"$GPUPIN_X\" = yes && test -z \"${HOME+set}\" && exit 7"},
                  {{"GPUPIN_X", "yes"}, {"HOME", std::nullopt}})
          .ok());
  EXPECT_EQ(child->Wait(), 7);
}

TEST(SpawnTest, KilledChildReportsSignalLikeAShell) {
  Result<PendingChild> child = CreatePendingChild();
  ASSERT_TRUE(child.ok());
  ASSERT_TRUE(child->Start({"sleep", "30"}, {}).ok());
  EXPECT_FALSE(child->Ended());
  kill(child->pid(), SIGKILL);
  for (int i = 0; i < 200 && !child->Ended(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_TRUE(child->Ended());
  EXPECT_EQ(child->Wait(), 128 + SIGKILL) << "Ended() must not reap the child";
}

TEST(SpawnTest, SignalSentToUsIsForwardedToTheChild) {
  Result<PendingChild> child = CreatePendingChild();
  ASSERT_TRUE(child.ok());
  ASSERT_TRUE(child->Start({"sleep", "30"}, {}).ok());
  kill(getpid(), SIGTERM);  // as `kill <gpupin>` from another shell
  EXPECT_EQ(child->Wait(), 128 + SIGTERM);
}

TEST(SpawnTest, MissingCommandIsAnErrorNotAHang) {
  Result<PendingChild> child = CreatePendingChild();
  ASSERT_TRUE(child.ok());
  Status started = child->Start({"/nonexistent/gpupin-no-such-command"}, {});
  ASSERT_FALSE(started.ok());
  EXPECT_NE(started.error().message.find("No such file"), std::string::npos)
      << started.error().message;
}

// A file in a fresh directory with the given text and mode.
std::string WriteTool(const std::string& dir, const std::string& text, mode_t mode) {
  std::filesystem::create_directories(dir);
  std::string path = dir + "/gpupin-test-tool";
  std::ofstream(path) << text;
  chmod(path.c_str(), mode);
  return path;
}

class SpawnPathTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/gpupin-spawn.XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string dir_;
};

TEST_F(SpawnPathTest, CommandIsLookedUpOnThePathTheJobGets) {
  WriteTool(dir_ + "/a", "#!/bin/sh\nexit 3\n", 0644);  // not executable: skipped, as execvp does
  WriteTool(dir_ + "/b", "#!/bin/sh\nexit 4\n", 0755);
  Result<PendingChild> child = CreatePendingChild();
  ASSERT_TRUE(child.ok());
  ASSERT_TRUE(child->Start({"gpupin-test-tool"}, {{"PATH", dir_ + "/a:" + dir_ + "/b"}}).ok());
  EXPECT_EQ(child->Wait(), 4);
}

TEST_F(SpawnPathTest, OnlyANonExecutableMatchIsPermissionDenied) {
  WriteTool(dir_ + "/a", "#!/bin/sh\nexit 3\n", 0644);
  Result<PendingChild> child = CreatePendingChild();
  ASSERT_TRUE(child.ok());
  Status started = child->Start({"gpupin-test-tool"}, {{"PATH", dir_ + "/a:" + dir_ + "/none"}});
  ASSERT_FALSE(started.ok());
  EXPECT_NE(started.error().message.find("Permission denied"), std::string::npos)
      << started.error().message;
}

TEST_F(SpawnPathTest, ScriptWithoutInterpreterLineRunsUnderSh) {
  std::string tool = WriteTool(dir_, "exit $1\n", 0755);
  Result<PendingChild> child = CreatePendingChild();
  ASSERT_TRUE(child.ok());
  ASSERT_TRUE(child->Start({tool, "6"}, {}).ok());
  EXPECT_EQ(child->Wait(), 6);
}

TEST_F(SpawnPathTest, AMissingInterpreterIsNamedNotTheScript) {
  std::string tool = WriteTool(dir_, "#!" + dir_ + "/no-such-interpreter\nexit 0\n", 0755);
  Result<PendingChild> child = CreatePendingChild();
  ASSERT_TRUE(child.ok());
  Status started = child->Start({tool}, {});
  ASSERT_FALSE(started.ok());
  EXPECT_NE(started.error().message.find("the interpreter its #! line names"), std::string::npos)
      << started.error().message;
}

TEST_F(SpawnPathTest, AMissingInterpreterIsFoundThroughTheJobsOwnPath) {
  // The script lies only on the PATH the job is given, not on gpupin's.
  WriteTool(dir_ + "/a", "#!" + dir_ + "/no-such-interpreter\nexit 0\n", 0755);
  Result<PendingChild> child = CreatePendingChild();
  ASSERT_TRUE(child.ok());
  Status started = child->Start({"gpupin-test-tool"}, {{"PATH", dir_ + "/a"}});
  ASSERT_FALSE(started.ok());
  EXPECT_NE(started.error().message.find("the interpreter its #! line names"), std::string::npos)
      << started.error().message;
}

volatile sig_atomic_t g_handler_ran = 0;

// The waiting child shares our memory: a handler of ours running in it would
// act on our state. It must meet the signal as a fresh process would.
TEST(SpawnTest, OurSignalHandlersNeverRunInTheWaitingChild) {
  g_handler_ran = 0;
  struct sigaction action = {};
  struct sigaction previous = {};
  action.sa_handler = [](int) { g_handler_ran = 1; };
  sigaction(SIGUSR1, &action, &previous);
  {
    Result<PendingChild> child = CreatePendingChild();
    ASSERT_TRUE(child.ok());
    kill(child->pid(), SIGUSR1);
    siginfo_t info = {};
    for (int i = 0; i < 200 && info.si_pid == 0; ++i) {
      ASSERT_EQ(waitid(P_PID, static_cast<id_t>(child->pid()), &info, WEXITED | WNOHANG | WNOWAIT),
                0);
      if (info.si_pid == 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ASSERT_NE(info.si_pid, 0) << "the child survived SIGUSR1: a handler of ours ran in it";
    EXPECT_EQ(info.si_code, CLD_KILLED);
    EXPECT_EQ(info.si_status, SIGUSR1);
  }
  sigaction(SIGUSR1, &previous, nullptr);
  EXPECT_EQ(g_handler_ran, 0);
}

TEST(SpawnTest, AbandonedChildExitsAndIsReaped) {
  pid_t pid = 0;
  {
    Result<PendingChild> child = CreatePendingChild();
    ASSERT_TRUE(child.ok());
    pid = child->pid();
  }  // destroyed before Start: e.g. no GPU could be leased
  EXPECT_FALSE(ProcFs().Stat(pid).has_value()) << "no zombie or waiting child is left behind";
}

}  // namespace
}  // namespace gpupin
