#include "sys/interrupt.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>

namespace gpupin {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

bool Readable(int fd) {
  pollfd ready = {fd, POLLIN, 0};
  return poll(&ready, 1, 0) == 1 && (ready.revents & POLLIN);
}

TEST(InterruptGuard, RecordsTheFirstStopSignalAndMakesTheWakeDescriptorReadable) {
  for (int stop : {SIGINT, SIGTERM, SIGHUP}) {
    InterruptGuard guard;
    ASSERT_GE(guard.wake_fd(), 0);
    EXPECT_FALSE(guard.interrupted());
    EXPECT_FALSE(Readable(guard.wake_fd()));
    raise(stop);
    raise(SIGINT);
    EXPECT_TRUE(guard.interrupted());
    EXPECT_EQ(guard.signal(), stop);
    EXPECT_TRUE(Readable(guard.wake_fd()));
  }
}

TEST(InterruptGuard, ASignalBeforeTheSleepStillEndsItAtOnce) {
  InterruptGuard guard;
  raise(SIGTERM);
  auto start = Clock::now();
  EXPECT_FALSE(guard.Sleep(5000));
  EXPECT_LT(Clock::now() - start, 1s);
}

TEST(InterruptGuard, TheDestructorRestoresThePreviousHandlers) {
  struct sigaction before = {};
  sigaction(SIGHUP, nullptr, &before);
  { InterruptGuard guard; }
  struct sigaction after = {};
  sigaction(SIGHUP, nullptr, &after);
  EXPECT_EQ(after.sa_handler, before.sa_handler);
}

TEST(InterruptGuard, AnIgnoredSignalStaysIgnored) {
  struct sigaction ignore = {};
  ignore.sa_handler = SIG_IGN;
  struct sigaction before = {};
  sigaction(SIGHUP, &ignore, &before);
  {
    InterruptGuard guard;
    raise(SIGHUP);
    EXPECT_FALSE(guard.interrupted());
    struct sigaction during = {};
    sigaction(SIGHUP, nullptr, &during);
    EXPECT_EQ(during.sa_handler, SIG_IGN);
  }
  sigaction(SIGHUP, &before, nullptr);
}

TEST(DieBySignal, TheParentSeesTheProcessKilledByThatSignal) {
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    InterruptGuard guard;
    raise(SIGINT);
    _exit(guard.interrupted() ? DieBySignal(guard.signal()) : 0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status)) << "exited " << WEXITSTATUS(status);
  EXPECT_EQ(WTERMSIG(status), SIGINT);
}

TEST(EndsWithoutCore, TerminatingSignalsButNotCoreDumpingOnes) {
  for (int signal : {SIGINT, SIGTERM, SIGHUP, SIGKILL, SIGPIPE, SIGUSR1, SIGRTMIN})
    EXPECT_TRUE(EndsWithoutCore(signal)) << signal;
  for (int signal : {SIGSEGV, SIGABRT, SIGQUIT, SIGBUS, SIGFPE, SIGILL, SIGSTOP, SIGCHLD, 0})
    EXPECT_FALSE(EndsWithoutCore(signal)) << signal;
}

}  // namespace
}  // namespace gpupin
