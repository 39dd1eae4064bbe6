#include "sys/process_ender.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>

namespace gpupin {
namespace {

extern "C" void ExitOnTerm(int) { _exit(0); }

// A child that waits forever: with the default SIGTERM, ignoring it, or
// exiting from a handler.
enum class OnTerm { kDefault, kIgnore, kHandle };

pid_t StartChild(OnTerm on_term) {
  pid_t pid = fork();
  if (pid == 0) {
    if (on_term == OnTerm::kIgnore) signal(SIGTERM, SIG_IGN);
    if (on_term == OnTerm::kHandle) signal(SIGTERM, ExitOnTerm);
    while (true) pause();
  }
  return pid;
}

EndTarget TargetOf(const ProcFs& procfs, pid_t pid) {
  // The child may still be between fork and pause: its start time is set.
  return {pid, procfs.Stat(pid)->start_time_ticks};
}

// The child's end, reaped.
int Reap(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return status;
}

TEST(EndProcessesTest, TermThenKillAfterTheGracePeriod) {
  ProcFs procfs;
  pid_t polite = StartChild(OnTerm::kDefault);
  pid_t stubborn = StartChild(OnTerm::kIgnore);
  usleep(50'000);  // both have set their dispositions
  std::vector<EndOutcome> outcomes =
      EndProcesses(procfs, {TargetOf(procfs, polite), TargetOf(procfs, stubborn)}, 200);
  EXPECT_EQ(outcomes[0], EndOutcome::kTerminated);
  EXPECT_EQ(outcomes[1], EndOutcome::kKilled);
  EXPECT_EQ(WTERMSIG(Reap(polite)), SIGTERM);
  EXPECT_EQ(WTERMSIG(Reap(stubborn)), SIGKILL);
}

TEST(EndProcessesTest, AStoppedProcessIsContinuedToActOnTerm) {
  ProcFs procfs;
  pid_t child = StartChild(OnTerm::kHandle);
  usleep(50'000);
  kill(child, SIGSTOP);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, WUNTRACED), child);
  ASSERT_TRUE(WIFSTOPPED(status));
  std::vector<EndOutcome> outcomes = EndProcesses(procfs, {TargetOf(procfs, child)}, 5000);
  EXPECT_EQ(outcomes[0], EndOutcome::kTerminated);
  status = Reap(child);
  EXPECT_TRUE(WIFEXITED(status)) << "its own handler ran, not SIGKILL";
}

TEST(EndProcessesTest, APidNowNamingAnotherProcessIsLeftAlone) {
  ProcFs procfs;
  pid_t child = StartChild(OnTerm::kDefault);
  EndTarget target = TargetOf(procfs, child);
  target.start_time_ticks += 1;
  std::vector<EndOutcome> outcomes = EndProcesses(procfs, {target}, 100);
  EXPECT_EQ(outcomes[0], EndOutcome::kAlreadyGone);
  EXPECT_EQ(waitpid(child, nullptr, WNOHANG), 0) << "still running";
  kill(child, SIGKILL);
  Reap(child);
}

TEST(EndProcessesTest, AnExitedProcessIsAlreadyGone) {
  ProcFs procfs;
  pid_t child = StartChild(OnTerm::kDefault);
  EndTarget target = TargetOf(procfs, child);
  kill(child, SIGKILL);
  Reap(child);
  EXPECT_EQ(EndProcesses(procfs, {target}, 100)[0], EndOutcome::kAlreadyGone);
}

TEST(EndOutcomeTest, Names) {
  EXPECT_STREQ(EndOutcomeName(EndOutcome::kKilled), "killed");
  EXPECT_TRUE(EndedOrGone(EndOutcome::kAlreadyGone));
  EXPECT_FALSE(EndedOrGone(EndOutcome::kNotPermitted));
}

}  // namespace
}  // namespace gpupin
