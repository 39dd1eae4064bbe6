#include "sys/cuda_probe.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "core/cuda_visible.h"
#include "sys/environment.h"

namespace gpupin {
namespace {

using ::testing::HasSubstr;

TEST(CudaProbeTest, FormatsRawUuidBytes) {
  const unsigned char bytes[16] = {0x89, 0x32, 0xf9, 0x37, 0xd7, 0x2c, 0x41, 0x06,
                                   0xc1, 0x2f, 0x20, 0xbd, 0x9f, 0xae, 0xd9, 0xf6};
  EXPECT_EQ(FormatCudaUuid(bytes), "GPU-8932f937-d72c-4106-c12f-20bd9faed9f6");
}

TEST(CudaProbeTest, MissingLibraryIsUnavailable) {
  ProbeOptions options;
  options.libcuda_path = "/nonexistent/libcuda.so.1";
  const Result<ProbeResult> probe = ProbeCuda(options);
  ASSERT_TRUE(probe.ok()) << probe.error().message;
  EXPECT_EQ(probe->status, ProbeStatus::kUnavailable);
  EXPECT_THAT(probe->detail, HasSubstr("cannot load /nonexistent/libcuda.so.1"));
  EXPECT_TRUE(probe->devices.empty());
}

TEST(CudaProbeTest, LibraryWithoutCudaSymbolsIsUnavailable) {
  ProbeOptions options;
  options.libcuda_path = "libc.so.6";
  const Result<ProbeResult> probe = ProbeCuda(options);
  ASSERT_TRUE(probe.ok());
  EXPECT_EQ(probe->status, ProbeStatus::kUnavailable);
  EXPECT_THAT(probe->detail, HasSubstr("lacks cuInit"));
}

// Opening a FIFO blocks until a writer comes, so dlopen never returns: a
// driver that hangs, as far as the probe can tell.
TEST(CudaProbeTest, HungDriverIsKilledAfterTheTimeout) {
  const std::string fifo = testing::TempDir() + "gpupin_hung_libcuda_" + std::to_string(getpid());
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  ProbeOptions options;
  options.libcuda_path = fifo;
  options.timeout = std::chrono::milliseconds(300);
  const auto start = std::chrono::steady_clock::now();
  const Result<ProbeResult> probe = ProbeCuda(options);
  const auto took = std::chrono::steady_clock::now() - start;
  std::filesystem::remove(fifo);
  ASSERT_TRUE(probe.ok());
  EXPECT_EQ(probe->status, ProbeStatus::kTimedOut);
  EXPECT_THAT(probe->detail,
              HasSubstr("did not answer within 300 ms (stuck while loading libcuda)"));
  EXPECT_LT(took, std::chrono::seconds(5));
}

// The simulated driver of examples/workstation-mixed.json, asked the way
// `gpupin map --probe` asks, and set against gpupin's model of the same
// environment: the model's FASTEST_FIRST guess ranks the A6000 first, the
// scenario's true order the 3090.
class ProbeVersusModelTest : public ::testing::Test {
 protected:
  static Gpu MakeGpu(uint32_t index, std::string uuid, std::string name, int cores) {
    Gpu gpu;
    gpu.index = index;
    gpu.uuid = std::move(uuid);
    gpu.name = std::move(name);
    gpu.compute_capability = ComputeCapability{8, 6};
    gpu.cores = cores;
    return gpu;
  }

  ProbeResult Probe(const std::string& scenario, const std::map<std::string, std::string>& vars) {
    ProbeOptions options;
    options.libcuda_path = std::string(GPUPIN_TEST_BIN_DIR) + "/libgpupin-sim-cuda.so";
    options.environment = ProcessEnvironment();
    options.environment.erase("CUDA_VISIBLE_DEVICES");
    options.environment.erase("CUDA_DEVICE_ORDER");
    options.environment["GPUPIN_SIM_SCENARIO"] =
        std::string(GPUPIN_TEST_SOURCE_DIR) + "/" + scenario;
    for (const auto& [name, value] : vars) options.environment[name] = value;
    Result<ProbeResult> probe = ProbeCuda(options);
    EXPECT_TRUE(probe.ok());
    return probe.ok() ? *probe : ProbeResult{};
  }

  ProbeComparison Compare(const std::map<std::string, std::string>& vars) {
    ProbeResult probe = Probe("examples/workstation-mixed.json", vars);
    EXPECT_EQ(probe.status, ProbeStatus::kOk) << probe.detail;
    return CompareProbe(ResolveVisibleDevices(gpus_, VisibilityEnvFromMap(vars)), probe);
  }

  const std::string a4000_ = "GPU-4a7c2e91-0b3d-4f6e-8a12-5c9d3e7f1a20";
  const std::string rtx3090_ = "GPU-9e1f5b33-7c2a-4d8e-b6f4-0a3c8d2e5f71";
  const std::string a6000_ = "GPU-2d8b6f40-5e9c-4a1b-93d7-6f0e2c4a8b15";
  std::vector<Gpu> gpus_ = {MakeGpu(0, a4000_, "NVIDIA RTX A4000", 6144),
                            MakeGpu(1, rtx3090_, "NVIDIA GeForce RTX 3090", 10496),
                            MakeGpu(2, a6000_, "NVIDIA RTX A6000", 10752)};
};

TEST_F(ProbeVersusModelTest, AgreeUnderPciBusId) {
  ProbeComparison comparison =
      Compare({{"CUDA_DEVICE_ORDER", "PCI_BUS_ID"}, {"CUDA_VISIBLE_DEVICES", "2,0"}});
  EXPECT_TRUE(comparison.comparable);
  EXPECT_TRUE(comparison.agree);
  EXPECT_TRUE(comparison.differences.empty());
}

TEST_F(ProbeVersusModelTest, DisagreeWhereTheFastestFirstGuessIsWrong) {
  ProbeResult probe = Probe("examples/workstation-mixed.json", {});
  ASSERT_EQ(probe.status, ProbeStatus::kOk) << probe.detail;
  ASSERT_EQ(probe.devices.size(), 3u);
  EXPECT_EQ(probe.devices[0].uuid, rtx3090_);
  EXPECT_EQ(probe.devices[0].name, "NVIDIA GeForce RTX 3090");
  EXPECT_EQ(probe.devices[0].pci_bus_id, "0000:21:00.0");

  ProbeComparison comparison = Compare({});
  EXPECT_TRUE(comparison.comparable);
  EXPECT_FALSE(comparison.agree);
  EXPECT_THAT(comparison.differences,
              ::testing::Contains("cuda:0: gpupin expects GPU 2 (" + a6000_ + "), the driver has " +
                                  rtx3090_));
  EXPECT_THAT(comparison.differences.front(), HasSubstr("was a guess"));
}

TEST_F(ProbeVersusModelTest, UuidsAgreeWhateverTheOrder) {
  ProbeComparison comparison = Compare({{"CUDA_VISIBLE_DEVICES", a4000_ + "," + rtx3090_}});
  EXPECT_TRUE(comparison.agree) << ::testing::PrintToString(comparison.differences);
}

TEST_F(ProbeVersusModelTest, InitFaultIsNotComparable) {
  ProbeResult probe = Probe("sim/testdata/init-lib-rm-version-mismatch.json", {});
  EXPECT_EQ(probe.status, ProbeStatus::kInitFailed);
  EXPECT_EQ(probe.cuda_error, 803);
  ProbeComparison comparison = CompareProbe(ResolveVisibleDevices(gpus_, {}), probe);
  EXPECT_FALSE(comparison.comparable);
  EXPECT_FALSE(comparison.agree);
  ASSERT_EQ(comparison.differences.size(), 1u);
  EXPECT_THAT(comparison.differences[0], HasSubstr("the driver gave no answer"));
}

}  // namespace
}  // namespace gpupin
