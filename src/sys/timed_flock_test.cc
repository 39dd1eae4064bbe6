#include "sys/timed_flock.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>

#include "testing/temp_dir.h"

namespace gpupin {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

class TimedFlock : public ::testing::Test {
 protected:
  int Open() {
    int fd = open((tmp_ / "lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    EXPECT_GE(fd, 0);
    return fd;
  }
  testing::TempDir tmp_;
};

TEST_F(TimedFlock, TakesAFreeLockAtOnce) {
  int fd = Open();
  EXPECT_EQ(LockExclusiveWithin(fd, 1s), FlockOutcome::kLocked);
  // It is ours: another description of the file cannot have it.
  int other = Open();
  EXPECT_NE(flock(other, LOCK_EX | LOCK_NB), 0);
  close(other);
  close(fd);
}

TEST_F(TimedFlock, GivesUpAtTheDeadlineAndRestoresSigalrm) {
  int held = Open();
  ASSERT_EQ(flock(held, LOCK_EX), 0);
  struct sigaction before = {};
  before.sa_handler = SIG_IGN;
  sigemptyset(&before.sa_mask);
  ASSERT_EQ(sigaction(SIGALRM, &before, nullptr), 0);

  int fd = Open();
  auto start = Clock::now();
  EXPECT_EQ(LockExclusiveWithin(fd, 150ms), FlockOutcome::kTimedOut);
  auto waited = Clock::now() - start;
  EXPECT_GE(waited, 150ms);
  EXPECT_LT(waited, 2s);

  struct sigaction after = {};
  ASSERT_EQ(sigaction(SIGALRM, nullptr, &after), 0);
  EXPECT_EQ(after.sa_handler, SIG_IGN);
  itimerval timer = {};
  ASSERT_EQ(getitimer(ITIMER_REAL, &timer), 0);
  EXPECT_EQ(timer.it_value.tv_sec, 0);
  EXPECT_EQ(timer.it_value.tv_usec, 0);
  signal(SIGALRM, SIG_DFL);
  close(fd);
  close(held);
}

TEST_F(TimedFlock, GivesUpEvenWithSigalrmBlockedAndKeepsItBlocked) {
  int held = Open();
  ASSERT_EQ(flock(held, LOCK_EX), 0);
  sigset_t alarm_only;
  sigemptyset(&alarm_only);
  sigaddset(&alarm_only, SIGALRM);
  sigset_t before;
  ASSERT_EQ(sigprocmask(SIG_BLOCK, &alarm_only, &before), 0);

  int fd = Open();
  auto start = Clock::now();
  EXPECT_EQ(LockExclusiveWithin(fd, 100ms), FlockOutcome::kTimedOut);
  EXPECT_LT(Clock::now() - start, 2s);

  sigset_t after;
  ASSERT_EQ(sigprocmask(SIG_SETMASK, &before, &after), 0);
  EXPECT_EQ(sigismember(&after, SIGALRM), 1);
  close(fd);
  close(held);
}

TEST_F(TimedFlock, WaitsForAnotherProcessAndGetsTheLockWhenItLetsGo) {
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  pid_t holder = fork();
  if (holder == 0) {
    int fd = Open();
    if (flock(fd, LOCK_EX) != 0) _exit(1);
    (void)!write(ready[1], "x", 1);
    usleep(200'000);
    _exit(0);  // exiting lets go of the lock
  }
  char byte;
  ASSERT_EQ(read(ready[0], &byte, 1), 1);
  int fd = Open();
  auto start = Clock::now();
  EXPECT_EQ(LockExclusiveWithin(fd, 10s), FlockOutcome::kLocked);
  auto waited = Clock::now() - start;
  EXPECT_GE(waited, 100ms);  // it did wait for the holder
  EXPECT_LT(waited, 5s);     // and not until the deadline
  int status = 0;
  waitpid(holder, &status, 0);
  EXPECT_EQ(status, 0);
  close(fd);
  close(ready[0]);
  close(ready[1]);
}

TEST_F(TimedFlock, ReportsAnUnlockableDescriptor) {
  errno = 0;
  EXPECT_EQ(LockExclusiveWithin(-1, 1s), FlockOutcome::kFailed);
  EXPECT_EQ(errno, EBADF);
}

}  // namespace
}  // namespace gpupin
