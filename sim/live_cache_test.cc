#include "sim/live_cache.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "sim/sim_test_util.h"

namespace gpupin::sim {
namespace {

const char kUuid[] = "GPU-8932f937-d72c-4106-c12f-20bd9faed9f6";

LiveProcess EntryFor(int pid, uint64_t used = 1ULL << 30) {
  // Not `"p" + std::to_string(pid)`: GCC 12 at -O3 reports a false -Wrestrict on it.
  return LiveProcess{pid, *ProcessStartTime(pid), {kUuid}, used, false, fmt::format("p{}", pid)};
}

std::string EntryFile(const std::string& dir, const LiveProcess& p) {
  return dir + "/" + std::to_string(p.pid) + "-" + std::to_string(p.start_time_ticks) + ".json";
}

std::vector<int> Pids(const std::vector<LiveProcess>& live) {
  std::vector<int> pids;
  for (const auto& p : live) pids.push_back(p.pid);
  std::sort(pids.begin(), pids.end());
  return pids;
}

// Children that sleep until killed, to register as further live processes.
class Sleepers {
 public:
  explicit Sleepers(int n) {
    for (int i = 0; i < n; ++i) {
      pid_t child = fork();
      if (child == 0) {
        pause();
        _exit(0);
      }
      EXPECT_GT(child, 0);
      if (child > 0) pids_.push_back(child);
    }
    unreaped_ = pids_;
  }
  ~Sleepers() {
    while (!unreaped_.empty()) Kill(unreaped_.back());
  }
  const std::vector<int>& pids() const { return pids_; }
  void Kill(pid_t pid) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    std::erase(unreaped_, pid);  // its pid may now be another process's
  }

 private:
  std::vector<int> pids_;
  std::vector<int> unreaped_;
};

TEST(SimLiveCache, EntryRegisteredAfterTheFirstListShowsOnTheNext) {
  TempDir tmp;
  LiveCache cache(tmp.path());
  EXPECT_TRUE(cache.List().empty());
  EXPECT_TRUE(cache.List().empty());
  ASSERT_TRUE(RegisterLive(tmp.path(), EntryFor(getpid())).ok());
  EXPECT_EQ(Pids(cache.List()), std::vector<int>{getpid()});
}

TEST(SimLiveCache, UnregisteredEntryVanishesOnTheNextList) {
  TempDir tmp;
  LiveProcess me = EntryFor(getpid());
  ASSERT_TRUE(RegisterLive(tmp.path(), me).ok());
  LiveCache cache(tmp.path());
  EXPECT_EQ(cache.List().size(), 1u);
  EXPECT_EQ(cache.List().size(), 1u);
  UnregisterLive(tmp.path(), me);
  EXPECT_TRUE(cache.List().empty());
}

TEST(SimLiveCache, KilledProcessVanishesOnTheNextList) {
  TempDir tmp;
  Sleepers sleepers(2);
  pid_t victim = sleepers.pids()[0];
  pid_t zombie = sleepers.pids()[1];
  ASSERT_TRUE(RegisterLive(tmp.path(), EntryFor(victim)).ok());
  ASSERT_TRUE(RegisterLive(tmp.path(), EntryFor(zombie)).ok());
  LiveCache cache(tmp.path());
  EXPECT_EQ(cache.List().size(), 2u);
  EXPECT_EQ(cache.List().size(), 2u);  // answered from the cache: nothing changed

  std::string victim_file = EntryFile(tmp.path(), EntryFor(victim));
  sleepers.Kill(victim);
  EXPECT_EQ(Pids(cache.List()), std::vector<int>{zombie});
  // The stale file was removed on the way, as ListLive does.
  EXPECT_FALSE(std::filesystem::exists(victim_file));

  // Dead but not reaped: a zombie holds no GPU memory either.
  kill(zombie, SIGKILL);
  siginfo_t info{};
  ASSERT_EQ(waitid(P_PID, zombie, &info, WEXITED | WNOWAIT), 0);
  EXPECT_TRUE(cache.List().empty());
}

TEST(SimLiveCache, DirectoryCreatedAfterTheCache) {
  TempDir tmp;
  std::string parent = tmp.path() + "/parent";
  std::string dir = parent + "/live";
  ASSERT_TRUE(std::filesystem::create_directory(parent));
  LiveCache cache(dir);
  EXPECT_TRUE(cache.List().empty());
  LiveProcess me = EntryFor(getpid());
  ASSERT_TRUE(RegisterLive(dir, me).ok());
  EXPECT_EQ(cache.List().size(), 1u);

  // Removed and made again: the cache follows the new directory.
  std::filesystem::remove_all(dir);
  EXPECT_TRUE(cache.List().empty());
  ASSERT_TRUE(RegisterLive(dir, me).ok());
  EXPECT_EQ(cache.List().size(), 1u);

  // Replaced by another directory under the same name.
  std::filesystem::rename(dir, tmp.path() + "/old");
  std::filesystem::create_directory(dir);
  EXPECT_TRUE(cache.List().empty());
  std::filesystem::rename(EntryFile(tmp.path() + "/old", me), EntryFile(dir, me));
  EXPECT_EQ(cache.List().size(), 1u);

  // Its parent renamed and the path made again.
  std::filesystem::rename(parent, tmp.path() + "/moved");
  std::filesystem::create_directories(dir);
  EXPECT_TRUE(cache.List().empty());
  ASSERT_TRUE(RegisterLive(dir, me).ok());
  EXPECT_EQ(cache.List().size(), 1u);
}

TEST(SimLiveCache, EveryChangeInQuickSuccessionIsSeen) {
  TempDir tmp;
  Sleepers sleepers(6);
  LiveCache cache(tmp.path());
  std::vector<int> expected;
  for (int pid : sleepers.pids()) {
    ASSERT_TRUE(RegisterLive(tmp.path(), EntryFor(pid)).ok());
    expected.push_back(pid);
    std::sort(expected.begin(), expected.end());
    ASSERT_EQ(Pids(cache.List()), expected);
  }
  // The same entry rewritten: same name and size, within one clock tick.
  for (uint64_t used = 1; used <= 9; ++used) {
    ASSERT_TRUE(RegisterLive(tmp.path(), EntryFor(sleepers.pids()[0], used)).ok());
    const auto& live = cache.List();
    auto it = std::find_if(live.begin(), live.end(),
                           [&](const LiveProcess& p) { return p.pid == sleepers.pids()[0]; });
    ASSERT_NE(it, live.end());
    ASSERT_EQ(it->used_memory_bytes, used);
  }
  // Two changes between lists, one of them a death.
  UnregisterLive(tmp.path(), EntryFor(sleepers.pids()[1]));
  sleepers.Kill(sleepers.pids()[2]);
  std::erase(expected, sleepers.pids()[1]);
  std::erase(expected, sleepers.pids()[2]);
  ASSERT_EQ(Pids(cache.List()), expected);
  // An entry written in place (not renamed) is seen as soon as it is
  // written, before it is even closed.
  LiveProcess me = EntryFor(getpid(), 7);
  std::string file = EntryFile(tmp.path(), me);
  int fd = open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(Pids(cache.List()), expected);
  ASSERT_TRUE(RegisterLive(tmp.path() + "/staging", me).ok());
  std::string text;
  std::getline(std::ifstream(EntryFile(tmp.path() + "/staging", me)), text);
  ASSERT_EQ(write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
  expected.push_back(getpid());
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(Pids(cache.List()), expected);
  close(fd);
  // Made unreadable: skipped, as ListLive skips it.
  if (geteuid() != 0) {
    chmod(file.c_str(), 0);
    std::erase(expected, getpid());
    EXPECT_EQ(Pids(cache.List()), expected);
  }
  EXPECT_EQ(Pids(cache.List()), Pids(ListLive(tmp.path())));
}

}  // namespace
}  // namespace gpupin::sim
