#include "sys/change_watch.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <optional>
#include <thread>

#include "sys/procfs.h"
#include "sys/thread_cpu_time.h"
#include "testing/descriptor_limit.h"
#include "testing/processes.h"
#include "testing/temp_dir.h"

namespace gpupin {
namespace {

using testing::TempDir;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr auto& StartTime = testing::RealStartTime;

// A child that lives until killed, and its identity.
struct Sleeper {
  pid_t pid = fork();
  ProcessIdentity identity;
  Sleeper() {
    if (pid == 0) {
      pause();
      _exit(0);
    }
    identity = {pid, StartTime(pid).value_or(0)};
  }
  ~Sleeper() {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
  }
};

struct Watched {
  TempDir tmp;
  Result<StateDir> dir = StateDir::Open(tmp / "leases");
  ChangeWatch watch = ChangeWatch::ForDirectories({&dir.value()});
};

// A watch on queue/ahead.json, as a waiter behind it keeps.
struct AheadWatched {
  TempDir tmp;
  Result<StateDir> dir = StateDir::Open(tmp / "queue");
  std::optional<ChangeWatch> watch;
  AheadWatched() {
    if (dir.ok() && dir->WriteFileAtomic("ahead.json", "{}").ok())
      watch = ChangeWatch::ForFile(*dir, "ahead.json");
  }
};

// Runs `action` on another thread after a short delay and returns how long
// after the action Wait returned, and why.
std::pair<WakeReason, std::chrono::nanoseconds> WakeAfter(ChangeWatch& watch,
                                                          const std::function<void()>& action) {
  std::atomic<int64_t> acted_ns{0};
  std::thread actor([&] {
    std::this_thread::sleep_for(50ms);
    acted_ns = Clock::now().time_since_epoch().count();
    action();
  });
  WakeReason reason = watch.Wait(Clock::now() + 5s, 10s);
  auto woke = Clock::now().time_since_epoch();
  actor.join();
  return {reason, woke - std::chrono::nanoseconds(acted_ns.load())};
}

TEST(ChangeWatch, ManyWatchedProcessesLeaveDescriptorsToListWith) {
  Watched w;
  ASSERT_TRUE(w.dir.ok());
  std::vector<std::unique_ptr<Sleeper>> holders;
  std::vector<ProcessIdentity> identities;
  for (int i = 0; i < 40; ++i) {
    holders.push_back(std::make_unique<Sleeper>());
    identities.push_back(holders.back()->identity);
  }
  // Room for 24 more descriptors than are open: a pidfd for each of the 40
  // would leave none.
  testing::DescriptorLimit limit(testing::OpenDescriptors() + 24);
  w.watch.WatchProcesses(identities, &StartTime);
  EXPECT_TRUE(w.watch.needs_poll()) << "the processes beyond the bound are polled for";
  EXPECT_TRUE(w.dir->List().ok());
  auto [reason, after] = WakeAfter(w.watch, [&] { holders.front().reset(); });
  EXPECT_EQ(reason, WakeReason::kProcessExited);
}

TEST(ChangeWatch, WakesWithinMillisecondsWhenAHolderIsKilled) {
  Watched w;
  ASSERT_TRUE(w.dir.ok());
  Sleeper holder;
  w.watch.WatchProcesses({holder.identity}, &StartTime);
  EXPECT_FALSE(w.watch.needs_poll());
  auto [reason, latency] = WakeAfter(w.watch, [&] { kill(holder.pid, SIGKILL); });
  EXPECT_EQ(reason, WakeReason::kProcessExited);
  EXPECT_LT(latency, 100ms);
}

TEST(ChangeWatch, WakesWithinMillisecondsWhenALeaseFileIsRemoved) {
  Watched w;
  ASSERT_TRUE(w.dir.ok());
  ASSERT_TRUE(w.dir->WriteFileAtomic("a.json", "{}").ok());
  // The write above is an event too; a waiter consumes it first.
  EXPECT_EQ(w.watch.Wait(Clock::now() + 1s, 10s), WakeReason::kStateChanged);
  auto [reason, latency] = WakeAfter(w.watch, [&] { (void)w.dir->Remove("a.json"); });
  EXPECT_EQ(reason, WakeReason::kStateChanged);
  EXPECT_LT(latency, 100ms);
}

TEST(ChangeWatch, WakesWhenALeaseIsWritten) {
  Watched w;
  ASSERT_TRUE(w.dir.ok());
  auto [reason, latency] =
      WakeAfter(w.watch, [&] { (void)w.dir->WriteFileAtomic("b.json", "{}"); });
  EXPECT_EQ(reason, WakeReason::kStateChanged);
  EXPECT_LT(latency, 100ms);
}

TEST(ChangeWatch, ChangesForgottenSoFarDoNotWakeButLaterOnesDo) {
  Watched w;
  ASSERT_TRUE(w.dir.ok());
  ASSERT_TRUE(w.dir->WriteFileAtomic("own.json", "{}").ok());
  ASSERT_TRUE(w.dir->Remove("own.json").ok());
  w.watch.ForgetChangesSoFar();
  EXPECT_EQ(w.watch.Wait(Clock::now() + 50ms, 10s), WakeReason::kDeadline);
  auto [reason, latency] =
      WakeAfter(w.watch, [&] { (void)w.dir->WriteFileAtomic("theirs.json", "{}"); });
  EXPECT_EQ(reason, WakeReason::kStateChanged);
  EXPECT_LT(latency, 100ms);
}

TEST(ChangeWatch, AFileWatchWakesWhenThatFileGoesAndNotForOthers) {
  AheadWatched a;
  ASSERT_TRUE(a.watch);
  Result<StateDir>& dir = a.dir;
  ChangeWatch& watch = *a.watch;
  ASSERT_TRUE(dir->WriteFileAtomic("behind.json", "{}").ok());
  EXPECT_EQ(watch.Wait(Clock::now() + 100ms, 10s), WakeReason::kDeadline);
  auto [reason, latency] = WakeAfter(watch, [&] { (void)dir->Remove("ahead.json"); });
  EXPECT_EQ(reason, WakeReason::kStateChanged);
  EXPECT_LT(latency, 100ms);

  ChangeWatch gone = ChangeWatch::ForFile(*dir, "ahead.json");
  EXPECT_EQ(gone.Wait(Clock::now() + 1s, 10s), WakeReason::kStateChanged);
  EXPECT_FALSE(gone.needs_poll());
}

TEST(ChangeWatch, NotifyingTheWatchedFileIsANudgeATouchOrItsRemovalAChange) {
  TempDir tmp;
  Result<StateDir> dir = StateDir::Open(tmp / "queue");
  ASSERT_TRUE(dir.ok());
  ASSERT_TRUE(dir->WriteFileAtomic("ahead.json", "{}").ok());
  Result<int64_t> changed = dir->ChangeTimeNs("ahead.json");
  ASSERT_TRUE(changed.ok());
  ChangeWatch watch = ChangeWatch::ForFile(*dir, "ahead.json");
  std::this_thread::sleep_for(30ms);  // past the file system's clock tick
  auto [reason, latency] = WakeAfter(watch, [&] { (void)dir->NotifyWatchers("ahead.json"); });
  EXPECT_EQ(reason, WakeReason::kNudged);
  EXPECT_LT(latency, 100ms);
  EXPECT_EQ(dir->ChangeTimeNs("ahead.json").value(), *changed) << "the file's place is kept";
  EXPECT_EQ(watch.Wait(Clock::now() + 100ms, 10s), WakeReason::kDeadline) << "reported once";
  ASSERT_EQ(utimensat(dir->fd(), "ahead.json", nullptr, 0), 0);
  EXPECT_EQ(watch.Wait(Clock::now() + 100ms, 10s), WakeReason::kStateChanged)
      << "new times on the file move it in the queue, which is ordered by them";
  for (int i = 0; i < 20; ++i) {  // the unlink's own IN_ATTRIB must not pass for a touch
    std::string name = fmt::format("t{}.json", i);
    ASSERT_TRUE(dir->WriteFileAtomic(name, "{}").ok());
    watch.WatchFile(*dir, name);
    EXPECT_EQ(WakeAfter(watch, [&] { (void)dir->Remove(name); }).first, WakeReason::kStateChanged);
  }
}

// Keeps this thread busy for `how_long` of its own CPU time, as a waiter
// reading the state after a wake-up (however loaded the machine).
void SpendCpu(std::chrono::milliseconds how_long) {
  const auto until = ThreadCpuTime() + how_long;
  while (ThreadCpuTime() < until) {
  }
}

// After a reported change the watch takes the next ones together for a
// while (20 ms here, the test spends little CPU on the first), but a
// process's exit still wakes it at once, even in a long quiet spell.
TEST(ChangeWatch, ChangesRightAfterAReportedOneAreTakenTogetherExitsAreNot) {
  Watched w;
  ASSERT_TRUE(w.dir.ok());
  ASSERT_TRUE(w.dir->WriteFileAtomic("a.json", "{}").ok());
  EXPECT_EQ(w.watch.Wait(Clock::now() + 1s, 10s), WakeReason::kStateChanged);
  const auto reported = Clock::now();
  ASSERT_TRUE(w.dir->WriteFileAtomic("b.json", "{}").ok());
  EXPECT_EQ(w.watch.Wait(Clock::now() + 1s, 10s), WakeReason::kStateChanged);
  const auto waited = Clock::now() - reported;
  EXPECT_GE(waited, 19ms);
  EXPECT_LT(waited, 260ms);

  SpendCpu(60ms);  // quiet for 240 ms
  ASSERT_TRUE(w.dir->WriteFileAtomic("c.json", "{}").ok());
  Sleeper holder;
  w.watch.WatchProcesses({holder.identity}, &StartTime);
  auto [reason, latency] = WakeAfter(w.watch, [&] { kill(holder.pid, SIGKILL); });
  EXPECT_EQ(reason, WakeReason::kProcessExited);
  EXPECT_LT(latency, 100ms) << "an exit is not held back";
}

// The quiet spell is counted in CPU spent on the change, not in time: a
// waiter that slept on something else meanwhile hears the next change at
// once, and one that spent a lot of CPU is quiet for at most 2 s.
TEST(ChangeWatch, TheQuietSpellFollowsTheCpuSpentAndIsBounded) {
  Watched w;
  ASSERT_TRUE(w.dir.ok());
  ASSERT_TRUE(w.dir->WriteFileAtomic("a.json", "{}").ok());
  EXPECT_EQ(w.watch.Wait(Clock::now() + 1s, 10s), WakeReason::kStateChanged);
  std::this_thread::sleep_for(300ms);  // blocked elsewhere: no CPU
  EXPECT_EQ(w.watch.Wait(Clock::now() + 20ms, 10s), WakeReason::kDeadline);
  auto [reason, latency] =
      WakeAfter(w.watch, [&] { (void)w.dir->WriteFileAtomic("b.json", "{}"); });
  EXPECT_EQ(reason, WakeReason::kStateChanged);
  EXPECT_LT(latency, 100ms);

  SpendCpu(800ms);  // four times is 3.2 s, bounded to 2
  ASSERT_TRUE(w.dir->WriteFileAtomic("c.json", "{}").ok());
  const auto written = Clock::now();
  EXPECT_EQ(w.watch.Wait(Clock::now() + 5s, 10s), WakeReason::kStateChanged);
  EXPECT_LT(Clock::now() - written, 2600ms);
}

// A file watch that reported a nudge holds the next ones back for a while,
// but the removal of its file, which moves the waiter up, is reported at
// once.
TEST(ChangeWatch, AfterANudgeFurtherNudgesWaitButTheFilesRemovalDoesNot) {
  AheadWatched a;
  ASSERT_TRUE(a.watch);
  Result<StateDir>& dir = a.dir;
  ChangeWatch& watch = *a.watch;
  ASSERT_TRUE(dir->NotifyWatchers("ahead.json").ok());
  EXPECT_EQ(watch.Wait(Clock::now() + 1s, 10s), WakeReason::kNudged);
  SpendCpu(60ms);  // quiet for 240 ms
  ASSERT_TRUE(dir->NotifyWatchers("ahead.json").ok());
  EXPECT_EQ(watch.Wait(Clock::now() + 50ms, 10s), WakeReason::kDeadline) << "a nudge while quiet";
  auto [reason_removed, removal_latency] =
      WakeAfter(watch, [&] { (void)dir->Remove("ahead.json"); });
  EXPECT_EQ(reason_removed, WakeReason::kStateChanged);
  EXPECT_LT(removal_latency, 100ms) << "the file's removal is not held back";

  ASSERT_TRUE(dir->WriteFileAtomic("next.json", "{}").ok());
  watch.WatchFile(*dir, "next.json");
  std::this_thread::sleep_for(30ms);
  auto [reason, latency] = WakeAfter(watch, [&] { (void)dir->NotifyWatchers("next.json"); });
  EXPECT_EQ(reason, WakeReason::kNudged) << "nudges are heard again";
  EXPECT_LT(latency, 100ms);
}

// A nudge that comes during the quiet spell is dropped: the kernel is not
// even asked for it (each would wake the waiter), and the waiter looks when
// the ticket ahead goes anyway. Nudges after the spell are heard.
TEST(ChangeWatch, ANudgeWhileQuietIsDroppedOneAfterItHeard) {
  AheadWatched a;
  ASSERT_TRUE(a.watch);
  ASSERT_TRUE(a.dir->NotifyWatchers("ahead.json").ok());
  EXPECT_EQ(a.watch->Wait(Clock::now() + 1s, 10s), WakeReason::kNudged);
  SpendCpu(40ms);  // quiet for 160 ms
  auto [reason, latency] = WakeAfter(*a.watch, [&] {
    (void)a.dir->NotifyWatchers("ahead.json");
    std::this_thread::sleep_for(250ms);
    (void)a.dir->NotifyWatchers("ahead.json");
  });
  EXPECT_EQ(reason, WakeReason::kNudged);
  EXPECT_GE(latency, 240ms) << "the nudge at 50 ms, in the spell, is not the one reported";
  EXPECT_LT(latency, 400ms);
}

// The caller read the ticket ahead, then its owner touched it (moving it in
// the queue) before the watch was set: the watch compares with what the
// caller read, and wakes at once.
TEST(ChangeWatch, AFileTouchedBetweenTheReadAndTheWatchWakesAtOnce) {
  AheadWatched a;
  ASSERT_TRUE(a.watch);
  Result<int64_t> read = a.dir->ChangeTimeNs("ahead.json");
  ASSERT_TRUE(read.ok());
  a.watch->WatchFile(*a.dir, "ahead.json", *read);
  EXPECT_EQ(a.watch->Wait(Clock::now() + 50ms, 10s), WakeReason::kDeadline) << "as read";
  std::this_thread::sleep_for(30ms);  // past the file system's clock tick
  ASSERT_EQ(utimensat(a.dir->fd(), "ahead.json", nullptr, 0), 0);
  ChangeWatch watch = ChangeWatch::ForFile(*a.dir, "ahead.json", *read);
  EXPECT_EQ(watch.Wait(Clock::now() + 1s, 10s), WakeReason::kStateChanged);
}

TEST(ChangeWatch, AFileWatchMovesToAnotherFile) {
  TempDir tmp;
  Result<StateDir> dir = StateDir::Open(tmp / "queue");
  ASSERT_TRUE(dir.ok());
  ASSERT_TRUE(dir->WriteFileAtomic("first.json", "{}").ok());
  ASSERT_TRUE(dir->WriteFileAtomic("second.json", "{}").ok());
  ChangeWatch watch = ChangeWatch::ForFile(*dir, "first.json");
  watch.WatchFile(*dir, "second.json");
  ASSERT_TRUE(dir->Remove("first.json").ok());
  EXPECT_EQ(watch.Wait(Clock::now() + 100ms, 10s), WakeReason::kDeadline);
  auto [reason, latency] = WakeAfter(watch, [&] { (void)dir->Remove("second.json"); });
  EXPECT_EQ(reason, WakeReason::kStateChanged);
  EXPECT_LT(latency, 100ms);
}

TEST(ChangeWatch, HiddenTempFilesAloneDoNotWake) {
  Watched w;
  ASSERT_TRUE(w.dir.ok());
  w.tmp.Write("leases/.temp", "partial");
  auto start = Clock::now();
  EXPECT_EQ(w.watch.Wait(Clock::now() + 150ms, 10s), WakeReason::kDeadline);
  EXPECT_GE(Clock::now() - start, 150ms);
}

TEST(ChangeWatch, AProcessAlreadyGoneOrReplacedWakesAtOnce) {
  Watched w;
  w.watch.WatchProcesses({testing::DeadProcess()}, &StartTime);
  EXPECT_EQ(w.watch.Wait(Clock::now() + 5s, 10s), WakeReason::kProcessExited);

  // Our own PID with another start time: the holder it names is gone.
  w.watch.WatchProcesses({{getpid(), StartTime(getpid()).value_or(0) + 1}}, &StartTime);
  EXPECT_EQ(w.watch.Wait(Clock::now() + 5s, 10s), WakeReason::kProcessExited);
}

TEST(ChangeWatch, AProcessHiddenFromUsIsWatchedByItsPidfd) {
  // /proc with hidepid: another user's process exists, its start time
  // unreadable. It is not reported as gone until it goes.
  Watched w;
  Sleeper hidden;
  auto unreadable = [](int) -> std::optional<uint64_t> { return std::nullopt; };
  w.watch.WatchProcesses({hidden.identity}, unreadable, [&](int pid) { return pid == hidden.pid; });
  EXPECT_EQ(w.watch.Wait(Clock::now() + 100ms, 10s), WakeReason::kDeadline);
  auto [reason, latency] = WakeAfter(w.watch, [&] { kill(hidden.pid, SIGKILL); });
  EXPECT_EQ(reason, WakeReason::kProcessExited);
  EXPECT_LT(latency, 100ms);
}

TEST(ChangeWatch, PastTheDeadlineAnExitAlreadySeenDoesNotKeepAWaiterUp) {
  Watched w;
  w.watch.WatchProcesses({testing::DeadProcess()}, &StartTime);
  EXPECT_EQ(w.watch.Wait(Clock::now() - 1ms, 10s), WakeReason::kDeadline);
}

TEST(ChangeWatch, AnExitIsReportedOnceAndWatchesCanBeReplaced) {
  Watched w;
  Sleeper first, second;
  w.watch.WatchProcesses({first.identity, second.identity}, &StartTime);
  kill(first.pid, SIGKILL);
  EXPECT_EQ(w.watch.Wait(Clock::now() + 5s, 10s), WakeReason::kProcessExited);
  EXPECT_EQ(w.watch.Wait(Clock::now() + 100ms, 10s), WakeReason::kDeadline);
  w.watch.WatchProcesses({second.identity}, &StartTime);
  auto [reason, latency] = WakeAfter(w.watch, [&] { kill(second.pid, SIGKILL); });
  EXPECT_EQ(reason, WakeReason::kProcessExited);
  EXPECT_LT(latency, 100ms);
}

TEST(ChangeWatch, PollsWhenAskedAndStopsAtTheDeadline) {
  Watched w;
  auto start = Clock::now();
  EXPECT_EQ(w.watch.Wait(std::nullopt, 100ms, /*poll_anyway=*/true), WakeReason::kPoll);
  EXPECT_GE(Clock::now() - start, 100ms);
  EXPECT_EQ(w.watch.Wait(Clock::now() + 50ms, 10s, true), WakeReason::kDeadline);
}

TEST(ChangeWatch, WithoutDirectoriesItStillWatchesProcesses) {
  ChangeWatch watch = ChangeWatch::ForDirectories({});
  Sleeper holder;
  watch.WatchProcesses({holder.identity}, &StartTime);
  kill(holder.pid, SIGKILL);
  EXPECT_EQ(watch.Wait(Clock::now() + 5s, 10s), WakeReason::kProcessExited);
}

TEST(ChangeWatch, AReadableInterruptDescriptorEndsTheWaitBeforeAnyOtherReason) {
  Watched w;
  ASSERT_TRUE(w.dir.ok());
  int wake[2];
  ASSERT_EQ(pipe(wake), 0);
  w.watch.WakeOnInterrupt(wake[0]);
  auto [reason, latency] = WakeAfter(w.watch, [&] { ASSERT_EQ(write(wake[1], "x", 1), 1); });
  EXPECT_EQ(reason, WakeReason::kInterrupted);
  EXPECT_LT(latency, 100ms);
  // A lease change at the same time does not hide the interrupt.
  ASSERT_TRUE(w.dir->WriteFileAtomic("c.json", "{}").ok());
  EXPECT_EQ(w.watch.Wait(Clock::now() + 1s, 10s), WakeReason::kInterrupted);
  close(wake[0]);
  close(wake[1]);
}

}  // namespace
}  // namespace gpupin
