#include "sim/scenario.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "sim/sim_test_util.h"

namespace gpupin::sim {
namespace {

constexpr const char* kUuid = "GPU-8932f937-d72c-4106-c12f-20bd9faed9f6";

std::string OneGpu(const std::string& fields) {
  return std::string(R"({"gpus":[{"uuid":")") + kUuid + "\"" +
         (fields.empty() ? "" : "," + fields) + "}]}";
}

TEST(SimScenario, EveryExampleAndFixtureParses) {
  int files = 0;
  for (const char* dir : {"examples", "sim/testdata"}) {
    for (const auto& entry : std::filesystem::directory_iterator(SourcePath(dir))) {
      // examples/ also holds worked examples, one folder each.
      if (entry.is_directory()) continue;
      if (entry.path().filename().string().starts_with("bad-")) continue;
      auto scenario = LoadScenario(entry.path().string());
      EXPECT_TRUE(scenario.ok()) << scenario.error().message;
      ++files;
    }
  }
  EXPECT_GE(files, 10);
}

TEST(SimScenario, TheDocumentedExampleParses) {
  std::ifstream in(SourcePath("doc/scenario.md"));
  std::string doc((std::istreambuf_iterator<char>(in)), {});
  size_t start = doc.rfind("```json\n");
  ASSERT_NE(start, std::string::npos);
  start += 8;
  auto s = ParseScenario(doc.substr(start, doc.find("```", start) - start));
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(s->process_stride, 32u);
  EXPECT_EQ(s->gpus.size(), 2u);
}

TEST(SimScenario, ReadsEveryGpuField) {
  auto s = LoadScenario(SourcePath("examples/lab-8gpu.json"));
  ASSERT_TRUE(s.ok()) << s.error().message;
  ASSERT_EQ(s->gpus.size(), 8u);
  const SimGpu& g = s->gpus[2];
  EXPECT_EQ(g.name, "NVIDIA GeForce RTX 3090");
  EXPECT_EQ(g.pci->bus_id, "00000000:3D:00.0");
  EXPECT_EQ(g.pci->bus, 0x3Du);
  EXPECT_EQ(g.pci->pci_device_id, 0x220410deu);
  EXPECT_EQ(g.memory->total_bytes, 24ULL << 30);
  EXPECT_EQ(g.memory->used_bytes, 20ULL << 30);  // defaults to its processes' memory
  EXPECT_EQ(g.memory->reserved_bytes, 512ULL << 20);
  EXPECT_EQ(g.utilization->gpu, 97u);
  EXPECT_EQ(g.power_draw_mw, 331500u);
  EXPECT_EQ(g.compute_capability, std::make_pair(8, 6));
  EXPECT_EQ(g.cpu_affinity->size(), 32u);
  EXPECT_EQ(g.numa_node, 0u);
  ASSERT_EQ(g.processes.size(), 1u);
  EXPECT_EQ(g.processes[0].pid, 4200101u);
  EXPECT_EQ(s->cuda_driver_version, 12020);
}

TEST(SimScenario, OmittedFieldsStayAbsent) {
  auto s = ParseScenario(OneGpu(""));
  ASSERT_TRUE(s.ok()) << s.error().message;
  const SimGpu& g = s->gpus[0];
  EXPECT_FALSE(g.name || g.pci || g.memory || g.utilization || g.temperature_c || g.compute_mode ||
               g.compute_capability || g.cores || g.cpu_affinity || g.numa_node || g.mig_enabled ||
               g.nvlinks);
  EXPECT_EQ(s->process_stride, 24u);
}

TEST(SimScenario, ReadsMigInstances) {
  auto s = LoadScenario(SourcePath("examples/a100-mig.json"));
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_TRUE(*s->gpus[0].mig_enabled);
  ASSERT_EQ(s->gpus[0].mig_instances.size(), 3u);
  EXPECT_TRUE(s->gpus[0].mig_instances[0].uuid.starts_with("MIG-"));
  EXPECT_EQ(s->gpus[0].mig_instances[0].gpu_instance_id, 2u);
  EXPECT_FALSE(*s->gpus[1].mig_enabled);
}

struct BadCase {
  const char* json;
  const char* message;  // a part of the expected error
};

class SimScenarioBad : public testing::TestWithParam<BadCase> {};

TEST_P(SimScenarioBad, NamesTheProblem) {
  auto s = ParseScenario(GetParam().json);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find(GetParam().message), std::string::npos) << s.error().message;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, SimScenarioBad,
    testing::Values(
        BadCase{"{", "not valid JSON"}, BadCase{"[]", "expected an object"},
        BadCase{"{}", "missing required key 'gpus'"},
        BadCase{R"({"gpus":[{"name":"x"}]})", "gpus[0]: missing required key 'uuid'"},
        BadCase{R"({"gpus":[{"uuid":"GPU-1234"}]})", "gpus[0].uuid: invalid UUID"},
        BadCase{R"({"gpus":[],"colour":1})", "unknown key 'colour'"},
        BadCase{R"({"gpus":[],"process_stride":28})", "process_stride: must be 24 or 32"},
        BadCase{R"({"gpus":[],"init_error":"BROKEN"})",
                "init_error: 'BROKEN' is not an NVML error code"},
        BadCase{R"({"gpus":[],"version":2})", "reads version 1"},
        BadCase{
            R"({"gpus":[{"uuid":"GPU-8932f937-d72c-4106-c12f-20bd9faed9f6","memory":{"total":"10G","used":"11G"}}]})",
            "used + reserved exceeds total"},
        // Found by fuzz/scenario_fuzz.cc: sums that wrapped around 2^64, a
        // capability without a dot, a fault without a code.
        BadCase{
            R"({"gpus":[{"uuid":"GPU-8932f937-d72c-4106-c12f-20bd9faed9f6","memory":{"total":1,"used":9223372036854775808,"reserved":9223372036854775808}}]})",
            "used + reserved exceeds total"},
        BadCase{
            R"({"gpus":[{"uuid":"GPU-8932f937-d72c-4106-c12f-20bd9faed9f6","memory":{"total":18446744073709551615,"used":18446744073709551615},"processes":[{"pid":1,"used_memory":9223372036854775808},{"pid":2,"used_memory":9223372036854775808}]}]})",
            "gpus[0].processes: the processes' memory adds up to more than 2^64 bytes"},
        BadCase{
            R"({"gpus":[{"uuid":"GPU-8932f937-d72c-4106-c12f-20bd9faed9f6","compute_capability":"86"}]})",
            "invalid compute capability '86'"},
        BadCase{R"({"gpus":[],"cuda_driver_version":"44444412.3"})",
                "invalid compute capability '44444412.3'"},  // 1000 * major overflowed an int
        BadCase{R"({"gpus":[],"errors":{"nvmlInit_v2":null}})",
                "errors.nvmlInit_v2: expected a string"},
        BadCase{
            R"({"gpus":[{"uuid":"GPU-8932f937-d72c-4106-c12f-20bd9faed9f6","memory":{"total":"lots"}}]})",
            "gpus[0].memory.total: invalid size 'lots'"},
        BadCase{
            R"({"gpus":[{"uuid":"GPU-8932f937-d72c-4106-c12f-20bd9faed9f6","pci_bus_id":"3b:00"}]})",
            "invalid PCI bus id '3b:00'"},
        BadCase{
            R"({"gpus":[{"uuid":"GPU-8932f937-d72c-4106-c12f-20bd9faed9f6","cpu_affinity":"0-x"}]})",
            "invalid CPU list"},
        BadCase{
            R"({"gpus":[{"uuid":"GPU-8932f937-d72c-4106-c12f-20bd9faed9f6","compute_mode":"SHARED"}]})",
            "'SHARED' is not DEFAULT"},
        BadCase{
            R"({"gpus":[{"uuid":"GPU-8932f937-d72c-4106-c12f-20bd9faed9f6","utilization":{"gpu":101,"memory":0}}]})",
            "utilization.gpu: 101 is too large"},
        BadCase{
            R"({"gpus":[{"uuid":"GPU-8932f937-d72c-4106-c12f-20bd9faed9f6","processes":[{"pid":0}]}]})",
            "pid above 0"},
        BadCase{
            R"({"gpus":[{"uuid":"GPU-8932f937-d72c-4106-c12f-20bd9faed9f6"},{"uuid":"GPU-8932f937-d72c-4106-c12f-20bd9faed9f6"}]})",
            "used twice"},
        BadCase{
            R"({"gpus":[{"uuid":"GPU-8932f937-d72c-4106-c12f-20bd9faed9f6","errors":{"GetName":"UNKNOWN"}}]})",
            "faults name NVML functions"},
        BadCase{
            R"({"gpus":[{"uuid":"GPU-8932f937-d72c-4106-c12f-20bd9faed9f6","mig":{"enabled":false,"instances":[{"slot":0,"uuid":"MIG-8932f937-d72c-4106-c12f-20bd9faed9f7"}]}}]})",
            "MIG instances need"},
        BadCase{
            R"({"gpus":[{"uuid":"GPU-8932f937-d72c-4106-c12f-20bd9faed9f6"}],"cuda_fastest_first_order":[1]})",
            "cuda_fastest_first_order[0]: 1 is too large"},
        BadCase{
            R"({"gpus":[{"uuid":"GPU-8932f937-d72c-4106-c12f-20bd9faed9f6"}],"cuda_init_hangs":1})",
            "cuda_init_hangs: expected true or false"},
        BadCase{R"({"gpus":[],"nvml_init_ms":60001})", "nvml_init_ms: 60001 is too large"}));

TEST(SimScenario, LoadNamesTheFile) {
  TempDir dir;
  std::string file = dir.Write("broken.json", R"({"gpus": 3})");
  auto s = LoadScenario(file);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message, file + ": gpus: expected a list of GPUs");
  EXPECT_FALSE(LoadScenario(dir.path() + "/missing.json").ok());
}

TEST(SimScenario, FaultNamesCoverEveryVersion) {
  EXPECT_TRUE(FaultMatches("nvmlDeviceGetMemoryInfo", "nvmlDeviceGetMemoryInfo"));
  EXPECT_TRUE(FaultMatches("nvmlDeviceGetMemoryInfo", "nvmlDeviceGetMemoryInfo_v2"));
  EXPECT_FALSE(FaultMatches("nvmlDeviceGetMemoryInfo_v2", "nvmlDeviceGetMemoryInfo"));
  EXPECT_FALSE(FaultMatches("nvmlDeviceGetMemory", "nvmlDeviceGetMemoryInfo"));
}

TEST(SimScenario, UuidBytesAreTheHexDigits) {
  auto bytes = UuidBytes(kUuid);
  ASSERT_TRUE(bytes);
  EXPECT_EQ((*bytes)[0], 0x89);
  EXPECT_EQ((*bytes)[15], 0xf6);
  EXPECT_FALSE(UuidBytes("GPU-8932f937"));
  EXPECT_FALSE(UuidBytes("XPU-8932f937-d72c-4106-c12f-20bd9faed9f6"));
}

TEST(SimScenario, PciBusIdsAreNormalised) {
  EXPECT_EQ(ParsePciBusId("0000:3b:00.0")->bus_id, "00000000:3B:00.0");
  EXPECT_FALSE(ParsePciBusId("0000:3b:00"));
  EXPECT_FALSE(ParsePciBusId("zz:3b:00.0"));
}

}  // namespace
}  // namespace gpupin::sim
