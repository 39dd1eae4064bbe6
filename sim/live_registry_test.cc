#include "sim/live_registry.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "sim/sim_test_util.h"

namespace gpupin::sim {
namespace {

LiveProcess Self(const std::string& uuid) {
  return LiveProcess{getpid(), *ProcessStartTime(getpid()), {uuid}, 1ULL << 30, false, "self"};
}

TEST(SimLiveRegistry, StartTimeOfLiveAndMissingProcesses) {
  EXPECT_TRUE(ProcessStartTime(getpid()).has_value());
  EXPECT_FALSE(ProcessStartTime(0).has_value());
  EXPECT_FALSE(ProcessStartTime(999999999).has_value());
}

TEST(SimLiveRegistry, RegisterListUnregister) {
  TempDir tmp;
  std::string dir = tmp.path() + "/live";
  LiveProcess me = Self("GPU-8932f937-d72c-4106-c12f-20bd9faed9f6");
  ASSERT_TRUE(RegisterLive(dir, me).ok());
  struct stat st {};
  ASSERT_EQ(stat(dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 01777u);
  auto live = ListLive(dir);
  ASSERT_EQ(live.size(), 1u);
  EXPECT_EQ(live[0].pid, getpid());
  EXPECT_EQ(live[0].uuids, me.uuids);
  EXPECT_EQ(live[0].used_memory_bytes, 1ULL << 30);
  UnregisterLive(dir, me);
  EXPECT_TRUE(ListLive(dir).empty());
}

TEST(SimLiveRegistry, KilledProcessVanishesWithoutCleanup) {
  TempDir tmp;
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    LiveProcess p{getpid(),
                  *ProcessStartTime(getpid()),
                  {"GPU-8932f937-d72c-4106-c12f-20bd9faed9f6"},
                  5,
                  false,
                  "c"};
    bool ok = RegisterLive(tmp.path(), p).ok();
    char c = ok ? 'y' : 'n';
    (void)!write(ready[1], &c, 1);
    pause();
    _exit(0);
  }
  char c = 0;
  ASSERT_EQ(read(ready[0], &c, 1), 1);
  ASSERT_EQ(c, 'y');
  auto live = ListLive(tmp.path());
  ASSERT_EQ(live.size(), 1u);
  EXPECT_EQ(live[0].pid, child);

  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  EXPECT_TRUE(ListLive(tmp.path()).empty());
  // The stale file was removed on the way.
  EXPECT_TRUE(std::filesystem::is_empty(tmp.path()));
  close(ready[0]);
  close(ready[1]);
}

TEST(SimLiveRegistry, ReusedPidIsNotMistakenForTheEntry) {
  TempDir tmp;
  LiveProcess me = Self("GPU-8932f937-d72c-4106-c12f-20bd9faed9f6");
  me.start_time_ticks += 1;  // an earlier process with our pid
  ASSERT_TRUE(RegisterLive(tmp.path(), me).ok());
  EXPECT_TRUE(ListLive(tmp.path()).empty());
}

TEST(SimLiveRegistry, HostileFilesAreSkipped) {
  TempDir tmp;
  LiveProcess me = Self("GPU-8932f937-d72c-4106-c12f-20bd9faed9f6");
  ASSERT_TRUE(RegisterLive(tmp.path(), me).ok());
  tmp.Write("garbage.json", "{not json");
  tmp.Write("1-2.json", R"({"pid":"one"})");
  // Claims to be us under another name: ignored, it could shadow a real entry.
  tmp.Write("renamed.json", R"({"pid":)" + std::to_string(me.pid) + R"(,"start_time":)" +
                                std::to_string(me.start_time_ticks) +
                                R"(,"uuids":[],"used_memory":1})");
  std::filesystem::create_symlink(tmp.path() + "/garbage.json", tmp.path() + "/link.json");
  auto live = ListLive(tmp.path());
  ASSERT_EQ(live.size(), 1u);
  EXPECT_EQ(live[0].name, "self");
}

TEST(SimLiveRegistry, DefaultDirDependsOnTheScenario) {
  unsetenv("GPUPIN_SIM_LIVE_DIR");
  std::string a = LiveDir(SourcePath("examples/lab-8gpu.json"));
  EXPECT_TRUE(a.starts_with("/tmp/gpupin-sim-live-"));
  EXPECT_EQ(a.size(), std::string("/tmp/gpupin-sim-live-").size() + 16);
  EXPECT_NE(a, LiveDir(SourcePath("examples/dgx-h100.json")));
  EXPECT_EQ(a, LiveDir(SourcePath("sim/../examples/lab-8gpu.json")));
  setenv("GPUPIN_SIM_LIVE_DIR", "/somewhere", 1);
  EXPECT_EQ(LiveDir("x.json"), "/somewhere");
  unsetenv("GPUPIN_SIM_LIVE_DIR");
}

}  // namespace
}  // namespace gpupin::sim
