// gpupin-sim-workload as a program: started with an environment, it lands
// on the GPUs CUDA would give it, registers there, logs, and exits like a
// CUDA application.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "sim/live_registry.h"
#include "sim/scenario.h"
#include "sim/sim_test_util.h"

namespace gpupin::sim {
namespace {

class SimWorkload : public testing::Test {
 protected:
  // Starts the workload with `vars` on top of a clean environment; its stderr goes to err_.
  pid_t Start(const std::map<std::string, std::string>& vars, std::vector<std::string> args) {
    std::vector<std::string> env = {"GPUPIN_SIM_SCENARIO=" + SourcePath("examples/lab-8gpu.json"),
                                    "GPUPIN_SIM_LIVE_DIR=" + live_, "PATH=/usr/bin:/bin"};
    for (const auto& [k, v] : vars) env.push_back(k + "=" + v);
    args.insert(args.begin(), {BinPath("gpupin-sim-workload"), "--log", log_});
    pid_t pid = fork();
    if (pid == 0) {
      int fd = open(err_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(fd, 2);
      std::vector<char*> argv, envp;
      for (auto& a : args) argv.push_back(a.data());
      for (auto& e : env) envp.push_back(e.data());
      argv.push_back(nullptr);
      envp.push_back(nullptr);
      execve(argv[0], argv.data(), envp.data());
      _exit(127);
    }
    return pid;
  }
  int Wait(pid_t pid) {
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  std::vector<nlohmann::json> Log() {
    std::vector<nlohmann::json> lines;
    std::ifstream in(log_);
    for (std::string line; std::getline(in, line);) lines.push_back(nlohmann::json::parse(line));
    return lines;
  }
  std::string Stderr() {
    std::ifstream in(err_);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  bool WaitForStart() {
    for (int i = 0; i < 500; ++i) {
      if (!Log().empty()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }

  TempDir tmp_;
  std::string live_ = tmp_.path() + "/live";
  std::string log_ = tmp_.path() + "/log.jsonl";
  std::string err_ = tmp_.path() + "/stderr";
  std::vector<std::string> lab_ = ScenarioUuids("examples/lab-8gpu.json");  // by NVML index
};

TEST_F(SimWorkload, LandsOnTheGpusCudaWouldGiveIt) {
  pid_t pid = Start({{"CUDA_DEVICE_ORDER", "PCI_BUS_ID"}, {"CUDA_VISIBLE_DEVICES", "3,5"}},
                    {"--seconds", "0", "--name", "job"});
  EXPECT_EQ(Wait(pid), 0) << Stderr();
  auto log = Log();
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(log[0]["event"], "start");
  EXPECT_EQ(log[0]["pid"], pid);
  EXPECT_EQ(log[0]["nvml_indices"], nlohmann::json({3, 5}));
  EXPECT_EQ(log[0]["uuids"], nlohmann::json({lab_[3], lab_[5]}));
  EXPECT_EQ(log[0]["cuda_visible_devices"], "3,5");
  EXPECT_EQ(log[0]["name"], "job");
  EXPECT_EQ(log[1]["event"], "end");
  EXPECT_GE(log[1]["t_ms"].get<long long>(), log[0]["t_ms"].get<long long>());
  EXPECT_TRUE(ListLive(live_).empty());
}

// A job's seconds are its process's: counted from main, its own start-up
// (reading the scenario, registering) included.
TEST_F(SimWorkload, SecondsCountFromMain) {
  pid_t pid = Start({{"CUDA_VISIBLE_DEVICES", "0"}}, {"--seconds", "0.3"});
  EXPECT_EQ(Wait(pid), 0) << Stderr();
  auto log = Log();
  ASSERT_EQ(log.size(), 2u);
  long long main_ms = log[0]["main_ms"].get<long long>();
  long long start_ms = log[0]["t_ms"].get<long long>();
  long long end_ms = log[1]["t_ms"].get<long long>();
  EXPECT_LE(main_ms, start_ms);
  EXPECT_GE(end_ms - main_ms, 300);
  EXPECT_LT(end_ms - main_ms, 300 + 250);
}

TEST_F(SimWorkload, FastestFirstWithoutAnOrder) {
  pid_t pid = Start({{"CUDA_VISIBLE_DEVICES", "0"}}, {"--seconds", "0"});
  EXPECT_EQ(Wait(pid), 0) << Stderr();
  EXPECT_EQ(Log()[0]["nvml_indices"], nlohmann::json({1}));  // the first A6000
  EXPECT_EQ(Log()[0]["cuda_visible_devices"], "0");
}

// --gpus: the GPUs CUDA saw before the environment changed ("set too late").
TEST_F(SimWorkload, GpusOptionIgnoresTheEnvironment) {
  pid_t pid = Start({{"CUDA_VISIBLE_DEVICES", "0"}}, {"--seconds", "0", "--gpus", "6,2"});
  EXPECT_EQ(Wait(pid), 0) << Stderr();
  pid = Start({{"CUDA_VISIBLE_DEVICES", "0"}}, {"--seconds", "0", "--gpus", lab_[4]});
  EXPECT_EQ(Wait(pid), 0) << Stderr();
  std::vector<nlohmann::json> log = Log();
  ASSERT_EQ(log.size(), 4u);
  EXPECT_EQ(log[0]["nvml_indices"], nlohmann::json({6, 2}));  // NVML indices, not FASTEST_FIRST
  EXPECT_EQ(log[0]["cuda_visible_devices"], "0");
  EXPECT_EQ(log[2]["uuids"], nlohmann::json({lab_[4]}));
}

TEST_F(SimWorkload, NoVisibleDeviceExits100) {
  pid_t pid = Start({{"CUDA_VISIBLE_DEVICES", "-1"}}, {"--seconds", "0"});
  EXPECT_EQ(Wait(pid), 100);
  EXPECT_EQ(Stderr(), "gpupin-sim-workload: no CUDA-capable device is detected\n");
  EXPECT_TRUE(Log().empty());
}

TEST_F(SimWorkload, RepeatedDeviceExits101) {
  pid_t pid = Start({{"CUDA_VISIBLE_DEVICES", "1,01"}}, {"--seconds", "0"});
  EXPECT_EQ(Wait(pid), 101);
  EXPECT_EQ(Stderr(), "gpupin-sim-workload: invalid device ordinal (a device is named twice)\n");
  EXPECT_TRUE(Log().empty());
}

TEST_F(SimWorkload, RegisteredWhileRunningAndGoneAfterSigterm) {
  pid_t pid = Start({}, {"--mem", "2G", "--graphics"});
  ASSERT_TRUE(WaitForStart()) << Stderr();
  EXPECT_TRUE(Log()[0]["cuda_visible_devices"].is_null());
  auto live = ListLive(live_);
  ASSERT_EQ(live.size(), 1u);
  EXPECT_EQ(live[0].pid, pid);
  EXPECT_EQ(live[0].uuids.size(), 8u);
  EXPECT_EQ(live[0].used_memory_bytes, 2ULL << 30);
  EXPECT_TRUE(live[0].graphics);
  kill(pid, SIGTERM);
  EXPECT_EQ(Wait(pid), 128 + SIGTERM);
  auto log = Log();
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(log[1]["event"], "end");
  EXPECT_EQ(log[1]["signal"], SIGTERM);
  EXPECT_TRUE(ListLive(live_).empty());
}

TEST_F(SimWorkload, KilledWorkloadVanishesFromTheRegistry) {
  pid_t pid = Start({{"CUDA_VISIBLE_DEVICES", lab_[6]}}, {});
  ASSERT_TRUE(WaitForStart()) << Stderr();
  ASSERT_EQ(ListLive(live_).size(), 1u);
  kill(pid, SIGKILL);
  Wait(pid);
  EXPECT_TRUE(ListLive(live_).empty());
}

TEST_F(SimWorkload, BadArgumentsAreUsageErrors) {
  EXPECT_EQ(Wait(Start({}, {"--mem", "lots"})), 2);
  EXPECT_NE(Stderr().find("invalid size 'lots'"), std::string::npos);
  // What CLI11 itself refuses, too: an unknown option, a missing value, a
  // value of the wrong kind.
  EXPECT_EQ(Wait(Start({}, {"--bogus"})), 2);
  EXPECT_EQ(Wait(Start({}, {"--seconds"})), 2);
  EXPECT_EQ(Wait(Start({}, {"--seconds", "abc"})), 2);
  EXPECT_EQ(Wait(Start({}, {"--help"})), 0);
}

}  // namespace
}  // namespace gpupin::sim
