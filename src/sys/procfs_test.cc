#include "sys/procfs.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testing/temp_dir.h"

namespace gpupin {
namespace {

using testing::TempDir;

// A stat line with the given command name: fields 3.. as the kernel writes them.
std::string StatLine(int pid, const std::string& comm, int ppid, uint64_t start) {
  std::string line = std::to_string(pid) + " (" + comm + ") S " + std::to_string(ppid);
  for (int field = 5; field <= 21; ++field) line += " 0";
  return line + " " + std::to_string(start) + " 1234 5678\n";
}

// A full line: session (field 6) and the stack's start (field 28) too.
std::string StatLine(int pid, int ppid, int session, uint64_t start_stack) {
  std::string line =
      std::to_string(pid) + " (p) S " + std::to_string(ppid) + " 0 " + std::to_string(session);
  for (int field = 7; field <= 27; ++field) line += " 1";
  return line + " " + std::to_string(start_stack) + " 0 0\n";
}

TEST(ProcFsFake, StatReadsSessionAndStackStart) {
  TempDir proc;
  proc.Write("42/stat", StatLine(42, 7, 40, 140737488346112u));
  proc.Write("43/stat", StatLine(43, "short", 7, 98765));
  ProcFs fs(proc.path());
  std::optional<ProcessStat> stat = fs.Stat(42);
  ASSERT_TRUE(stat.has_value());
  EXPECT_EQ(stat->session, 40);
  EXPECT_EQ(stat->start_stack, 140737488346112u);
  EXPECT_EQ(stat->start_time_ticks, 1u);
  stat = fs.Stat(43);
  ASSERT_TRUE(stat.has_value());
  EXPECT_EQ(stat->start_stack, 0u) << "a line without field 28";
}

TEST(ProcFsFake, RememberingStatsReadsEachProcessOnce) {
  TempDir proc;
  proc.Write("42/stat", StatLine(42, "first", 7, 100));
  ProcFs fs(proc.path());
  ProcFs remembering = fs.RememberingStats();
  ASSERT_EQ(remembering.Stat(42)->comm, "first");
  EXPECT_FALSE(remembering.Stat(43).has_value());
  // The process changes (here, its file) after the first read.
  proc.Write("42/stat", StatLine(42, "second", 8, 100));
  proc.Write("43/stat", StatLine(43, "born", 7, 200));
  ProcFs copy = remembering;
  EXPECT_EQ(copy.Stat(42)->comm, "first") << "copies share what was read";
  EXPECT_EQ(remembering.ParentOf(42), 7);
  EXPECT_FALSE(remembering.Stat(43).has_value()) << "an absence is remembered too";
  EXPECT_EQ(fs.Stat(42)->comm, "second") << "the plain ProcFs reads anew";
  EXPECT_EQ(fs.RememberingStats().Stat(43)->comm, "born") << "a new one starts empty";
}

TEST(ProcFsFake, StatTakesTheLastParenthesis) {
  TempDir proc;
  proc.Write("42/stat", StatLine(42, "evil) R 1 (x", 7, 98765));
  ProcFs fs(proc.path());
  std::optional<ProcessStat> stat = fs.Stat(42);
  ASSERT_TRUE(stat.has_value());
  EXPECT_EQ(stat->pid, 42);
  EXPECT_EQ(stat->ppid, 7);
  EXPECT_EQ(stat->state, 'S');
  EXPECT_EQ(stat->start_time_ticks, 98765u);
}

TEST(ProcFsFake, StatWithSpacesInTheName) {
  TempDir proc;
  proc.Write("9/stat", StatLine(9, "tmux: server", 1, 5));
  std::optional<ProcessStat> stat = ProcFs(proc.path()).Stat(9);
  ASSERT_TRUE(stat.has_value());
  EXPECT_EQ(stat->start_time_ticks, 5u);
}

TEST(ProcFsFake, StatRejectsMalformedLines) {
  TempDir proc;
  proc.Write("1/stat", "1 (init S 0 0");                              // no ')'
  proc.Write("2/stat", "2 (x) S 1 2 3");                              // truncated
  proc.Write("3/stat", StatLine(3, "x", -5, 1).replace(6, 1, "SS"));  // state not one char
  std::string bad_start = StatLine(4, "x", 1, 1);
  bad_start.replace(bad_start.rfind(" 1 1234"), 2, " z");
  proc.Write("4/stat", bad_start);
  proc.Write("5/stat", "");
  ProcFs fs(proc.path());
  for (int pid : {1, 2, 3, 4, 5, 6}) EXPECT_FALSE(fs.Stat(pid).has_value()) << pid;
}

TEST(ProcFsFake, UidIsTheRealUid) {
  TempDir proc;
  proc.Write("5/status", "Name:\tx\nUmask:\t0022\nUid:\t1000\t0\t0\t0\nGid:\t100\n");
  proc.Write("6/status", "Name:\tx\nGid:\t100\n");
  ProcFs fs(proc.path());
  EXPECT_EQ(fs.Uid(5), 1000u);
  EXPECT_FALSE(fs.Uid(6).has_value());
  EXPECT_FALSE(fs.Uid(7).has_value());
}

TEST(ProcFsFake, CmdlineJoinsArguments) {
  TempDir proc;
  proc.Write("5/cmdline", std::string("python\0train.py\0--lr\0", 22));
  proc.Write("6/cmdline", "");
  ProcFs fs(proc.path());
  EXPECT_EQ(fs.Cmdline(5), "python train.py --lr");
  EXPECT_EQ(fs.Cmdline(6), "");
  EXPECT_FALSE(fs.Cmdline(7).has_value());
}

TEST(ProcFsFake, EnvironParsesVariables) {
  TempDir proc;
  proc.Write("5/environ", std::string("A=1\0CUDA_VISIBLE_DEVICES=0,1\0junk\0=x\0E=a=b\0", 44));
  Result<std::map<std::string, std::string>> env = ProcFs(proc.path()).Environ(5);
  ASSERT_TRUE(env.ok()) << env.error().message;
  EXPECT_EQ(*env, (std::map<std::string, std::string>{
                      {"A", "1"}, {"CUDA_VISIBLE_DEVICES", "0,1"}, {"E", "a=b"}}));
  Result<std::map<std::string, std::string>> missing = ProcFs(proc.path()).Environ(6);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message, "no process 6");
}

TEST(ProcFsFake, ContainerIdFromEveryRuntimeNaming) {
  const std::string id(64, 'a');
  const std::string other = std::string(63, 'b') + "c";
  TempDir proc;
  proc.Write("1/cgroup", "0::/system.slice/docker-" + id + ".scope\n");
  proc.Write("2/cgroup", "12:pids:/docker/" + id + "\n11:cpu:/docker/" + id + "\n");
  proc.Write("3/cgroup",
             "0::/kubepods.slice/kubepods-pod1.slice/cri-containerd-" + id + ".scope\n");
  proc.Write("4/cgroup", "0::/user.slice/user-1000.slice/session-3.scope\n");
  proc.Write("5/cgroup", "0::/docker/" + id.substr(1) + "\n");             // 63 hex: not an id
  proc.Write("6/cgroup", "0::/docker/" + std::string(64, 'A') + "\n");     // uppercase: not an id
  proc.Write("7/cgroup", "0::/docker/" + id + "/docker/" + other + "\n");  // nested: innermost
  proc.Write("8/cgroup", "garbage without colons\n::\n");
  ProcFs fs(proc.path());
  EXPECT_EQ(fs.ContainerId(1), id);
  EXPECT_EQ(fs.ContainerId(2), id);
  EXPECT_EQ(fs.ContainerId(3), id);
  EXPECT_EQ(fs.ContainerId(7), other);
  for (int pid : {4, 5, 6, 8, 9}) EXPECT_FALSE(fs.ContainerId(pid).has_value()) << pid;
}

TEST(ProcFsFake, DescendsFromFollowsParentsAndSurvivesCycles) {
  TempDir proc;
  proc.Write("10/stat", StatLine(10, "a", 1, 1));
  proc.Write("11/stat", StatLine(11, "b", 10, 1));
  proc.Write("12/stat", StatLine(12, "c", 11, 1));
  proc.Write("20/stat", StatLine(20, "loop", 21, 1));
  proc.Write("21/stat", StatLine(21, "loop", 20, 1));
  ProcFs fs(proc.path());
  EXPECT_TRUE(fs.DescendsFrom(12, 10));
  EXPECT_TRUE(fs.DescendsFrom(10, 10));
  EXPECT_FALSE(fs.DescendsFrom(10, 12));
  EXPECT_FALSE(fs.DescendsFrom(20, 10));
  EXPECT_FALSE(fs.DescendsFrom(99, 10));
  EXPECT_EQ(fs.ParentOf(12), 11);
  EXPECT_FALSE(fs.ParentOf(99).has_value());
}

TEST(ProcFsFake, ReservationHolderSkipsForkedSubshellsAndWrappers) {
  TempDir proc;
  auto process = [&](int pid, int ppid, const std::string& cmdline) {
    proc.Write(std::to_string(pid) + "/stat", StatLine(pid, "p", ppid, 1));
    proc.Write(std::to_string(pid) + "/cmdline", cmdline);
  };
  using namespace std::string_literals;
  process(10, 1, "sshd\0"s);
  process(11, 10, "bash\0"s);
  process(12, 11, "bash\0./job.sh\0"s);  // the script
  process(13, 12, "bash\0./job.sh\0"s);  // ( ... )
  process(14, 13, "bash\0./job.sh\0"s);  // $( ... )
  process(15, 14, "gpupin\0pick\0"s);
  // x=$(timeout 30 sh -c 'gpupin pick') in the script
  process(16, 14,
          "timeout\0"
          "30\0sh\0-c\0gpupin pick\0"s);
  process(17, 16, "sh\0-c\0gpupin pick\0"s);
  process(18, 17, "gpupin\0pick\0"s);
  // A wrapper of something else is the holder.
  process(19, 12,
          "timeout\0"
          "30\0./other.sh\0"s);
  process(20, 21, "loop\0"s);
  process(21, 20, "loop\0"s);
  process(22, 20, "gpupin\0pick\0"s);
  ProcFs fs(proc.path());
  EXPECT_EQ(ReservationHolder(fs, 15, 14), 12);
  EXPECT_EQ(ReservationHolder(fs, 18, 17), 12);
  EXPECT_EQ(ReservationHolder(fs, 12, 11), 11);
  EXPECT_EQ(ReservationHolder(fs, 15, 19), 19);
  EXPECT_EQ(ReservationHolder(fs, 98, 99), 99) << "an unreadable parent is the holder";
  int looped = ReservationHolder(fs, 22, 20);
  EXPECT_TRUE(looped == 20 || looped == 21);
}

TEST(ProcFsFake, ReservationHolderTellsForkedCopiesByTheirStack) {
  TempDir proc;
  auto process = [&](int pid, int ppid, uint64_t stack, const std::string& cmdline) {
    proc.Write(std::to_string(pid) + "/stat", StatLine(pid, ppid, 5, stack));
    proc.Write(std::to_string(pid) + "/cmdline", cmdline);
  };
  using namespace std::string_literals;
  process(5, 1, 0x7000, "login\0"s);
  process(10, 5, 0x1000, "bash\0"s);
  // `bash` typed in it: exec'd, a stack of its own; then x=$(gpupin pick).
  process(11, 10, 0x2000, "bash\0"s);
  process(12, 11, 0x2000, "bash\0"s);
  process(13, 12, 0x3000, "gpupin\0pick\0"s);
  // A wrapper that forks a copy of itself before it runs gpupin (sudo with
  // use_pty), inside x=$(...) of shell 11.
  process(20, 11, 0x2000, "bash\0"s);
  process(21, 20, 0x4000, "sudo\0gpupin\0pick\0"s);
  process(22, 21, 0x4000, "sudo\0gpupin\0pick\0"s);
  process(23, 22, 0x5000, "gpupin\0pick\0"s);
  ProcFs fs(proc.path());
  EXPECT_EQ(ReservationHolder(fs, 13, 12), 11);
  EXPECT_EQ(ReservationHolder(fs, 23, 22), 11);
}

TEST(ProcFsFake, ReservationHolderStaysInTheCallersSession) {
  TempDir proc;
  auto process = [&](int pid, int ppid, int session, const std::string& cmdline) {
    proc.Write(std::to_string(pid) + "/stat", StatLine(pid, ppid, session, 0));
    proc.Write(std::to_string(pid) + "/cmdline", cmdline);
  };
  using namespace std::string_literals;
  // A subreaper adopted `flock L gpupin pick` after its shell exited.
  process(50, 1, 50, "systemd\0--user\0"s);
  process(51, 50, 60, "flock\0L\0gpupin\0pick\0"s);
  process(52, 51, 60, "gpupin\0pick\0"s);
  ProcFs fs(proc.path());
  EXPECT_EQ(ReservationHolder(fs, 52, 51), 51);
}

TEST(ProcFsFake, AllPidsListsOnlyNumbers) {
  TempDir proc;
  proc.Write("1/stat", "");
  proc.Write("300/stat", "");
  proc.Write("self/stat", "");
  proc.Write("12abc/stat", "");
  std::vector<int> pids = ProcFs(proc.path()).AllPids();
  std::sort(pids.begin(), pids.end());
  EXPECT_EQ(pids, (std::vector<int>{1, 300}));
}

TEST(ProcFsFake, UptimeInTicks) {
  TempDir proc;
  proc.Write("uptime", "100.50 400.00\n");
  uint64_t hz = static_cast<uint64_t>(sysconf(_SC_CLK_TCK));
  EXPECT_EQ(ProcFs(proc.path()).UptimeTicks(), 100 * hz + hz / 2);
  proc.Write("uptime", "nonsense\n");
  EXPECT_FALSE(ProcFs(proc.path()).UptimeTicks().has_value());
}

TEST(ProcFsFake, BootIdWithoutItsNewline) {
  TempDir proc;
  EXPECT_FALSE(ProcFs(proc.path()).BootId().has_value());
  proc.Write("sys/kernel/random/boot_id", "0f6c8a1e-2b3d-4e5f-8a9b-0c1d2e3f4a5b\n");
  EXPECT_EQ(ProcFs(proc.path()).BootId(), "0f6c8a1e-2b3d-4e5f-8a9b-0c1d2e3f4a5b");
}

TEST(ProcFsReal, SelfAndParent) {
  ProcFs fs;
  std::optional<ProcessStat> self = fs.Stat(getpid());
  ASSERT_TRUE(self.has_value());
  EXPECT_EQ(self->ppid, getppid());
  EXPECT_EQ(self->state, 'R');
  std::optional<uint64_t> uptime = fs.UptimeTicks();
  ASSERT_TRUE(uptime.has_value());
  EXPECT_LE(self->start_time_ticks, *uptime);
  EXPECT_EQ(fs.Uid(getpid()), getuid());
  std::optional<std::string> cmdline = fs.Cmdline(getpid());
  ASSERT_TRUE(cmdline.has_value());
  EXPECT_NE(cmdline->find("gpupin_unit_tests"), std::string::npos);
  std::vector<int> pids = fs.AllPids();
  EXPECT_NE(std::find(pids.begin(), pids.end(), getpid()), pids.end());
}

TEST(ProcFsReal, ChildEnvironmentAncestryAndExit) {
  const char* argv[] = {"sleep", "30", nullptr};
  const char* envp[] = {"GPUPIN_MARK=on the card", "CUDA_VISIBLE_DEVICES=3", nullptr};
  pid_t child = 0;
  ASSERT_EQ(posix_spawnp(&child, "sleep", nullptr, nullptr, const_cast<char**>(argv),
                         const_cast<char**>(envp)),
            0);
  ProcFs fs;
  // Until exec completes the child still shows our environment.
  Result<std::map<std::string, std::string>> env = fs.Environ(child);
  for (int i = 0; i < 200 && (!env.ok() || !env->contains("GPUPIN_MARK")); ++i) {
    usleep(5000);
    env = fs.Environ(child);
  }
  ASSERT_TRUE(env.ok()) << env.error().message;
  EXPECT_EQ(env->at("GPUPIN_MARK"), "on the card");
  EXPECT_EQ(env->at("CUDA_VISIBLE_DEVICES"), "3");
  EXPECT_TRUE(fs.DescendsFrom(child, getpid()));
  EXPECT_FALSE(fs.DescendsFrom(getpid(), child));
  std::optional<ProcessStat> stat = fs.Stat(child);
  ASSERT_TRUE(stat.has_value());
  EXPECT_EQ(stat->ppid, getpid());
  EXPECT_EQ(LiveProcessStartTime(fs, child), stat->start_time_ticks);
  kill(child, SIGKILL);
  // Killed but not yet collected: a zombie, which holds nothing.
  for (int i = 0; i < 200 && fs.Stat(child)->state != 'Z'; ++i) usleep(5000);
  EXPECT_EQ(fs.Stat(child)->state, 'Z');
  EXPECT_FALSE(LiveProcessStartTime(fs, child).has_value());
  waitpid(child, nullptr, 0);
  EXPECT_FALSE(fs.Stat(child).has_value());
  EXPECT_FALSE(fs.Environ(child).ok());
}

TEST(UserName, KnownAndUnknownUids) {
  EXPECT_EQ(UserName(0), "root");
  EXPECT_EQ(UserName(3999999999u), "3999999999");
}

}  // namespace
}  // namespace gpupin
