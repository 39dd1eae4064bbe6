#include "sys/spawn.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "sys/procfs.h"

namespace gpupin {
namespace {

TEST(SpawnTest, ChildRunsWithTheEnvironmentGivenAtStart) {
  Result<PendingChild> child = Fork();
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
  Result<PendingChild> child = Fork();
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
  Result<PendingChild> child = Fork();
  ASSERT_TRUE(child.ok());
  ASSERT_TRUE(child->Start({"sleep", "30"}, {}).ok());
  kill(getpid(), SIGTERM);  // as `kill <gpupin>` from another shell
  EXPECT_EQ(child->Wait(), 128 + SIGTERM);
}

TEST(SpawnTest, MissingCommandIsAnErrorNotAHang) {
  Result<PendingChild> child = Fork();
  ASSERT_TRUE(child.ok());
  Status started = child->Start({"/nonexistent/gpupin-no-such-command"}, {});
  ASSERT_FALSE(started.ok());
  EXPECT_NE(started.error().message.find("No such file"), std::string::npos)
      << started.error().message;
}

TEST(SpawnTest, AbandonedChildExitsAndIsReaped) {
  pid_t pid = 0;
  {
    Result<PendingChild> child = Fork();
    ASSERT_TRUE(child.ok());
    pid = child->pid();
  }  // destroyed before Start: e.g. no GPU could be leased
  EXPECT_FALSE(ProcFs().Stat(pid).has_value()) << "no zombie or waiting child is left behind";
}

}  // namespace
}  // namespace gpupin
