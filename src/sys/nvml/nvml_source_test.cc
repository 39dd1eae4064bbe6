#include "sys/nvml/nvml_source.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "sys/nvml/nvml_library.h"

namespace gpupin {
namespace {

using nlohmann::json;
using testing::HasSubstr;

TEST(NvmlLibraryCandidatesTest, ExplicitPathIsTheOnlyCandidate) {
  NvmlOptions options{.library_path = "/opt/nvml/libnvidia-ml.so.1"};
  EXPECT_THAT(NvmlLibraryCandidates(options, "/from/env.so"),
              testing::ElementsAre("/opt/nvml/libnvidia-ml.so.1"));
}

TEST(NvmlLibraryCandidatesTest, EnvironmentComesNext) {
  EXPECT_THAT(NvmlLibraryCandidates({}, "/from/env.so"), testing::ElementsAre("/from/env.so"));
}

TEST(NvmlLibraryCandidatesTest, DefaultsPreferTheDriversSoname) {
  const std::vector<std::string> defaults = {"libnvidia-ml.so.1", "libnvidia-ml.so"};
  EXPECT_EQ(NvmlLibraryCandidates({}, nullptr), defaults);
  EXPECT_EQ(NvmlLibraryCandidates({}, ""), defaults);
}

TEST(OpenNvmlTest, MissingLibraryNamesThePathAndWhatToCheck) {
  auto source = OpenNvml({.library_path = "/nonexistent"});
  ASSERT_FALSE(source.ok());
  EXPECT_EQ(source.error().code, ExitCode::kNvmlUnavailable);
  EXPECT_EQ(static_cast<int>(source.error().code), 4);
  EXPECT_THAT(source.error().message, HasSubstr("/nonexistent"));
  EXPECT_THAT(source.error().message, HasSubstr("is the NVIDIA driver installed? Try nvidia-smi"));
  EXPECT_THAT(source.error().message, HasSubstr("--simulate FILE"));
  EXPECT_EQ(source.error().message.find('\n'), std::string::npos);
}

TEST(OpenNvmlTest, LibraryWithoutNvmlNamesTheMissingFunction) {
  // Any real shared library that is not NVML: the C math library.
  auto source = OpenNvml({.library_path = "libm.so.6"});
  ASSERT_FALSE(source.ok());
  EXPECT_EQ(source.error().code, ExitCode::kNvmlUnavailable);
  EXPECT_THAT(source.error().message, HasSubstr("libm.so.6"));
  EXPECT_THAT(source.error().message, HasSubstr("nvmlInit_v2 or nvmlInit"));
}

// The simulated NVML, loaded through OpenNvml exactly as the driver's would
// be, answering from a scenario each test derives from one fixture.
class SimNvmlTest : public testing::Test {
 protected:
  static constexpr const char* kAll = "libgpupin-sim-nvml.so";
  static constexpr const char* kR470 = "libgpupin-sim-nvml-r470.so";
  static constexpr const char* kLegacy = "libgpupin-sim-nvml-legacy.so";

  void TearDown() override { unsetenv("GPUPIN_SIM_SCENARIO"); }

  static json Fixture() {
    std::ifstream in(GPUPIN_TEST_SOURCE_DIR "/src/sys/nvml/testdata/server-4gpu.json");
    std::stringstream text;
    text << in.rdbuf();
    return json::parse(text.str());
  }

  static std::string LibraryPath(const char* library) {
    return std::string(GPUPIN_TEST_BIN_DIR "/") + library;
  }

  // Writes `scenario` where the simulated library reads it.
  void UseScenario(const json& scenario) {
    const testing::TestInfo* test = testing::UnitTest::GetInstance()->current_test_info();
    std::string name = std::string(test->test_suite_name()) + "." + test->name();
    std::replace(name.begin(), name.end(), '/', '_');
    const std::string path = testing::TempDir() + "/nvml_source_test_" + name + ".json";
    std::ofstream(path) << scenario.dump();
    setenv("GPUPIN_SIM_SCENARIO", path.c_str(), 1);
  }

  Result<std::unique_ptr<GpuSource>> Open(const json& scenario, const char* library = kAll) {
    UseScenario(scenario);
    return OpenNvml({.library_path = LibraryPath(library), .simulated = true});
  }

  Inventory Snapshot(const json& scenario, const char* library = kAll) {
    auto source = Open(scenario, library);
    EXPECT_TRUE(source.ok()) << source.error().message;
    if (!source.ok()) return {};
    auto inventory = (*source)->Snapshot(gpu_facts::kAll);
    EXPECT_TRUE(inventory.ok()) << inventory.error().message;
    return inventory.ok() ? *inventory : Inventory{};
  }

  static std::vector<uint32_t> Pids(const std::vector<GpuProcess>& processes) {
    std::vector<uint32_t> pids;
    for (const GpuProcess& p : processes) pids.push_back(p.pid);
    return pids;
  }
};

TEST_F(SimNvmlTest, ReadsEveryFieldOfAGpu) {
  const Inventory inventory = Snapshot(Fixture());
  EXPECT_TRUE(inventory.simulated);
  EXPECT_EQ(inventory.driver_version, "535.104.05");
  EXPECT_EQ(inventory.nvml_version, "12.535.104.05");
  EXPECT_EQ(inventory.cuda_driver_version, 12020);
  ASSERT_EQ(inventory.gpus.size(), 4u);

  const Gpu& gpu = inventory.gpus[0];
  EXPECT_TRUE(gpu.healthy());
  EXPECT_EQ(gpu.index, 0u);
  EXPECT_EQ(gpu.uuid, "GPU-00000000-0000-4000-8000-000000000000");
  EXPECT_EQ(gpu.pci_bus_id, "00000000:07:00.0");
  EXPECT_EQ(gpu.name, "NVIDIA A100-SXM4-80GB");
  EXPECT_EQ(gpu.memory_total_bytes, 85899345920u);
  EXPECT_EQ(gpu.memory_used_bytes, 4294967296u);
  EXPECT_EQ(gpu.memory_reserved_bytes, 536870912u);
  EXPECT_EQ(gpu.memory_free_bytes, 85899345920u - 4294967296u - 536870912u);
  EXPECT_EQ(gpu.utilization_gpu_percent, 37u);
  EXPECT_EQ(gpu.utilization_memory_percent, 12u);
  EXPECT_EQ(gpu.temperature_c, 41u);
  EXPECT_EQ(gpu.power_draw_mw, 123500u);
  EXPECT_EQ(gpu.power_limit_mw, 400000u);
  EXPECT_EQ(gpu.compute_mode, ComputeMode::kDefault);
  EXPECT_EQ(gpu.persistence_mode, true);
  EXPECT_EQ(gpu.compute_capability, (ComputeCapability{8, 0}));
  EXPECT_EQ(gpu.cores, 6912u);
  EXPECT_EQ(gpu.minor_number, 2u);
  EXPECT_EQ(gpu.cpu_affinity, "0-15,32-47");
  EXPECT_EQ(gpu.numa_node, 0);
  EXPECT_EQ(gpu.board_id, 1792u);
  EXPECT_EQ(gpu.multi_gpu_board, false);
  EXPECT_EQ(gpu.mig_enabled, std::nullopt);
  EXPECT_TRUE(gpu.mig_devices.empty());
  // Two links to GPU 1 (bus ids written two ways) make one peer.
  EXPECT_THAT(gpu.nvlink_peer_bus_ids, testing::ElementsAre("00000000:0F:00.0"));

  EXPECT_TRUE(gpu.processes_known);
  ASSERT_EQ(gpu.processes.size(), 3u);
  EXPECT_EQ(gpu.processes[0].pid, 1001u);
  EXPECT_EQ(gpu.processes[0].used_memory_bytes, 3221225472u);
  EXPECT_TRUE(gpu.processes[0].compute && !gpu.processes[0].graphics);
  EXPECT_EQ(gpu.processes[0].gpu_instance_id, std::nullopt);
  EXPECT_EQ(gpu.processes[1].pid, 1002u);
  EXPECT_TRUE(gpu.processes[1].compute && gpu.processes[1].graphics);
  EXPECT_EQ(gpu.processes[2].pid, 1003u);
  EXPECT_EQ(gpu.processes[2].used_memory_bytes, std::nullopt);
  EXPECT_TRUE(!gpu.processes[2].compute && gpu.processes[2].graphics);

  EXPECT_EQ(inventory.gpus[1].compute_mode, ComputeMode::kExclusiveProcess);
  EXPECT_EQ(inventory.gpus[1].persistence_mode, false);
  EXPECT_TRUE(inventory.gpus[1].processes.empty());
  EXPECT_TRUE(inventory.gpus[1].processes_known);
  EXPECT_EQ(inventory.gpus[2].compute_mode, ComputeMode::kProhibited);
  EXPECT_EQ(inventory.gpus[2].numa_node, 1);
  EXPECT_EQ(inventory.gpus[2].cpu_affinity, "16-31,48-63");
}

TEST_F(SimNvmlTest, FieldsTheScenarioLeavesOutAreUnknown) {
  const Gpu gpu = Snapshot(Fixture()).gpus.at(2);
  EXPECT_TRUE(gpu.healthy());
  EXPECT_EQ(gpu.utilization_gpu_percent, std::nullopt);
  EXPECT_EQ(gpu.temperature_c, std::nullopt);
  EXPECT_EQ(gpu.power_draw_mw, std::nullopt);
  EXPECT_EQ(gpu.persistence_mode, std::nullopt);
  EXPECT_EQ(gpu.compute_capability, std::nullopt);
  EXPECT_EQ(gpu.cores, std::nullopt);
  EXPECT_EQ(gpu.board_id, std::nullopt);
}

TEST_F(SimNvmlTest, NvLinkPeersAndTopology) {
  const Inventory inventory = Snapshot(Fixture());
  ASSERT_EQ(inventory.gpus.size(), 4u);
  EXPECT_THAT(inventory.gpus[1].nvlink_peer_bus_ids, testing::ElementsAre("00000000:07:00.0"));
  EXPECT_THAT(inventory.gpus[2].nvlink_peer_bus_ids, testing::ElementsAre("00000000:4E:00.0"));
  EXPECT_THAT(inventory.gpus[3].nvlink_peer_bus_ids, testing::ElementsAre("00000000:47:00.0"));
  ASSERT_EQ(inventory.topology.size(), 4u);
  EXPECT_EQ(inventory.topology[0][1], TopologyLevel::kSingle);
  EXPECT_EQ(inventory.topology[1][0], TopologyLevel::kSingle);
  EXPECT_EQ(inventory.topology[0][2], TopologyLevel::kHostBridge);
  EXPECT_EQ(inventory.topology[2][3], TopologyLevel::kHostBridge);
  EXPECT_EQ(inventory.topology[0][0], std::nullopt);
}

TEST_F(SimNvmlTest, MigInstancesWithTheirProcesses) {
  const Gpu gpu = Snapshot(Fixture()).gpus.at(3);
  EXPECT_TRUE(gpu.healthy());
  EXPECT_EQ(gpu.mig_enabled, true);
  ASSERT_EQ(gpu.mig_devices.size(), 2u);
  const MigDevice& first = gpu.mig_devices[0];
  EXPECT_EQ(first.index, 0u);
  EXPECT_EQ(first.uuid, "MIG-aaaaaaaa-aaaa-5aaa-8aaa-aaaaaaaaaaaa");
  EXPECT_EQ(first.name, "NVIDIA A100-SXM4-80GB MIG 3g.40gb");
  EXPECT_EQ(first.gpu_instance_id, 1u);
  EXPECT_EQ(first.compute_instance_id, 0u);
  EXPECT_EQ(first.memory_total_bytes, 42949672960u);
  EXPECT_EQ(first.memory_used_bytes, 2147483648u);
  EXPECT_EQ(Pids(first.processes), std::vector<uint32_t>{3001});
  EXPECT_EQ(first.processes[0].gpu_instance_id, 1u);
  const MigDevice& second = gpu.mig_devices[1];
  EXPECT_EQ(second.index, 2u);
  EXPECT_EQ(second.gpu_instance_id, 5u);
  EXPECT_EQ(Pids(second.processes), std::vector<uint32_t>{3002});
  // The GPU's own list is its instances' lists, each process tagged.
  EXPECT_TRUE(gpu.processes_known);
  EXPECT_EQ(Pids(gpu.processes), (std::vector<uint32_t>{3001, 3002}));
  EXPECT_EQ(gpu.processes[1].gpu_instance_id, 5u);
  EXPECT_EQ(gpu.processes[1].compute_instance_id, 0u);
}

TEST_F(SimNvmlTest, R470LibraryFallsBackToOlderSymbols) {
  const Inventory inventory = Snapshot(Fixture(), kR470);
  ASSERT_EQ(inventory.gpus.size(), 4u);
  const Gpu& gpu = inventory.gpus[0];
  EXPECT_TRUE(gpu.healthy());
  // nvmlDeviceGetMemoryInfo (v1): used includes the driver's reservation.
  EXPECT_EQ(gpu.memory_total_bytes, 85899345920u);
  EXPECT_EQ(gpu.memory_reserved_bytes, std::nullopt);
  EXPECT_EQ(gpu.memory_used_bytes, 4294967296u + 536870912u);
  EXPECT_EQ(gpu.cores, std::nullopt);
  // _v2 process lists still carry MIG instance ids.
  EXPECT_EQ(Pids(gpu.processes), (std::vector<uint32_t>{1001, 1002, 1003}));
  EXPECT_EQ(gpu.processes[0].used_memory_bytes, 3221225472u);
  EXPECT_EQ(inventory.gpus[3].processes.at(1).gpu_instance_id, 5u);
}

TEST_F(SimNvmlTest, LegacyLibraryUsesUnversionedSymbols) {
  const Inventory inventory = Snapshot(Fixture(), kLegacy);
  ASSERT_EQ(inventory.gpus.size(), 4u);
  const Gpu& gpu = inventory.gpus[0];
  EXPECT_TRUE(gpu.healthy());
  EXPECT_EQ(gpu.uuid, "GPU-00000000-0000-4000-8000-000000000000");
  EXPECT_EQ(gpu.pci_bus_id, "00000000:07:00.0");
  EXPECT_EQ(gpu.memory_reserved_bytes, std::nullopt);
  // v1 process entries: 16 bytes, no MIG instance ids of their own.
  EXPECT_EQ(Pids(gpu.processes), (std::vector<uint32_t>{1001, 1002, 1003}));
  EXPECT_EQ(gpu.processes[0].used_memory_bytes, 3221225472u);
  EXPECT_EQ(gpu.processes[0].gpu_instance_id, std::nullopt);
  // ... which the instance they were read from supplies.
  EXPECT_EQ(inventory.gpus[3].processes.at(1).gpu_instance_id, 5u);
}

TEST_F(SimNvmlTest, WideAndNarrowV3EntriesReadTheSame) {
  json narrow = Fixture();
  narrow["process_stride"] = 24;
  json wide = Fixture();
  wide["process_stride"] = 32;
  const Inventory a = Snapshot(narrow);
  const Inventory b = Snapshot(wide);
  ASSERT_EQ(a.gpus.size(), 4u);
  ASSERT_EQ(b.gpus.size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    ASSERT_EQ(a.gpus[i].processes.size(), b.gpus[i].processes.size()) << "GPU " << i;
    for (size_t p = 0; p < a.gpus[i].processes.size(); ++p) {
      EXPECT_EQ(a.gpus[i].processes[p].pid, b.gpus[i].processes[p].pid);
      EXPECT_EQ(a.gpus[i].processes[p].used_memory_bytes, b.gpus[i].processes[p].used_memory_bytes);
      EXPECT_EQ(a.gpus[i].processes[p].gpu_instance_id, b.gpus[i].processes[p].gpu_instance_id);
    }
  }
  EXPECT_EQ(Pids(b.gpus[0].processes), (std::vector<uint32_t>{1001, 1002, 1003}));
}

TEST_F(SimNvmlTest, ProcessesThatStartBetweenTheTwoCallsAreRead) {
  json scenario = Fixture();
  scenario["grow_processes_on_fetch"] = 40;
  const Inventory inventory = Snapshot(scenario);
  ASSERT_EQ(inventory.gpus.size(), 4u);
  const Gpu& gpu = inventory.gpus[0];
  EXPECT_TRUE(gpu.processes_known);
  // After the size query said 3, 40 more appeared: more than the slack of
  // the first read, so only a retry sees them all.
  ASSERT_EQ(gpu.processes.size(), 43u);
  // The compute list (1001, 1002 and the newcomers), then the graphics-only 1003.
  EXPECT_EQ(gpu.processes[1].pid, 1002u);
  EXPECT_EQ(gpu.processes[2].pid, 5000000u);
  EXPECT_EQ(gpu.processes[41].pid, 5000039u);
  EXPECT_EQ(gpu.processes[42].pid, 1003u);
}

TEST_F(SimNvmlTest, LostGpuIsReportedAndTheOthersStillShow) {
  json scenario = Fixture();
  scenario["gpus"][1]["lost"] = true;
  const Inventory inventory = Snapshot(scenario);
  ASSERT_EQ(inventory.gpus.size(), 4u);
  const Gpu& lost = inventory.gpus[1];
  EXPECT_FALSE(lost.healthy());
  EXPECT_EQ(lost.index, 1u);
  EXPECT_THAT(*lost.health_error, HasSubstr("lost"));
  EXPECT_FALSE(lost.processes_known);
  EXPECT_EQ(lost.memory_total_bytes, std::nullopt);
  for (size_t i : {0, 2, 3}) EXPECT_TRUE(inventory.gpus[i].healthy()) << "GPU " << i;
  EXPECT_EQ(inventory.gpus[0].memory_total_bytes, 85899345920u);
  EXPECT_TRUE(inventory.gpus[0].nvlink_peer_bus_ids.empty());
  EXPECT_EQ(inventory.topology.at(0).at(1), std::nullopt);
  EXPECT_EQ(inventory.topology.at(0).at(2), TopologyLevel::kHostBridge);
}

TEST_F(SimNvmlTest, GpuThatFailsAfterItsIdentityKeepsIt) {
  json scenario = Fixture();
  scenario["gpus"][2]["errors"] = {{"nvmlDeviceGetMemoryInfo", "UNKNOWN"}};
  const Gpu gpu = Snapshot(scenario).gpus.at(2);
  EXPECT_FALSE(gpu.healthy());
  EXPECT_EQ(gpu.uuid, "GPU-22222222-2222-4222-8222-222222222222");
  EXPECT_EQ(gpu.pci_bus_id, "00000000:47:00.0");
  EXPECT_THAT(*gpu.health_error, HasSubstr("memory"));
}

TEST_F(SimNvmlTest, GpuThatNeedsAResetIsUnhealthy) {
  json scenario = Fixture();
  scenario["gpus"][0]["errors"] = {{"nvmlDeviceGetTemperature", "RESET_REQUIRED"}};
  const Inventory inventory = Snapshot(scenario);
  EXPECT_THAT(inventory.gpus.at(0).health_error.value_or(""), HasSubstr("nvidia-smi -r"));
  EXPECT_TRUE(inventory.gpus.at(1).healthy());
}

TEST_F(SimNvmlTest, HandleFailureKeepsTheIndex) {
  json scenario = Fixture();
  scenario["gpus"][3]["errors"] = {{"nvmlDeviceGetHandleByIndex", "NO_PERMISSION"}};
  const Inventory inventory = Snapshot(scenario);
  ASSERT_EQ(inventory.gpus.size(), 4u);
  EXPECT_EQ(inventory.gpus[3].index, 3u);
  EXPECT_FALSE(inventory.gpus[3].healthy());
  EXPECT_TRUE(inventory.gpus[2].healthy());
}

TEST_F(SimNvmlTest, UnsupportedCallIsAnUnknownFieldNotAnError) {
  json scenario = Fixture();
  scenario["gpus"][0]["errors"] = {{"nvmlDeviceGetTemperature", "NOT_SUPPORTED"},
                                   {"nvmlDeviceGetPowerUsage", "NO_PERMISSION"},
                                   {"nvmlDeviceGetCpuAffinity", "NOT_SUPPORTED"}};
  const Gpu gpu = Snapshot(scenario).gpus.at(0);
  EXPECT_TRUE(gpu.healthy());
  EXPECT_EQ(gpu.temperature_c, std::nullopt);
  EXPECT_EQ(gpu.power_draw_mw, std::nullopt);
  EXPECT_EQ(gpu.cpu_affinity, std::nullopt);
  EXPECT_EQ(gpu.power_limit_mw, 400000u);
  EXPECT_EQ(gpu.utilization_gpu_percent, 37u);
}

TEST_F(SimNvmlTest, MemoryV2RejectedFallsBackToV1) {
  json scenario = Fixture();
  scenario["gpus"][0]["errors"] = {{"nvmlDeviceGetMemoryInfo_v2", "ARGUMENT_VERSION_MISMATCH"}};
  const Gpu gpu = Snapshot(scenario).gpus.at(0);
  EXPECT_TRUE(gpu.healthy());
  EXPECT_EQ(gpu.memory_total_bytes, 85899345920u);
  EXPECT_EQ(gpu.memory_reserved_bytes, std::nullopt);
}

TEST_F(SimNvmlTest, MemoryV2FailingOnAGpuThatAnswersFallsBackToV1) {
  for (const char* code : {"UNKNOWN", "NOT_SUPPORTED"}) {
    json scenario = Fixture();
    scenario["gpus"][0]["errors"] = {{"nvmlDeviceGetMemoryInfo_v2", code}};
    const Gpu gpu = Snapshot(scenario).gpus.at(0);
    EXPECT_TRUE(gpu.healthy()) << code;
    EXPECT_EQ(gpu.memory_total_bytes, 85899345920u) << code;
    EXPECT_EQ(gpu.memory_reserved_bytes, std::nullopt) << code;
  }
}

TEST_F(SimNvmlTest, MemoryOfALostGpuIsNotAskedAgainThroughV1) {
  json scenario = Fixture();
  scenario["gpus"][0]["errors"] = {{"nvmlDeviceGetMemoryInfo_v2", "GPU_IS_LOST"}};
  const Gpu gpu = Snapshot(scenario).gpus.at(0);
  EXPECT_FALSE(gpu.healthy());
  EXPECT_EQ(gpu.memory_total_bytes, std::nullopt);
}

TEST_F(SimNvmlTest, UnsupportedGraphicsListLeavesTheComputeListKnown) {
  json scenario = Fixture();
  scenario["gpus"][0]["errors"] = {{"nvmlDeviceGetGraphicsRunningProcesses", "NOT_SUPPORTED"}};
  const Inventory inventory = Snapshot(scenario);
  const Gpu& gpu = inventory.gpus.at(0);
  EXPECT_TRUE(gpu.healthy());
  EXPECT_TRUE(gpu.processes_known);
  EXPECT_FALSE(gpu.processes.empty());

  scenario["gpus"][0]["errors"] = {{"nvmlDeviceGetComputeRunningProcesses", "NOT_SUPPORTED"}};
  EXPECT_FALSE(Snapshot(scenario).gpus.at(0).processes_known)
      << "jobs run in the compute list: without it the card's processes are unknown";
}

TEST_F(SimNvmlTest, CudaVersionFallsBackToV1WithoutLibcuda) {
  json scenario = Fixture();
  scenario["errors"] = {{"nvmlSystemGetCudaDriverVersion_v2", "LIBRARY_NOT_FOUND"}};
  const std::optional<int> version = Snapshot(scenario).cuda_driver_version;
  EXPECT_TRUE(version.has_value());
  EXPECT_GT(version.value_or(0), 0);
}

TEST_F(SimNvmlTest, ProcessesWithoutPermissionAreUnknownNotIdle) {
  json scenario = Fixture();
  scenario["gpus"][0]["errors"] = {{"nvmlDeviceGetComputeRunningProcesses", "NO_PERMISSION"}};
  const Inventory inventory = Snapshot(scenario);
  const Gpu& gpu = inventory.gpus.at(0);
  EXPECT_TRUE(gpu.healthy());
  EXPECT_FALSE(gpu.processes_known);
  EXPECT_TRUE(inventory.gpus.at(1).processes_known);
}

TEST_F(SimNvmlTest, ARefusedV3ProcessListFallsBackToTheOlderSymbols) {
  json scenario = Fixture();
  const size_t listed = Snapshot(scenario).gpus.at(0).processes.size();
  ASSERT_GT(listed, 0u);
  scenario["gpus"][0]["errors"] = {
      {"nvmlDeviceGetComputeRunningProcesses_v3", "FUNCTION_NOT_FOUND"}};
  Gpu gpu = Snapshot(scenario).gpus.at(0);
  EXPECT_TRUE(gpu.processes_known) << "_v2 answers where the driver refuses _v3";
  EXPECT_EQ(gpu.processes.size(), listed);

  scenario["gpus"][0]["errors"] = {
      {"nvmlDeviceGetComputeRunningProcesses_v3", "FUNCTION_NOT_FOUND"},
      {"nvmlDeviceGetComputeRunningProcesses_v2", "ARGUMENT_VERSION_MISMATCH"}};
  gpu = Snapshot(scenario).gpus.at(0);
  EXPECT_TRUE(gpu.processes_known) << "and the unversioned one where _v2 is refused too";
  EXPECT_EQ(gpu.processes.size(), listed);

  scenario["gpus"][0]["errors"] = {{"nvmlDeviceGetComputeRunningProcesses_v3", "NO_PERMISSION"}};
  EXPECT_FALSE(Snapshot(scenario).gpus.at(0).processes_known)
      << "a refusal that every version would give is not retried as a success";
}

TEST_F(SimNvmlTest, MigProcessesWithoutPermissionAreUnknown) {
  json scenario = Fixture();
  scenario["gpus"][3]["errors"] = {{"nvmlDeviceGetComputeRunningProcesses", "NO_PERMISSION"}};
  const Gpu gpu = Snapshot(scenario).gpus.at(3);
  EXPECT_TRUE(gpu.healthy());
  EXPECT_EQ(gpu.mig_devices.size(), 2u);
  EXPECT_FALSE(gpu.processes_known);
}

TEST_F(SimNvmlTest, SixtyFourGpuServer) {
  json scenario = {{"version", 1}, {"gpus", json::array()}};
  for (int i = 0; i < 64; ++i) {
    char uuid[64], bus[32];
    std::snprintf(uuid, sizeof uuid, "GPU-%08x-0000-4000-8000-000000000000", i);
    std::snprintf(bus, sizeof bus, "00000000:%02X:00.0", i + 1);
    scenario["gpus"].push_back({{"uuid", uuid},
                                {"name", "NVIDIA H100 80GB HBM3"},
                                {"pci_bus_id", bus},
                                {"memory", {{"total", "80G"}}},
                                {"host_bridge", i / 8},
                                {"processes", {{{"pid", 10000 + i}, {"used_memory", "1G"}}}}});
  }
  const Inventory inventory = Snapshot(scenario);
  ASSERT_EQ(inventory.gpus.size(), 64u);
  for (size_t i = 0; i < 64; ++i) {
    EXPECT_TRUE(inventory.gpus[i].healthy());
    EXPECT_EQ(inventory.gpus[i].index, i);
    EXPECT_EQ(Pids(inventory.gpus[i].processes),
              std::vector<uint32_t>{static_cast<uint32_t>(10000 + i)});
  }
  EXPECT_EQ(inventory.gpus[63].pci_bus_id, "00000000:40:00.0");
  ASSERT_EQ(inventory.topology.size(), 64u);
  EXPECT_EQ(inventory.topology[0][7], TopologyLevel::kHostBridge);
}

struct InitFault {
  const char* code;
  const char* message;
};

class SimNvmlInitTest : public SimNvmlTest, public testing::WithParamInterface<InitFault> {};

TEST_P(SimNvmlInitTest, InitFailureSaysWhatToDo) {
  json scenario = Fixture();
  scenario["init_error"] = GetParam().code;
  auto source = Open(scenario);
  ASSERT_FALSE(source.ok());
  EXPECT_EQ(source.error().code, ExitCode::kNvmlUnavailable);
  EXPECT_THAT(source.error().message, HasSubstr(GetParam().message));
  EXPECT_EQ(source.error().message.find('\n'), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(
    Codes, SimNvmlInitTest,
    testing::Values(InitFault{"DRIVER_NOT_LOADED", "NVIDIA driver not loaded (NVML: "},
                    InitFault{"DRIVER_NOT_LOADED", "is this a GPU machine? Try nvidia-smi."},
                    InitFault{"LIB_RM_VERSION_MISMATCH",
                              "reboot or reload the nvidia kernel module"},
                    InitFault{"NO_PERMISSION", "/dev/nvidia*"},
                    InitFault{"UNKNOWN", "cannot initialise NVML"}));

TEST_F(SimNvmlTest, DriverNotLoadedIsTheDocumentedMessage) {
  json scenario = Fixture();
  scenario["init_error"] = "DRIVER_NOT_LOADED";
  auto source = Open(scenario);
  ASSERT_FALSE(source.ok());
  EXPECT_THAT(
      source.error().message,
      testing::MatchesRegex(
          "NVIDIA driver not loaded \\(NVML: .+\\); is this a GPU machine\\? Try nvidia-smi\\."));
}

TEST_F(SimNvmlTest, UnknownCodesArePrintedAsNumbers) {
  UseScenario(Fixture());
  auto library = NvmlLibrary::Open({LibraryPath(kAll)});
  ASSERT_TRUE(library.ok()) << library.error().message;
  EXPECT_EQ((*library)->Explain(77), "NVML error 77");
  EXPECT_EQ((*library)->Explain(-3), "NVML error -3");
  EXPECT_THAT((*library)->Explain(NVML_ERROR_GPU_IS_LOST), testing::StartsWith("NVML: "));
}

TEST_F(SimNvmlTest, SourceCanBeOpenedAgainAfterItIsClosed) {
  for (int round = 0; round < 2; ++round) {
    EXPECT_EQ(Snapshot(Fixture()).gpus.size(), 4u) << "round " << round;
  }
}

}  // namespace
}  // namespace gpupin
