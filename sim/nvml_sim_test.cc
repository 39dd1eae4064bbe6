// The simulated libnvidia-ml, called through dlopen as gpupin calls the real one.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <set>
#include <vector>

#include "sim/live_registry.h"
#include "sim/sim_test_util.h"
#include "sys/nvml/nvml_abi.h"

namespace gpupin::sim {
namespace {

class SimNvml : public testing::Test {
 protected:
  void SetUp() override { setenv("GPUPIN_SIM_LIVE_DIR", live_dir_.c_str(), 1); }
  void TearDown() override {
    for (; inits_ > 0; --inits_) shutdown_();
    unsetenv("GPUPIN_SIM_LIVE_DIR");
  }

  // Points the library at `scenario` (a path under the source tree, or absolute) and initialises
  // it.
  nvmlReturn_t Init(const std::string& scenario) {
    setenv("GPUPIN_SIM_SCENARIO",
           scenario.starts_with("/") ? scenario.c_str() : SourcePath(scenario).c_str(), 1);
    nvmlReturn_t r = init_();
    if (r == NVML_SUCCESS) ++inits_;
    return r;
  }
  nvmlDevice_t Handle(unsigned index) {
    nvmlDevice_t d = nullptr;
    EXPECT_EQ(by_index_(index, &d), NVML_SUCCESS);
    return d;
  }
  unsigned Count() {
    unsigned n = 0;
    EXPECT_EQ(lib_.Fn<nvmlDeviceGetCount_fn>("nvmlDeviceGetCount_v2")(&n), NVML_SUCCESS);
    return n;
  }
  std::string String(const char* symbol, nvmlDevice_t d) {
    char buffer[kNvmlNameBufferSize] = {};
    nvmlReturn_t r = lib_.Fn<nvmlDeviceGetString_fn>(symbol)(d, buffer, sizeof buffer);
    return r == NVML_SUCCESS ? buffer : "error " + std::to_string(r);
  }
  // Compute processes through `symbol`, which writes `stride`-byte entries.
  std::vector<nvmlProcessInfo_v2_t> Processes(
      nvmlDevice_t d, const char* symbol = "nvmlDeviceGetComputeRunningProcesses_v3",
      size_t stride = 24) {
    auto fn = lib_.Fn<nvmlDeviceGetProcesses_fn>(symbol);
    unsigned n = 0;
    nvmlReturn_t r = fn(d, &n, nullptr);
    std::vector<nvmlProcessInfo_v2_t> out;
    while (r == NVML_ERROR_INSUFFICIENT_SIZE) {
      std::vector<unsigned char> buffer(n * stride);
      r = fn(d, &n, buffer.data());
      if (r != NVML_SUCCESS) continue;
      for (unsigned i = 0; i < n; ++i) {
        nvmlProcessInfo_v2_t p{0, 0, ~0u, ~0u};
        std::memcpy(&p, buffer.data() + i * stride, std::min(stride, sizeof p));
        out.push_back(p);
      }
    }
    EXPECT_EQ(r, NVML_SUCCESS);
    return out;
  }

  TempDir tmp_;
  std::string live_dir_ = tmp_.path() + "/live";
  Library lib_{"libgpupin-sim-nvml.so"};
  nvmlInit_fn init_ = lib_.Fn<nvmlInit_fn>("nvmlInit_v2");
  nvmlShutdown_fn shutdown_ = lib_.Fn<nvmlShutdown_fn>("nvmlShutdown");
  nvmlDeviceGetHandleByIndex_fn by_index_ =
      lib_.Fn<nvmlDeviceGetHandleByIndex_fn>("nvmlDeviceGetHandleByIndex_v2");
  int inits_ = 0;
};

TEST_F(SimNvml, InitIsReferenceCounted) {
  unsigned n = 0;
  auto count = lib_.Fn<nvmlDeviceGetCount_fn>("nvmlDeviceGetCount_v2");
  EXPECT_EQ(count(&n), NVML_ERROR_UNINITIALIZED);
  ASSERT_EQ(Init("sim/testdata/one-gpu.json"), NVML_SUCCESS);
  ASSERT_EQ(Init("sim/testdata/one-gpu.json"), NVML_SUCCESS);
  EXPECT_EQ(shutdown_(), NVML_SUCCESS);
  --inits_;
  EXPECT_EQ(count(&n), NVML_SUCCESS);
  EXPECT_EQ(n, 1u);
  EXPECT_EQ(shutdown_(), NVML_SUCCESS);
  --inits_;
  EXPECT_EQ(count(&n), NVML_ERROR_UNINITIALIZED);
  EXPECT_STREQ(lib_.Fn<nvmlErrorString_fn>("nvmlErrorString")(NVML_ERROR_DRIVER_NOT_LOADED),
               "Driver Not Loaded");
}

TEST_F(SimNvml, EnumeratesOneEightAndSixtyFourGpus) {
  for (auto [file, count] : {std::pair{"sim/testdata/one-gpu.json", 1u},
                             {"examples/lab-8gpu.json", 8u},
                             {"sim/testdata/gpus-64.json", 64u}}) {
    ASSERT_EQ(Init(file), NVML_SUCCESS);
    ASSERT_EQ(Count(), count);
    std::set<std::string> uuids;
    for (unsigned i = 0; i < count; ++i) uuids.insert(String("nvmlDeviceGetUUID", Handle(i)));
    EXPECT_EQ(uuids.size(), count);
    nvmlDevice_t d = nullptr;
    EXPECT_EQ(by_index_(count, &d), NVML_ERROR_INVALID_ARGUMENT);
    shutdown_();
    --inits_;
  }
}

TEST_F(SimNvml, AnswersEachFieldOfTheScenario) {
  ASSERT_EQ(Init("examples/lab-8gpu.json"), NVML_SUCCESS);
  nvmlDevice_t d = Handle(2);
  EXPECT_EQ(String("nvmlDeviceGetName", d), "NVIDIA GeForce RTX 3090");
  nvmlPciInfo_t pci{};
  ASSERT_EQ(lib_.Fn<nvmlDeviceGetPciInfo_fn>("nvmlDeviceGetPciInfo_v3")(d, &pci), NVML_SUCCESS);
  EXPECT_STREQ(pci.busId, "00000000:3D:00.0");
  EXPECT_STREQ(pci.busIdLegacy, "0000:3D:00.0");
  EXPECT_EQ(pci.pciDeviceId, 0x220410deu);
  nvmlUtilization_t util{};
  ASSERT_EQ(lib_.Fn<nvmlDeviceGetUtilizationRates_fn>("nvmlDeviceGetUtilizationRates")(d, &util),
            NVML_SUCCESS);
  EXPECT_EQ(util.gpu, 97u);
  unsigned value = 0;
  ASSERT_EQ(lib_.Fn<nvmlDeviceGetTemperature_fn>("nvmlDeviceGetTemperature")(d, kNvmlTemperatureGpu,
                                                                             &value),
            NVML_SUCCESS);
  EXPECT_EQ(value, 78u);
  ASSERT_EQ(lib_.Fn<nvmlDeviceGetUint_fn>("nvmlDeviceGetPowerUsage")(d, &value), NVML_SUCCESS);
  EXPECT_EQ(value, 331500u);
  ASSERT_EQ(lib_.Fn<nvmlDeviceGetUint_fn>("nvmlDeviceGetNumGpuCores")(d, &value), NVML_SUCCESS);
  EXPECT_EQ(value, 10496u);
  ASSERT_EQ(lib_.Fn<nvmlDeviceGetUint_fn>("nvmlDeviceGetMinorNumber")(d, &value), NVML_SUCCESS);
  EXPECT_EQ(value, 2u);
  int major = 0, minor = 0;
  ASSERT_EQ(lib_.Fn<nvmlDeviceGetCudaComputeCapability_fn>("nvmlDeviceGetCudaComputeCapability")(
                d, &major, &minor),
            NVML_SUCCESS);
  EXPECT_EQ(major * 10 + minor, 86);
  unsigned long cpus[2] = {};
  ASSERT_EQ(lib_.Fn<nvmlDeviceGetCpuAffinity_fn>("nvmlDeviceGetCpuAffinity")(d, 2, cpus),
            NVML_SUCCESS);
  EXPECT_EQ(cpus[0], 0x0000FFFF0000FFFFul);  // 0-15,32-47
  EXPECT_EQ(cpus[1], 0ul);
  EXPECT_EQ(lib_.Fn<nvmlDeviceGetCpuAffinity_fn>("nvmlDeviceGetCpuAffinity")(d, 0, cpus),
            NVML_ERROR_INVALID_ARGUMENT);
  char version[kNvmlVersionBufferSize];
  ASSERT_EQ(lib_.Fn<nvmlSystemGetString_fn>("nvmlSystemGetDriverVersion")(version, sizeof version),
            NVML_SUCCESS);
  EXPECT_STREQ(version, "535.183.01");
  int cuda = 0;
  ASSERT_EQ(lib_.Fn<nvmlSystemGetCudaDriverVersion_fn>("nvmlSystemGetCudaDriverVersion_v2")(&cuda),
            NVML_SUCCESS);
  EXPECT_EQ(cuda, 12020);

  nvmlDevice_t found = nullptr;
  auto by_uuid = lib_.Fn<nvmlDeviceGetHandleByString_fn>("nvmlDeviceGetHandleByUUID");
  ASSERT_EQ(by_uuid(String("nvmlDeviceGetUUID", d).c_str(), &found), NVML_SUCCESS);
  EXPECT_EQ(found, d);
  EXPECT_EQ(by_uuid("GPU-00000000-0000-0000-0000-000000000000", &found), NVML_ERROR_NOT_FOUND);
  auto by_bus = lib_.Fn<nvmlDeviceGetHandleByString_fn>("nvmlDeviceGetHandleByPciBusId_v2");
  ASSERT_EQ(by_bus("0000:3d:00.0", &found), NVML_SUCCESS);
  EXPECT_EQ(found, d);
}

TEST_F(SimNvml, StringsNeedRoomForTheTerminator) {
  ASSERT_EQ(Init("sim/testdata/one-gpu.json"), NVML_SUCCESS);
  auto name = lib_.Fn<nvmlDeviceGetString_fn>("nvmlDeviceGetName");
  std::string expected = "NVIDIA RTX A6000";
  std::vector<char> buffer(expected.size() + 1);
  EXPECT_EQ(name(Handle(0), buffer.data(), static_cast<unsigned>(expected.size())),
            NVML_ERROR_INSUFFICIENT_SIZE);
  EXPECT_EQ(name(Handle(0), buffer.data(), static_cast<unsigned>(buffer.size())), NVML_SUCCESS);
  EXPECT_EQ(buffer.data(), expected);
}

TEST_F(SimNvml, OmittedFieldsAreNotSupported) {
  ASSERT_EQ(Init("sim/testdata/bare.json"), NVML_SUCCESS);
  nvmlDevice_t d = Handle(0);
  unsigned value = 0;
  nvmlMemory_t memory{};
  nvmlPciInfo_t pci{};
  EXPECT_EQ(lib_.Fn<nvmlDeviceGetMemoryInfo_fn>("nvmlDeviceGetMemoryInfo")(d, &memory),
            NVML_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(lib_.Fn<nvmlDeviceGetPciInfo_fn>("nvmlDeviceGetPciInfo_v3")(d, &pci),
            NVML_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(lib_.Fn<nvmlDeviceGetUint_fn>("nvmlDeviceGetPowerUsage")(d, &value),
            NVML_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(lib_.Fn<nvmlDeviceGetUint_fn>("nvmlDeviceGetNumaNodeId")(d, &value),
            NVML_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(lib_.Fn<nvmlDeviceGetNvLinkState_fn>("nvmlDeviceGetNvLinkState")(d, 0, &value),
            NVML_ERROR_NOT_SUPPORTED);
  unsigned current = 0, pending = 0;
  EXPECT_EQ(lib_.Fn<nvmlDeviceGetMigMode_fn>("nvmlDeviceGetMigMode")(d, &current, &pending),
            NVML_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(String("nvmlDeviceGetName", d), "error 3");
  char version[kNvmlVersionBufferSize];
  EXPECT_EQ(lib_.Fn<nvmlSystemGetString_fn>("nvmlSystemGetDriverVersion")(version, sizeof version),
            NVML_ERROR_NOT_SUPPORTED);
}

TEST_F(SimNvml, UnknownHandleIsAnInvalidArgument) {
  ASSERT_EQ(Init("sim/testdata/one-gpu.json"), NVML_SUCCESS);
  nvmlDevice_st* bogus = reinterpret_cast<nvmlDevice_st*>(&inits_);
  EXPECT_EQ(String("nvmlDeviceGetName", bogus), "error 2");
  EXPECT_EQ(String("nvmlDeviceGetName", nullptr), "error 2");
}

TEST_F(SimNvml, ProcessListsFollowTheTwoCallProtocol) {
  ASSERT_EQ(Init("examples/lab-8gpu.json"), NVML_SUCCESS);
  auto fn = lib_.Fn<nvmlDeviceGetProcesses_fn>("nvmlDeviceGetComputeRunningProcesses_v3");
  unsigned n = 0;
  EXPECT_EQ(fn(Handle(0), &n, nullptr), NVML_SUCCESS);  // idle
  EXPECT_EQ(n, 0u);
  EXPECT_EQ(fn(Handle(4), &n, nullptr), NVML_ERROR_INSUFFICIENT_SIZE);
  EXPECT_EQ(n, 2u);
  EXPECT_EQ(fn(Handle(4), &n, nullptr), NVML_ERROR_INVALID_ARGUMENT);  // NULL with a count
  EXPECT_EQ(fn(Handle(4), nullptr, nullptr), NVML_ERROR_INVALID_ARGUMENT);
  auto processes = Processes(Handle(4));
  ASSERT_EQ(processes.size(), 2u);
  EXPECT_EQ(processes[0].pid, 4200201u);
  EXPECT_EQ(processes[0].usedGpuMemory, 30ULL << 30);
  EXPECT_EQ(processes[0].gpuInstanceId, 0xFFFFFFFFu);
  // v1 writes 16-byte entries.
  auto v1 = Processes(Handle(4), "nvmlDeviceGetComputeRunningProcesses", 16);
  ASSERT_EQ(v1.size(), 2u);
  EXPECT_EQ(v1[1].pid, 4200202u);
  EXPECT_EQ(v1[1].usedGpuMemory, 8ULL << 30);
  EXPECT_TRUE(Processes(Handle(4), "nvmlDeviceGetGraphicsRunningProcesses_v3").empty());
  EXPECT_TRUE(Processes(Handle(4), "nvmlDeviceGetMPSComputeRunningProcesses_v3").empty());
}

TEST_F(SimNvml, ProcessListGrowsBetweenCountAndFetch) {
  std::string file = tmp_.Write("grow.json", R"({"grow_processes_on_fetch": 2, "gpus": [{
      "uuid": "GPU-8932f937-d72c-4106-c12f-20bd9faed9f6", "processes": [{"pid": 4200001, "used_memory": "1G"}]}]})");
  ASSERT_EQ(Init(file), NVML_SUCCESS);
  auto fn = lib_.Fn<nvmlDeviceGetProcesses_fn>("nvmlDeviceGetComputeRunningProcesses_v2");
  unsigned n = 0;
  ASSERT_EQ(fn(Handle(0), &n, nullptr), NVML_ERROR_INSUFFICIENT_SIZE);
  ASSERT_EQ(n, 1u);
  std::vector<nvmlProcessInfo_v2_t> buffer(8);
  EXPECT_EQ(fn(Handle(0), &n, buffer.data()), NVML_ERROR_INSUFFICIENT_SIZE);
  EXPECT_EQ(n, 3u);
  EXPECT_EQ(fn(Handle(0), &n, buffer.data()), NVML_SUCCESS);
  EXPECT_EQ(n, 3u);
  EXPECT_EQ(buffer[0].pid, 4200001u);
  EXPECT_EQ(Processes(Handle(0)).size(), 3u);  // a caller that loops sees them all
}

// Fills a buffer with a sentinel and measures how many bytes the _v3 call wrote.
size_t BytesWritten(nvmlDeviceGetProcesses_fn fn, nvmlDevice_t d, unsigned* n) {
  std::vector<unsigned char> buffer(64 * 4, 0xAB);
  *n = 4;
  EXPECT_EQ(fn(d, n, buffer.data()), NVML_SUCCESS);
  size_t last = buffer.size();
  while (last > 0 && buffer[last - 1] == 0xAB) --last;
  return last;
}

TEST_F(SimNvml, V3StrideIsTheScenarios) {
  for (int stride : {24, 32}) {
    std::string file = tmp_.Write(
        "stride.json", R"({"process_stride": )" + std::to_string(stride) + R"(, "gpus": [{
        "uuid": "GPU-8932f937-d72c-4106-c12f-20bd9faed9f6",
        "processes": [{"pid": 4200001, "used_memory": "1G"}, {"pid": 4200002, "used_memory": "2G"}]}]})");
    ASSERT_EQ(Init(file), NVML_SUCCESS);
    unsigned n = 0;
    auto v3 = lib_.Fn<nvmlDeviceGetProcesses_fn>("nvmlDeviceGetComputeRunningProcesses_v3");
    size_t written = BytesWritten(v3, Handle(0), &n);
    EXPECT_EQ(n, 2u);
    // The last entry's padding or CC field may not end in the sentinel; the span lies within it.
    EXPECT_GT(written, static_cast<size_t>(stride + 8));
    EXPECT_LE(written, static_cast<size_t>(2 * stride));
    auto processes = Processes(Handle(0), "nvmlDeviceGetComputeRunningProcesses_v3", stride);
    ASSERT_EQ(processes.size(), 2u);
    EXPECT_EQ(processes[1].pid, 4200002u);
    EXPECT_EQ(processes[1].usedGpuMemory, 2ULL << 30);
    // _v2 is always 24 bytes.
    EXPECT_EQ(Processes(Handle(0), "nvmlDeviceGetComputeRunningProcesses_v2", 24)[1].pid, 4200002u);
    shutdown_();
    --inits_;
  }
}

TEST_F(SimNvml, MemoryV1AndV2) {
  std::string file =
      tmp_.Write("mem.json", R"({"gpus": [{"uuid": "GPU-8932f937-d72c-4106-c12f-20bd9faed9f6",
      "memory": {"total": "10G", "used": "3G", "reserved": "1G"}}]})");
  ASSERT_EQ(Init(file), NVML_SUCCESS);
  nvmlMemory_t v1{};
  ASSERT_EQ(lib_.Fn<nvmlDeviceGetMemoryInfo_fn>("nvmlDeviceGetMemoryInfo")(Handle(0), &v1),
            NVML_SUCCESS);
  EXPECT_EQ(v1.total, 10ULL << 30);
  EXPECT_EQ(v1.used, 4ULL << 30);  // reserved counts as used in v1
  EXPECT_EQ(v1.free, 6ULL << 30);
  auto v2fn = lib_.Fn<nvmlDeviceGetMemoryInfo_v2_fn>("nvmlDeviceGetMemoryInfo_v2");
  nvmlMemory_v2_t v2{};
  v2.version = 2;  // what nvtop writes; the macro value is required
  EXPECT_EQ(v2fn(Handle(0), &v2), NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
  v2.version = kNvmlMemoryV2Version;
  ASSERT_EQ(v2fn(Handle(0), &v2), NVML_SUCCESS);
  EXPECT_EQ(v2.reserved, 1ULL << 30);
  EXPECT_EQ(v2.used, 3ULL << 30);
  EXPECT_EQ(v2.free, 6ULL << 30);
}

TEST_F(SimNvml, InitFaults) {
  EXPECT_EQ(Init("sim/testdata/init-driver-not-loaded.json"), NVML_ERROR_DRIVER_NOT_LOADED);
  EXPECT_EQ(Init("sim/testdata/init-lib-rm-version-mismatch.json"),
            NVML_ERROR_LIB_RM_VERSION_MISMATCH);
  EXPECT_EQ(Init("sim/testdata/init-no-permission.json"), NVML_ERROR_NO_PERMISSION);
  unsigned n = 0;
  EXPECT_EQ(lib_.Fn<nvmlDeviceGetCount_fn>("nvmlDeviceGetCount_v2")(&n), NVML_ERROR_UNINITIALIZED);
}

TEST_F(SimNvml, FirstInitTakesTheScenariosTimeAndLaterOnesNone) {
  std::string file = tmp_.Write("slow.json", R"({"nvml_init_ms": 80, "gpus": []})");
  auto timed_init = [&] {
    const auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(Init(file), NVML_SUCCESS);
    return std::chrono::steady_clock::now() - start;
  };
  EXPECT_GE(timed_init(), std::chrono::milliseconds(80));
  EXPECT_LT(timed_init(), std::chrono::milliseconds(80));  // already initialised
}

TEST_F(SimNvml, InvalidScenarioFailsInitSilentlyAndSaysWhyWhenAsked) {
  using LoadErrorFn = const char* (*)();
  auto load_error = lib_.Fn<LoadErrorFn>("gpupinSimLoadError");
  std::string file = tmp_.Write("bad.json", R"({"gpus": [{"uuid": "GPU-1"}]})");
  testing::internal::CaptureStderr();
  EXPECT_EQ(Init(file), NVML_ERROR_UNKNOWN);
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
  EXPECT_TRUE(std::string(load_error()).starts_with(file + ": gpus[0].uuid: invalid UUID"))
      << load_error();
  EXPECT_EQ(Init(tmp_.path() + "/missing.json"), NVML_ERROR_UNKNOWN);
  EXPECT_NE(std::string(load_error()).find("missing.json"), std::string::npos);
  // Neither blocks nor reads without end.
  EXPECT_EQ(Init("/dev/zero"), NVML_ERROR_UNKNOWN);
  EXPECT_EQ(std::string(load_error()), "/dev/zero: not a regular file");
  EXPECT_EQ(Init("sim/testdata/faults.json"), NVML_SUCCESS);
  EXPECT_EQ(std::string(load_error()), "");
}

TEST_F(SimNvml, CallFaultsAndLostGpus) {
  ASSERT_EQ(Init("sim/testdata/faults.json"), NVML_SUCCESS);
  ASSERT_EQ(Count(), 3u);
  char version[kNvmlVersionBufferSize];
  EXPECT_EQ(lib_.Fn<nvmlSystemGetString_fn>("nvmlSystemGetDriverVersion")(version, sizeof version),
            NVML_ERROR_UNKNOWN);
  // A lost GPU still has a handle; every call on it fails.
  nvmlDevice_t lost = Handle(1);
  EXPECT_EQ(String("nvmlDeviceGetName", lost), "error 15");
  EXPECT_EQ(String("nvmlDeviceGetUUID", lost), "error 15");
  EXPECT_EQ(String("nvmlDeviceGetName", Handle(0)), "NVIDIA GeForce RTX 3090");
  nvmlMemory_t v1{};
  nvmlMemory_v2_t v2{kNvmlMemoryV2Version, 0, 0, 0, 0};
  EXPECT_EQ(lib_.Fn<nvmlDeviceGetMemoryInfo_fn>("nvmlDeviceGetMemoryInfo")(Handle(2), &v1),
            NVML_ERROR_NO_PERMISSION);
  EXPECT_EQ(lib_.Fn<nvmlDeviceGetMemoryInfo_v2_fn>("nvmlDeviceGetMemoryInfo_v2")(Handle(2), &v2),
            NVML_ERROR_NO_PERMISSION);
  unsigned n = 0;
  EXPECT_EQ(lib_.Fn<nvmlDeviceGetProcesses_fn>("nvmlDeviceGetComputeRunningProcesses_v3")(
                Handle(2), &n, nullptr),
            NVML_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(lib_.Fn<nvmlDeviceGetProcesses_fn>("nvmlDeviceGetComputeRunningProcesses_v2")(
                Handle(2), &n, nullptr),
            NVML_SUCCESS);
}

void WriteAtomically(const TempDir& dir, const std::string& name, const std::string& text) {
  std::string temp = dir.Write(name + ".new", text);
  ASSERT_EQ(rename(temp.c_str(), (dir.path() + "/" + name).c_str()), 0);
}

std::string GpuList(int count) {
  std::string gpus;
  for (int i = 0; i < count; ++i)
    gpus += std::string(i ? "," : "") + R"({"uuid":"GPU-8932f937-d72c-4106-c12f-20bd9faed9f)" +
            std::to_string(i) + R"(","name":"GPU )" + std::to_string(i) + "\"}";
  return R"({"gpus":[)" + gpus + "]}";
}

TEST_F(SimNvml, RereadsTheScenarioWhenItChanges) {
  WriteAtomically(tmp_, "s.json", GpuList(1));
  ASSERT_EQ(Init(tmp_.path() + "/s.json"), NVML_SUCCESS);
  nvmlDevice_t first = Handle(0);
  EXPECT_EQ(Count(), 1u);
  WriteAtomically(tmp_, "s.json", GpuList(2));
  EXPECT_EQ(Count(), 2u);
  EXPECT_EQ(Handle(0), first);
  EXPECT_EQ(String("nvmlDeviceGetName", Handle(1)), "GPU 1");
  nvmlDevice_t second = Handle(1);
  // A bad edit keeps the last good scenario, and says so once.
  testing::internal::CaptureStderr();
  WriteAtomically(tmp_, "s.json", "{");
  EXPECT_EQ(Count(), 2u);
  EXPECT_EQ(Count(), 2u);
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  WriteAtomically(tmp_, "s.json", GpuList(1));
  EXPECT_EQ(Count(), 1u);
  EXPECT_EQ(String("nvmlDeviceGetName", second), "error 15");  // fell off the bus
  EXPECT_EQ(String("nvmlDeviceGetName", first), "GPU 0");
}

TEST_F(SimNvml, DeviceCallsAnswerFromTheScenarioLastReadUntilACallWithoutADevice) {
  WriteAtomically(tmp_, "s.json", GpuList(1));
  ASSERT_EQ(Init(tmp_.path() + "/s.json"), NVML_SUCCESS);
  nvmlDevice_t gpu = Handle(0);
  std::string renamed = GpuList(1);
  renamed.replace(renamed.find("GPU 0"), 5, "Renamed");
  WriteAtomically(tmp_, "s.json", renamed);
  EXPECT_EQ(String("nvmlDeviceGetName", gpu), "GPU 0");
  EXPECT_EQ(Count(), 1u);
  EXPECT_EQ(String("nvmlDeviceGetName", gpu), "Renamed");
}

// A child that registers itself on `uuid` in the live registry, then waits to be killed.
pid_t StartRegisteredChild(const std::string& dir, const std::string& uuid, uint64_t bytes) {
  int ready[2];
  if (pipe(ready) != 0) return -1;
  pid_t child = fork();
  if (child == 0) {
    LiveProcess p{getpid(), *ProcessStartTime(getpid()), {uuid}, bytes, false, "child"};
    char c = RegisterLive(dir, p).ok() ? 'y' : 'n';
    (void)!write(ready[1], &c, 1);
    pause();
    _exit(0);
  }
  char c = 0;
  bool ok = read(ready[0], &c, 1) == 1 && c == 'y';
  close(ready[0]);
  close(ready[1]);
  return ok ? child : -1;
}

TEST_F(SimNvml, LiveProcessesAppearAndVanishWhenKilled) {
  ASSERT_EQ(Init("examples/server-4gpu.json"), NVML_SUCCESS);
  nvmlDevice_t d = Handle(1);
  std::string uuid = String("nvmlDeviceGetUUID", d);
  auto memory = [&]() {
    nvmlMemory_v2_t m{kNvmlMemoryV2Version, 0, 0, 0, 0};
    EXPECT_EQ(lib_.Fn<nvmlDeviceGetMemoryInfo_v2_fn>("nvmlDeviceGetMemoryInfo_v2")(d, &m),
              NVML_SUCCESS);
    return m;
  };
  uint64_t used_before = memory().used;
  EXPECT_TRUE(Processes(d).empty());

  pid_t child = StartRegisteredChild(live_dir_, uuid, 3ULL << 30);
  ASSERT_GT(child, 0);
  EXPECT_TRUE(Processes(d).empty()) << "device calls answer from the last look";
  EXPECT_EQ(Count(), 4u);  // a call without a device: a new look
  auto processes = Processes(d);
  ASSERT_EQ(processes.size(), 1u);
  EXPECT_EQ(processes[0].pid, static_cast<unsigned>(child));
  EXPECT_EQ(processes[0].usedGpuMemory, 3ULL << 30);
  EXPECT_EQ(memory().used, used_before + (3ULL << 30));
  EXPECT_TRUE(Processes(Handle(0)).empty());

  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  EXPECT_EQ(Count(), 4u);
  EXPECT_TRUE(Processes(d).empty());
  EXPECT_EQ(memory().used, used_before);
}

TEST_F(SimNvml, LiveProcessOnAMigInstance) {
  ASSERT_EQ(Init("examples/a100-mig.json"), NVML_SUCCESS);
  nvmlDevice_t gpu = Handle(0);
  nvmlDevice_t mig = nullptr;
  ASSERT_EQ(lib_.Fn<nvmlDeviceGetMigDeviceHandleByIndex_fn>("nvmlDeviceGetMigDeviceHandleByIndex")(
                gpu, 1, &mig),
            NVML_SUCCESS);
  auto used = [&](nvmlDevice_t d) {
    nvmlMemory_t m{};
    EXPECT_EQ(lib_.Fn<nvmlDeviceGetMemoryInfo_fn>("nvmlDeviceGetMemoryInfo")(d, &m), NVML_SUCCESS);
    return m.used;
  };
  uint64_t gpu_before = used(gpu), mig_before = used(mig);
  pid_t child = StartRegisteredChild(live_dir_, String("nvmlDeviceGetUUID", mig), 1ULL << 30);
  ASSERT_GT(child, 0);
  Count();  // a new look
  auto processes = Processes(mig);
  ASSERT_EQ(processes.size(), 1u);
  EXPECT_EQ(processes[0].pid, static_cast<unsigned>(child));
  EXPECT_EQ(processes[0].gpuInstanceId, 3u);
  EXPECT_EQ(Processes(gpu).size(), 2u);
  EXPECT_EQ(used(mig), mig_before + (1ULL << 30));
  EXPECT_EQ(used(gpu), gpu_before + (1ULL << 30));
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  Count();
  EXPECT_TRUE(Processes(mig).empty());
}

TEST_F(SimNvml, TopologyAndNvLink) {
  ASSERT_EQ(Init("examples/lab-8gpu.json"), NVML_SUCCESS);
  auto ancestor =
      lib_.Fn<nvmlDeviceGetTopologyCommonAncestor_fn>("nvmlDeviceGetTopologyCommonAncestor");
  int level = -1;
  ASSERT_EQ(ancestor(Handle(0), Handle(1), &level), NVML_SUCCESS);
  EXPECT_EQ(level, 10);  // one PCIe switch
  ASSERT_EQ(ancestor(Handle(0), Handle(2), &level), NVML_SUCCESS);
  EXPECT_EQ(level, 40);  // same NUMA node
  ASSERT_EQ(ancestor(Handle(0), Handle(4), &level), NVML_SUCCESS);
  EXPECT_EQ(level, 50);  // across sockets
  shutdown_();
  --inits_;

  std::string file = tmp_.Write("board.json", R"({"gpus": [
      {"uuid": "GPU-8932f937-d72c-4106-c12f-20bd9faed9f0", "board_id": 7, "multi_gpu_board": true},
      {"uuid": "GPU-8932f937-d72c-4106-c12f-20bd9faed9f1", "board_id": 7, "multi_gpu_board": true}]})");
  ASSERT_EQ(Init(file), NVML_SUCCESS);
  ASSERT_EQ(ancestor(Handle(0), Handle(1), &level), NVML_SUCCESS);
  EXPECT_EQ(level, 0);
  shutdown_();
  --inits_;

  ASSERT_EQ(Init("examples/dgx-h100.json"), NVML_SUCCESS);
  auto state = lib_.Fn<nvmlDeviceGetNvLinkState_fn>("nvmlDeviceGetNvLinkState");
  auto remote = lib_.Fn<nvmlDeviceGetNvLinkRemotePciInfo_fn>("nvmlDeviceGetNvLinkRemotePciInfo_v2");
  std::set<std::string> peers;
  unsigned link = 0, active = 0;
  for (; state(Handle(0), link, &active) == NVML_SUCCESS; ++link) {
    nvmlPciInfo_t pci{};
    if (!active) {
      EXPECT_NE(remote(Handle(0), link, &pci), NVML_SUCCESS);
      continue;
    }
    ASSERT_EQ(remote(Handle(0), link, &pci), NVML_SUCCESS);
    peers.insert(pci.busId);
  }
  EXPECT_EQ(link, 18u);
  EXPECT_EQ(peers.size(), 7u);
  EXPECT_FALSE(peers.contains(String("nvmlDeviceGetUUID", Handle(0))));
  EXPECT_TRUE(peers.contains("00000000:DB:00.0"));
}

TEST_F(SimNvml, MigInstances) {
  ASSERT_EQ(Init("examples/a100-mig.json"), NVML_SUCCESS);
  nvmlDevice_t gpu = Handle(0);
  unsigned current = 0, pending = 0, max = 0;
  ASSERT_EQ(lib_.Fn<nvmlDeviceGetMigMode_fn>("nvmlDeviceGetMigMode")(gpu, &current, &pending),
            NVML_SUCCESS);
  EXPECT_EQ(current, kNvmlMigEnable);
  ASSERT_EQ(lib_.Fn<nvmlDeviceGetUint_fn>("nvmlDeviceGetMaxMigDeviceCount")(gpu, &max),
            NVML_SUCCESS);
  EXPECT_EQ(max, 7u);
  auto by_slot =
      lib_.Fn<nvmlDeviceGetMigDeviceHandleByIndex_fn>("nvmlDeviceGetMigDeviceHandleByIndex");
  nvmlDevice_t mig = nullptr;
  EXPECT_EQ(by_slot(gpu, 3, &mig), NVML_ERROR_NOT_FOUND);
  EXPECT_EQ(by_slot(gpu, 7, &mig), NVML_ERROR_INVALID_ARGUMENT);
  ASSERT_EQ(by_slot(gpu, 0, &mig), NVML_SUCCESS);
  EXPECT_TRUE(String("nvmlDeviceGetUUID", mig).starts_with("MIG-"));
  EXPECT_EQ(String("nvmlDeviceGetName", mig), "NVIDIA A100-SXM4-40GB MIG 3g.20gb");
  unsigned id = 0;
  ASSERT_EQ(lib_.Fn<nvmlDeviceGetUint_fn>("nvmlDeviceGetGpuInstanceId")(mig, &id), NVML_SUCCESS);
  EXPECT_EQ(id, 2u);
  nvmlDevice_t parent = nullptr;
  ASSERT_EQ(lib_.Fn<nvmlDeviceGetDeviceHandleFromMigDeviceHandle_fn>(
                "nvmlDeviceGetDeviceHandleFromMigDeviceHandle")(mig, &parent),
            NVML_SUCCESS);
  EXPECT_EQ(parent, gpu);
  auto processes = Processes(mig);
  ASSERT_EQ(processes.size(), 1u);
  EXPECT_EQ(processes[0].gpuInstanceId, 2u);
  EXPECT_EQ(processes[0].computeInstanceId, 0u);
  EXPECT_EQ(Processes(gpu).size(), 1u);  // the parent lists its instances' processes
  nvmlUtilization_t util{};
  EXPECT_EQ(lib_.Fn<nvmlDeviceGetUtilizationRates_fn>("nvmlDeviceGetUtilizationRates")(gpu, &util),
            NVML_ERROR_NOT_SUPPORTED);
  nvmlDevice_t found = nullptr;
  ASSERT_EQ(lib_.Fn<nvmlDeviceGetHandleByString_fn>("nvmlDeviceGetHandleByUUID")(
                String("nvmlDeviceGetUUID", mig).c_str(), &found),
            NVML_SUCCESS);
  EXPECT_EQ(found, mig);
  // GPU 1 is MIG-capable with MIG off.
  ASSERT_EQ(lib_.Fn<nvmlDeviceGetMigMode_fn>("nvmlDeviceGetMigMode")(Handle(1), &current, &pending),
            NVML_SUCCESS);
  EXPECT_EQ(current, 0u);
  ASSERT_EQ(lib_.Fn<nvmlDeviceGetUint_fn>("nvmlDeviceGetMaxMigDeviceCount")(Handle(1), &max),
            NVML_SUCCESS);
  EXPECT_EQ(max, 0u);
}

std::vector<std::string> ListedSymbols() {
  std::ifstream in(SourcePath("sim/nvml_symbols.txt"));
  std::vector<std::string> symbols;
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("nvml")) symbols.push_back(line);
  }
  return symbols;
}

TEST(SimNvmlVariants, ExportExactlyTheirSymbols) {
  auto symbols = ListedSymbols();
  ASSERT_GT(symbols.size(), 50u);
  Library full("libgpupin-sim-nvml.so");
  Library r470("libgpupin-sim-nvml-r470.so");
  Library legacy("libgpupin-sim-nvml-legacy.so");
  for (const auto& s : symbols) {
    const char* name = s.c_str();
    EXPECT_TRUE(full.Has(name)) << name;
    bool newer_than_r470 = s.ends_with("RunningProcesses_v3") ||
                           s == "nvmlDeviceGetMemoryInfo_v2" || s == "nvmlDeviceGetNumGpuCores";
    EXPECT_EQ(r470.Has(name), !newer_than_r470) << name;
    bool versioned = s.find("_v") != std::string::npos;
    EXPECT_EQ(legacy.Has(name), !versioned && !newer_than_r470) << name;
  }
  for (const char* v1 :
       {"nvmlInit", "nvmlDeviceGetCount", "nvmlDeviceGetHandleByIndex", "nvmlDeviceGetPciInfo",
        "nvmlDeviceGetComputeRunningProcesses", "nvmlDeviceGetMemoryInfo"})
    EXPECT_TRUE(legacy.Has(v1)) << v1;
  // Nothing of the implementation leaks out.
  EXPECT_FALSE(
      full.Has("_ZN6gpupin3sim13ParseScenarioESt17basic_string_viewIcSt11char_traitsIcEE"));
}

TEST(SimNvmlVariants, LegacyLibraryWorksThroughV1Calls) {
  setenv("GPUPIN_SIM_SCENARIO", SourcePath("examples/lab-8gpu.json").c_str(), 1);
  Library legacy("libgpupin-sim-nvml-legacy.so");
  ASSERT_EQ(legacy.Fn<nvmlInit_fn>("nvmlInit")(), NVML_SUCCESS);
  unsigned n = 0;
  ASSERT_EQ(legacy.Fn<nvmlDeviceGetCount_fn>("nvmlDeviceGetCount")(&n), NVML_SUCCESS);
  EXPECT_EQ(n, 8u);
  nvmlDevice_t d = nullptr;
  ASSERT_EQ(legacy.Fn<nvmlDeviceGetHandleByIndex_fn>("nvmlDeviceGetHandleByIndex")(7, &d),
            NVML_SUCCESS);
  nvmlPciInfo_t pci{};
  ASSERT_EQ(legacy.Fn<nvmlDeviceGetPciInfo_fn>("nvmlDeviceGetPciInfo")(d, &pci), NVML_SUCCESS);
  EXPECT_STREQ(pci.busId, "00000000:B2:00.0");
  EXPECT_EQ(legacy.Fn<nvmlShutdown_fn>("nvmlShutdown")(), NVML_SUCCESS);
}

}  // namespace
}  // namespace gpupin::sim
