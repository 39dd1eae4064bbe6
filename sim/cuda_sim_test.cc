// The simulated libcuda, asked through gpupin's own CUDA probe (a forked
// child that dlopens it under a given environment), as gpupin asks the real one.
#include <gtest/gtest.h>

#include "sim/scenario.h"
#include "sim/sim_test_util.h"
#include "sys/cuda_probe.h"
#include "sys/environment.h"

namespace gpupin::sim {
namespace {

ProbeResult Probe(const std::string& scenario, const std::map<std::string, std::string>& vars,
                  std::chrono::milliseconds timeout = std::chrono::milliseconds(5000)) {
  ProbeOptions options;
  options.timeout = timeout;
  options.libcuda_path = BinPath("libgpupin-sim-cuda.so");
  options.environment = ProcessEnvironment();
  options.environment.erase("CUDA_VISIBLE_DEVICES");
  options.environment.erase("CUDA_DEVICE_ORDER");
  options.environment["GPUPIN_SIM_SCENARIO"] =
      scenario.starts_with("/") ? scenario : SourcePath(scenario);
  for (const auto& [k, v] : vars) options.environment[k] = v;
  auto result = ProbeCuda(options);
  EXPECT_TRUE(result.ok());
  return result.ok() ? *result : ProbeResult{};
}

std::vector<std::string> Uuids(const ProbeResult& r) {
  std::vector<std::string> uuids;
  for (const auto& d : r.devices) uuids.push_back(d.uuid.value_or("?"));
  return uuids;
}

class SimCuda : public testing::Test {
 protected:
  std::vector<std::string> lab_ = ScenarioUuids("examples/lab-8gpu.json");  // by NVML index
};

TEST_F(SimCuda, FastestFirstByDefault) {
  ProbeResult r = Probe("examples/lab-8gpu.json", {});
  ASSERT_EQ(r.status, ProbeStatus::kOk) << r.detail;
  EXPECT_EQ(r.driver_version, 12020);
  // A6000s (8.6, most cores), then 3090s, then 2080 Tis, each in PCI order.
  EXPECT_EQ(Uuids(r), (std::vector<std::string>{lab_[1], lab_[3], lab_[4], lab_[7], lab_[2],
                                                lab_[6], lab_[0], lab_[5]}));
  EXPECT_EQ(r.devices[0].name, "NVIDIA RTX A6000");
  EXPECT_EQ(r.devices[0].pci_bus_id, "0000:1B:00.0");
}

TEST_F(SimCuda, PciOrderAndVisibleDevices) {
  ProbeResult r = Probe("examples/lab-8gpu.json",
                        {{"CUDA_DEVICE_ORDER", "PCI_BUS_ID"}, {"CUDA_VISIBLE_DEVICES", "2,0"}});
  ASSERT_EQ(r.status, ProbeStatus::kOk) << r.detail;
  EXPECT_EQ(Uuids(r), (std::vector<std::string>{lab_[2], lab_[0]}));
  // Without PCI_BUS_ID the same indices count in FASTEST_FIRST order.
  r = Probe("examples/lab-8gpu.json", {{"CUDA_VISIBLE_DEVICES", "2,0"}});
  EXPECT_EQ(Uuids(r), (std::vector<std::string>{lab_[4], lab_[1]}));
  r = Probe("examples/lab-8gpu.json", {{"CUDA_VISIBLE_DEVICES", lab_[5].substr(0, 12) + ",-1,3"}});
  EXPECT_EQ(Uuids(r), (std::vector<std::string>{lab_[5]}));
}

TEST_F(SimCuda, HiddenEverythingIsNoDevice) {
  ProbeResult r = Probe("examples/lab-8gpu.json", {{"CUDA_VISIBLE_DEVICES", ""}});
  EXPECT_EQ(r.status, ProbeStatus::kNoDevice);
  EXPECT_EQ(r.cuda_error, 100);
}

TEST_F(SimCuda, TrueFastestFirstOrderComesFromTheScenario) {
  TempDir tmp;
  std::string file = tmp.Write("order.json", R"({"cuda_fastest_first_order": [2, 0, 1], "gpus": [
      {"uuid": "GPU-8932f937-d72c-4106-c12f-20bd9faed9f0", "name": "A", "compute_capability": "8.0"},
      {"uuid": "GPU-8932f937-d72c-4106-c12f-20bd9faed9f1", "name": "A", "compute_capability": "8.0"},
      {"uuid": "GPU-8932f937-d72c-4106-c12f-20bd9faed9f2", "name": "B", "compute_capability": "7.0"}]})");
  ProbeResult r = Probe(file, {});
  ASSERT_EQ(r.status, ProbeStatus::kOk) << r.detail;
  EXPECT_EQ(Uuids(r), (std::vector<std::string>{"GPU-8932f937-d72c-4106-c12f-20bd9faed9f2",
                                                "GPU-8932f937-d72c-4106-c12f-20bd9faed9f0",
                                                "GPU-8932f937-d72c-4106-c12f-20bd9faed9f1"}));
  r = Probe(file, {{"CUDA_DEVICE_ORDER", "PCI_BUS_ID"}, {"CUDA_VISIBLE_DEVICES", "2"}});
  EXPECT_EQ(Uuids(r), (std::vector<std::string>{"GPU-8932f937-d72c-4106-c12f-20bd9faed9f2"}));
}

TEST_F(SimCuda, MigInstanceByUuid) {
  auto s = LoadScenario(SourcePath("examples/a100-mig.json"));
  ASSERT_TRUE(s.ok());
  const std::string mig = s->gpus[0].mig_instances[1].uuid;
  ProbeResult r = Probe("examples/a100-mig.json", {{"CUDA_VISIBLE_DEVICES", mig}});
  ASSERT_EQ(r.status, ProbeStatus::kOk) << r.detail;
  ASSERT_EQ(r.devices.size(), 1u);
  EXPECT_EQ(r.devices[0].name, "NVIDIA A100-SXM4-40GB MIG 2g.10gb");
  // The probe formats 16 raw bytes as GPU-...; they are the MIG UUID's digits.
  EXPECT_EQ(r.devices[0].uuid->substr(4), mig.substr(4));
}

TEST_F(SimCuda, InitFaults) {
  ProbeResult r = Probe("sim/testdata/init-lib-rm-version-mismatch.json", {});
  EXPECT_EQ(r.status, ProbeStatus::kInitFailed);
  EXPECT_EQ(r.cuda_error, 803);
  r = Probe("sim/testdata/init-driver-not-loaded.json", {});
  EXPECT_EQ(r.status, ProbeStatus::kNoDevice);
}

TEST_F(SimCuda, InitHangsWhenTheScenarioSaysSo) {
  TempDir tmp;
  std::string file = tmp.Write("hang.json", R"({"cuda_init_hangs": true, "gpus": [
      {"uuid": "GPU-8932f937-d72c-4106-c12f-20bd9faed9f0", "name": "A"}]})");
  ProbeResult r = Probe(file, {}, std::chrono::milliseconds(300));
  EXPECT_EQ(r.status, ProbeStatus::kTimedOut);
  EXPECT_NE(r.detail.find("stuck in cuInit"), std::string::npos) << r.detail;
}

TEST(SimCudaLibrary, ExportsTheDriverCalls) {
  Library cuda("libgpupin-sim-cuda.so");
  for (const char* symbol :
       {"cuInit", "cuDriverGetVersion", "cuDeviceGetCount", "cuDeviceGet", "cuDeviceGetName",
        "cuDeviceGetUuid", "cuDeviceGetUuid_v2", "cuDeviceGetPCIBusId", "cuGetErrorString"})
    EXPECT_TRUE(cuda.Has(symbol)) << symbol;
  EXPECT_FALSE(cuda.Has("nvmlInit_v2"));
  using GetCount = int (*)(int*);
  using GetErrorString = int (*)(int, const char**);
  int count = 0;
  EXPECT_EQ(cuda.Fn<GetCount>("cuDeviceGetCount")(&count), 3);  // CUDA_ERROR_NOT_INITIALIZED
  const char* text = nullptr;
  EXPECT_EQ(cuda.Fn<GetErrorString>("cuGetErrorString")(100, &text), 0);
  EXPECT_STREQ(text, "no CUDA-capable device is detected");
  EXPECT_EQ(cuda.Fn<GetErrorString>("cuGetErrorString")(12345, &text), 1);
}

}  // namespace
}  // namespace gpupin::sim
