#include "core/doctor.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

namespace gpupin {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

constexpr uint64_t kGiB = 1ULL << 30;

Gpu MakeGpu(uint32_t index, const std::string& name) {
  Gpu gpu;
  gpu.index = index;
  gpu.uuid = "GPU-" + std::to_string(index) + "aaaaaaa-0000-0000-0000-000000000000";
  gpu.name = name;
  gpu.memory_total_bytes = 80 * kGiB;
  gpu.memory_used_bytes = kGiB / 2;
  gpu.utilization_gpu_percent = 0;
  gpu.persistence_mode = true;
  return gpu;
}

// A healthy machine: two identical idle cards, nothing set, nothing wrong.
DoctorFacts HealthyFacts() {
  DoctorFacts facts;
  facts.inventory.driver_version = "535.104.05";
  facts.inventory.nvml_version = "12.535.104.05";
  facts.inventory.cuda_driver_version = 12020;
  facts.inventory.gpus = {MakeGpu(0, "NVIDIA A100-SXM4-80GB"), MakeGpu(1, "NVIDIA A100-SXM4-80GB")};
  for (const Gpu& gpu : facts.inventory.gpus) {
    facts.resolution.visible.push_back(
        {static_cast<int>(gpu.index), gpu.index, std::nullopt, gpu.uuid, ""});
  }
  facts.state_dir = "/run/gpupin";
  return facts;
}

// The one finding of `check`; fails the test when there is not exactly one.
Finding Only(const DoctorFacts& facts, const std::string& check) {
  std::vector<Finding> matching;
  for (const Finding& f : RunDoctorChecks(facts)) {
    if (f.check == check) matching.push_back(f);
  }
  EXPECT_EQ(matching.size(), 1u) << check;
  return matching.empty() ? Finding{} : matching[0];
}

void ExpectOk(const Finding& f) {
  EXPECT_EQ(f.verdict, Verdict::kOk) << f.check << ": " << f.evidence;
  EXPECT_THAT(f.fix, IsEmpty()) << f.check;
}

TEST(DoctorTest, HealthyMachinePassesEveryCheck) {
  auto findings = RunDoctorChecks(HealthyFacts());
  std::vector<std::string> checks;
  for (const Finding& f : findings) {
    checks.push_back(f.check);
    ExpectOk(f);
    EXPECT_FALSE(f.evidence.empty()) << f.check;
  }
  EXPECT_EQ(checks,
            (std::vector<std::string>{"nvml", "health", "persistence", "cuda_visible_devices",
                                      "device_order", "slurm", "container", "busy", "leftovers",
                                      "reserved", "leases", "state_dir"}));
  EXPECT_EQ(DoctorExitCode(HealthyFacts(), findings), ExitCode::kOk);
}

TEST(DoctorReservedTest, OkNamesTheCardsKeptForOnly) {
  DoctorFacts facts = HealthyFacts();
  facts.rules.reserved = {"1"};
  facts.rules.file = "/etc/gpupin/config.toml";
  Finding f = Only(facts, "reserved");
  ExpectOk(f);
  EXPECT_EQ(f.evidence,
            "reserved = [\"1\"] in /etc/gpupin/config.toml: GPU 1 is taken only by a request "
            "that names it with --only");
}

TEST(DoctorReservedTest, WarnsOfAnIdThatNamesNoCard) {
  DoctorFacts facts = HealthyFacts();
  facts.rules.reserved = {"0", "9", "GPU-"};
  facts.rules.file = "/etc/gpupin/config.toml";
  Finding f = Only(facts, "reserved");
  EXPECT_EQ(f.verdict, Verdict::kWarn);
  EXPECT_THAT(f.evidence, HasSubstr("reserved 9: no GPU has that index (NVML indices here run 0 "
                                    "to 1)"));
  EXPECT_THAT(f.evidence, HasSubstr("reserved GPU-: ambiguous, matches GPU 0, GPU 1"));
  EXPECT_THAT(f.evidence, Not(HasSubstr("reserved 0:")));
  EXPECT_THAT(f.fix, HasSubstr("/etc/gpupin/config.toml"));
  EXPECT_EQ(DoctorExitCode(facts, {f}), ExitCode::kOk);
}

TEST(DoctorReservedTest, ACardWithoutUuidMayBeTheOneAnIdNames) {
  DoctorFacts facts = HealthyFacts();
  facts.inventory.gpus[1].uuid.clear();
  facts.rules.reserved = {"GPU-1aaaaaaa"};
  Finding f = Only(facts, "reserved");
  EXPECT_EQ(f.verdict, Verdict::kWarn);
  EXPECT_THAT(f.fix, HasSubstr("GPU 1 gave no UUID"));
  EXPECT_THAT(f.fix, HasSubstr("an id that is its UUID is right"));
}

TEST(DoctorReservedTest, LeftOutWithoutNvml) {
  DoctorFacts facts = HealthyFacts();
  facts.nvml_error = "libnvidia-ml.so.1: cannot open shared object file";
  facts.rules.reserved = {"9"};
  for (const Finding& f : RunDoctorChecks(facts)) EXPECT_NE(f.check, "reserved");
}

TEST(DoctorTest, VerdictNames) {
  EXPECT_STREQ(VerdictName(Verdict::kOk), "ok");
  EXPECT_STREQ(VerdictName(Verdict::kWarn), "warn");
  EXPECT_STREQ(VerdictName(Verdict::kFail), "fail");
}

TEST(DoctorNvmlTest, OkNamesTheVersions) {
  DoctorFacts facts = HealthyFacts();
  facts.inventory.simulated = true;
  Finding f = Only(facts, "nvml");
  ExpectOk(f);
  EXPECT_EQ(f.evidence, "NVML 12.535.104.05, driver 535.104.05, CUDA 12.2, 2 GPUs (simulated)");
}

TEST(DoctorNvmlTest, FailsWhenNvmlIsMissingAndSkipsTheGpuChecks) {
  DoctorFacts facts = HealthyFacts();
  facts.nvml_error = "NVIDIA driver not loaded (NVML: Driver Not Loaded)";
  auto findings = RunDoctorChecks(facts);
  Finding f = Only(facts, "nvml");
  EXPECT_EQ(f.verdict, Verdict::kFail);
  EXPECT_EQ(f.evidence, *facts.nvml_error);
  EXPECT_THAT(f.fix, HasSubstr("GPUPIN_NVML_LIBRARY"));
  for (const Finding& other : findings) {
    EXPECT_NE(other.check, "busy");
    EXPECT_NE(other.check, "persistence");
    EXPECT_NE(other.check, "cuda_visible_devices");
  }
  // As every command says of a missing driver, whatever else failed.
  EXPECT_EQ(DoctorExitCode(facts, findings), ExitCode::kNvmlUnavailable);
}

TEST(DoctorNvmlTest, VersionMismatchErrorSaysToReload) {
  DoctorFacts facts = HealthyFacts();
  facts.nvml_error = "NVML: Driver/library version mismatch";
  EXPECT_THAT(Only(facts, "nvml").fix, HasSubstr("reboot"));
}

TEST(DoctorNvmlTest, NoPermissionSaysToCheckTheDeviceFiles) {
  DoctorFacts facts = HealthyFacts();
  facts.nvml_error =
      "no permission to use the NVIDIA driver (NVML: Insufficient Permissions); check the "
      "permissions of /dev/nvidia* and your groups.";
  const Finding f = Only(facts, "nvml");
  EXPECT_THAT(f.fix, HasSubstr("/dev/nvidia*"));
  EXPECT_THAT(f.fix, Not(HasSubstr("install or load")));
}

TEST(DoctorNvmlTest, WarnsWhenTheLibraryIsNotTheDriversOwn) {
  DoctorFacts facts = HealthyFacts();
  facts.inventory.nvml_version = "12.550.54.15";
  Finding f = Only(facts, "nvml");
  EXPECT_EQ(f.verdict, Verdict::kWarn);
  EXPECT_EQ(f.evidence, "libnvidia-ml 12.550.54.15 does not belong to driver 535.104.05");
}

TEST(DoctorNvmlTest, FailsWhenNoGpuIsSeen) {
  DoctorFacts facts = HealthyFacts();
  facts.inventory.gpus.clear();
  EXPECT_EQ(Only(facts, "nvml").verdict, Verdict::kFail);
}

TEST(DoctorHealthTest, WarnsAboutACardThatDoesNotAnswer) {
  DoctorFacts facts = HealthyFacts();
  facts.inventory.gpus[1].health_error = "GPU is lost";
  Finding f = Only(facts, "health");
  EXPECT_EQ(f.verdict, Verdict::kWarn);
  EXPECT_THAT(f.evidence, HasSubstr("GPU 1: GPU is lost"));
}

TEST(DoctorHealthTest, CountsTheGpusThatAnswer) {
  DoctorFacts facts = HealthyFacts();
  EXPECT_EQ(Only(facts, "health").evidence, "all 2 GPUs answer");
  EXPECT_EQ(Only(facts, "cuda_visible_devices").evidence, "unset: CUDA sees all 2 devices");
  facts.inventory.gpus.pop_back();
  facts.resolution.visible.pop_back();
  EXPECT_EQ(Only(facts, "health").evidence, "the one GPU answers");
  EXPECT_EQ(Only(facts, "cuda_visible_devices").evidence, "unset: CUDA sees the one device");
}

TEST(DoctorPersistenceTest, WarnsWhenOff) {
  DoctorFacts facts = HealthyFacts();
  facts.inventory.gpus[1].persistence_mode = false;
  Finding f = Only(facts, "persistence");
  EXPECT_EQ(f.verdict, Verdict::kWarn);
  EXPECT_EQ(f.evidence, "persistence mode is off on GPU 1 (of 2)");
  EXPECT_THAT(f.fix, HasSubstr("nvidia-smi -pm 1"));
}

TEST(DoctorPersistenceTest, OkWhenNotReported) {
  DoctorFacts facts = HealthyFacts();
  for (Gpu& gpu : facts.inventory.gpus) gpu.persistence_mode.reset();
  Finding f = Only(facts, "persistence");
  ExpectOk(f);
  EXPECT_THAT(f.evidence, HasSubstr("not reported"));
}

// The resolution as the real resolver gives it for the facts' GPUs and environment.
void Resolve(DoctorFacts& facts) {
  facts.resolution = ResolveVisibleDevices(facts.inventory.gpus, facts.env);
}

TEST(DoctorCudaVisibleDevicesTest, UnsetOnAMigCardSaysOnceWhatCudaLeavesOut) {
  DoctorFacts facts = HealthyFacts();
  facts.inventory.gpus[0].mig_enabled = true;
  for (uint32_t i = 0; i < 3; ++i) {
    MigDevice mig;
    mig.index = i;
    mig.uuid = "MIG-" + std::to_string(i);
    facts.inventory.gpus[0].mig_devices.push_back(mig);
  }
  Resolve(facts);
  Finding f = Only(facts, "cuda_visible_devices");
  ExpectOk(f);
  EXPECT_EQ(f.evidence,
            "unset: CUDA sees one device, MIG instance 0 of GPU 0 (MIG-0), and leaves out the 3 "
            "others: it enumerates one MIG instance per process and no whole GPU beside it");
}

TEST(DoctorCudaVisibleDevicesTest, OkShowsTheMapping) {
  DoctorFacts facts = HealthyFacts();
  facts.env.cuda_visible_devices = "1";
  Resolve(facts);
  Finding f = Only(facts, "cuda_visible_devices");
  ExpectOk(f);
  EXPECT_EQ(f.evidence, "CUDA_VISIBLE_DEVICES=\"1\": cuda:0 = GPU 1");
}

TEST(DoctorCudaVisibleDevicesTest, WarnsWhenTruncated) {
  DoctorFacts facts = HealthyFacts();
  facts.env.cuda_visible_devices = "0,7,1";
  Resolve(facts);
  Finding f = Only(facts, "cuda_visible_devices");
  EXPECT_EQ(f.verdict, Verdict::kWarn);
  EXPECT_THAT(f.evidence, HasSubstr("CUDA_VISIBLE_DEVICES=\"0,7,1\" is cut short: CUDA uses "
                                    "cuda:0 = GPU 0; "));
  EXPECT_THAT(f.evidence, HasSubstr("7"));
  EXPECT_THAT(f.evidence, HasSubstr("; dropped with it: \"1\""));
  EXPECT_EQ(f.evidence.find('\n'), std::string::npos);
}

TEST(DoctorCudaVisibleDevicesTest, WarnsWhenAnEntryIsReadOnlyInPart) {
  DoctorFacts facts = HealthyFacts();
  facts.env.cuda_visible_devices = "0-1";
  Resolve(facts);
  Finding f = Only(facts, "cuda_visible_devices");
  EXPECT_EQ(f.verdict, Verdict::kWarn);
  EXPECT_EQ(f.evidence,
            "CUDA_VISIBLE_DEVICES=\"0-1\": cuda:0 = GPU 0; entry `0-1` is read as index 0: "
            "CUDA_VISIBLE_DEVICES has no ranges, CUDA reads the leading digits");
  EXPECT_THAT(f.fix, HasSubstr("a plain index of its own"));
}

TEST(DoctorCudaVisibleDevicesTest, FailsWhenItNamesNoGpu) {
  DoctorFacts facts = HealthyFacts();
  for (const char* value : {"GPU-ffff", "0,0", "-1", ""}) {
    facts.env.cuda_visible_devices = value;
    Resolve(facts);
    Finding f = Only(facts, "cuda_visible_devices");
    EXPECT_EQ(f.verdict, Verdict::kFail) << value;
    EXPECT_THAT(f.fix, HasSubstr("unset it")) << value;
  }
  EXPECT_THAT(Only(facts, "cuda_visible_devices").evidence, HasSubstr("set but empty"));
}

TEST(DoctorCudaVisibleDevicesTest, DroppedEntriesWithoutDetailAreStillNamed) {
  DoctorFacts facts = HealthyFacts();
  facts.env.cuda_visible_devices = "x";
  facts.resolution.visible.clear();
  DroppedEntry entry;
  entry.token = "x";
  facts.resolution.dropped = {entry};
  EXPECT_THAT(Only(facts, "cuda_visible_devices").evidence, HasSubstr("\"x\" is not usable"));
}

TEST(DoctorDeviceOrderTest, WarnsOnMixedModelsWithoutPciBusId) {
  DoctorFacts facts = HealthyFacts();
  facts.inventory.gpus[1].name = "Tesla T4";
  Finding f = Only(facts, "device_order");
  EXPECT_EQ(f.verdict, Verdict::kWarn);
  EXPECT_THAT(f.evidence, HasSubstr("mixed GPU models (NVIDIA A100-SXM4-80GB, Tesla T4)"));
  EXPECT_THAT(f.fix, HasSubstr("CUDA_DEVICE_ORDER=PCI_BUS_ID"));

  facts.env.cuda_device_order = "FASTEST_FIRST";
  EXPECT_EQ(Only(facts, "device_order").verdict, Verdict::kWarn);
  facts.env.cuda_device_order = "PCI_BUS_ID";
  ExpectOk(Only(facts, "device_order"));
}

TEST(DoctorDeviceOrderTest, WarnsOnAValueCudaDoesNotKnow) {
  DoctorFacts facts = HealthyFacts();
  facts.env.cuda_device_order = "pci_bus_id";
  Finding f = Only(facts, "device_order");
  EXPECT_EQ(f.verdict, Verdict::kWarn);
  EXPECT_THAT(f.evidence, HasSubstr("\"pci_bus_id\" is neither"));
}

TEST(DoctorSlurmTest, WarnsWhenCudaVisibleDevicesCopiesGlobalIds) {
  DoctorFacts facts = HealthyFacts();
  facts.slurm_job_id = "4711";
  facts.env.slurm_job_gpus = "2,3";
  facts.env.cuda_visible_devices = "2, 3";
  Finding f = Only(facts, "slurm");
  EXPECT_EQ(f.verdict, Verdict::kWarn);
  EXPECT_THAT(f.evidence, HasSubstr("copy of SLURM_JOB_GPUS"));
  EXPECT_THAT(f.fix, HasSubstr("unset yours"));
}

TEST(DoctorSlurmTest, OkWhenSlurmSetLocalIdsOrGlobalIdsAreLocal) {
  DoctorFacts facts = HealthyFacts();
  ExpectOk(Only(facts, "slurm"));
  EXPECT_EQ(Only(facts, "slurm").evidence, "not in a Slurm job");

  facts.slurm_job_id = "4711";
  facts.env.slurm_job_gpus = "2,3";
  facts.env.cuda_visible_devices = "0,1";
  ExpectOk(Only(facts, "slurm"));

  facts.env.slurm_job_gpus = "0,1";  // a copy, but global and local agree
  ExpectOk(Only(facts, "slurm"));

  facts.env.cuda_visible_devices.reset();
  ExpectOk(Only(facts, "slurm"));
}

// Slurm job 4711 on a node of four alike cards that no device cgroup hides.
DoctorFacts JobSeeingFourCards() {
  DoctorFacts facts = HealthyFacts();
  facts.inventory.gpus = {MakeGpu(0, "NVIDIA L40S"), MakeGpu(1, "NVIDIA L40S"),
                          MakeGpu(2, "NVIDIA L40S"), MakeGpu(3, "NVIDIA L40S")};
  facts.slurm_job_id = "4711";
  return facts;
}

// The slurm check, on the resolution doctor makes of facts.env.
Finding SlurmCheck(DoctorFacts& facts) {
  facts.resolution = ResolveVisibleDevices(facts.inventory.gpus, facts.env);
  return Only(facts, "slurm");
}

TEST(DoctorSlurmTest, OkWhenGlobalIdsAreRightBecauseNoCgroupHidesTheNode) {
  DoctorFacts facts = JobSeeingFourCards();
  facts.env.slurm_step_gpus = "2,3";
  facts.env.cuda_visible_devices = "2,3";
  Finding f = SlurmCheck(facts);
  ExpectOk(f);
  EXPECT_THAT(f.evidence, HasSubstr("all 4 GPUs of the node are visible"));

  facts.env.slurm_step_gpus = facts.env.cuda_visible_devices = "2,4";  // GPU 4 is not here
  EXPECT_EQ(Only(facts, "slurm").verdict, Verdict::kWarn);
  facts.env.slurm_step_gpus = facts.env.cuda_visible_devices = "2,x";
  EXPECT_EQ(Only(facts, "slurm").verdict, Verdict::kWarn);
}

TEST(DoctorSlurmTest, FailsWhereCudaReadsGlobalIdsAsOtherCards) {
  DoctorFacts facts = HealthyFacts();
  facts.inventory.gpus = {MakeGpu(0, "NVIDIA GeForce RTX 2080 Ti"), MakeGpu(1, "NVIDIA RTX A6000"),
                          MakeGpu(2, "NVIDIA GeForce RTX 3090"), MakeGpu(3, "NVIDIA RTX A6000")};
  facts.slurm_job_id = "4711";
  facts.env.slurm_step_gpus = facts.env.cuda_visible_devices = "0,2";
  Finding f = Only(facts, "slurm");
  EXPECT_EQ(f.verdict, Verdict::kFail);
  EXPECT_THAT(f.evidence, HasSubstr("they name other cards than Slurm gave this job"));
  EXPECT_THAT(f.fix, HasSubstr("export CUDA_DEVICE_ORDER=PCI_BUS_ID"));

  facts.env.cuda_device_order = "PCI_BUS_ID";
  EXPECT_THAT(SlurmCheck(facts).evidence, HasSubstr("global ids are right here"));
}

TEST(DoctorSlurmTest, FailsWhereCudaVisibleDevicesNamesCardsTheJobWasNotGiven) {
  // Given cards 1 and 3; a ~/.bashrc set CUDA_VISIBLE_DEVICES=0,1.
  DoctorFacts facts = JobSeeingFourCards();
  facts.env.slurm_job_gpus = "1,3";
  facts.env.cuda_visible_devices = "0,1";
  Finding f = SlurmCheck(facts);
  EXPECT_EQ(f.verdict, Verdict::kFail);
  EXPECT_THAT(f.evidence, HasSubstr("names GPU 0, which Slurm did not give this job "
                                    "(SLURM_JOB_GPUS=1,3)"));
  // Unset: CUDA sees every card of the node.
  facts.env.cuda_visible_devices.reset();
  EXPECT_EQ(SlurmCheck(facts).verdict, Verdict::kWarn);
}

TEST(DoctorSlurmTest, WarnsInAJobGivenNoGpu) {
  DoctorFacts facts = HealthyFacts();
  facts.slurm_job_id = "4711";
  const Finding f = Only(facts, "slurm");
  EXPECT_EQ(f.verdict, Verdict::kWarn);
  EXPECT_EQ(f.evidence,
            "Slurm job 4711 was given no GPU (SLURM_JOB_GPUS unset), yet it sees 2 GPU(s): a card "
            "chosen here may be one Slurm gives another job");
  EXPECT_THAT(f.fix, HasSubstr("--gres=gpu:N"));
}

TEST(DoctorSlurmTest, StepGpusWinOverJobGpus) {
  DoctorFacts facts = HealthyFacts();
  facts.env.slurm_job_gpus = "2,3";
  facts.env.slurm_step_gpus = "3";
  facts.env.cuda_visible_devices = "3";
  Finding f = Only(facts, "slurm");
  EXPECT_EQ(f.verdict, Verdict::kWarn);
  EXPECT_THAT(f.evidence, HasSubstr("SLURM_STEP_GPUS"));
}

TEST(DoctorContainerTest, WarnsWithoutTheHostPidNamespace) {
  DoctorFacts facts = HealthyFacts();
  facts.container.inside = true;
  facts.container.host_pids_visible = false;
  Finding f = Only(facts, "container");
  EXPECT_EQ(f.verdict, Verdict::kWarn);
  EXPECT_THAT(f.fix, HasSubstr("--pid=host"));

  facts.container.host_pids_visible = true;
  ExpectOk(Only(facts, "container"));
  facts.container.host_pids_visible.reset();
  ExpectOk(Only(facts, "container"));
  EXPECT_THAT(Only(facts, "container").evidence, HasSubstr("no GPU process to tell"));
}

TEST(DoctorContainerTest, MadeUpPidsOfTheSimulatedServerProveNothing) {
  DoctorFacts facts = HealthyFacts();
  facts.container.inside = true;
  facts.container.host_pids_visible = false;
  facts.inventory.simulated = true;
  Finding f = Only(facts, "container");
  ExpectOk(f);
  EXPECT_THAT(f.evidence, HasSubstr("made up"));
}

TEST(DoctorBusyTest, SomeBusyIsOkWithNumbers) {
  DoctorFacts facts = HealthyFacts();
  facts.inventory.gpus[0].memory_used_bytes = 70 * kGiB;
  facts.inventory.gpus[0].utilization_gpu_percent = 95;
  Finding f = Only(facts, "busy");
  ExpectOk(f);
  EXPECT_EQ(f.evidence,
            "1 of 2 GPUs busy (more than 1G used or 10 % utilization): GPU 0 (70G used, 95 %)");
}

TEST(DoctorBusyTest, CardInMigModeSaysWhyItHasNoUtilization) {
  DoctorFacts facts = HealthyFacts();
  facts.inventory.gpus[0].memory_used_bytes = 12 * kGiB;
  facts.inventory.gpus[0].utilization_gpu_percent.reset();
  facts.inventory.gpus[0].mig_enabled = true;
  EXPECT_THAT(Only(facts, "busy").evidence,
              HasSubstr("GPU 0 (12G used, no utilization in MIG mode)"));
  facts.inventory.gpus[0].mig_enabled = false;
  EXPECT_THAT(Only(facts, "busy").evidence, HasSubstr("GPU 0 (12G used, utilization unknown)"));
}

TEST(DoctorBusyTest, AllBusyWarns) {
  DoctorFacts facts = HealthyFacts();
  facts.inventory.gpus[0].utilization_gpu_percent = 50;
  facts.inventory.gpus[1].memory_used_bytes = 2 * kGiB;
  Finding f = Only(facts, "busy");
  EXPECT_EQ(f.verdict, Verdict::kWarn);
  EXPECT_THAT(f.evidence, HasSubstr("2 of 2 GPUs busy"));
  EXPECT_THAT(f.fix, HasSubstr("--wait"));
}

TEST(DoctorBusyTest, PercentThresholdUsesEachCardsTotal) {
  DoctorFacts facts = HealthyFacts();
  facts.busy = {{std::nullopt, 80.0}, std::nullopt};
  facts.inventory.gpus[0].memory_used_bytes = 70 * kGiB;  // 87.5 % of 80G
  facts.inventory.gpus[0].utilization_gpu_percent = 100;
  facts.inventory.gpus[1].memory_used_bytes = 60 * kGiB;  // 75 %
  facts.inventory.gpus[1].utilization_gpu_percent = 100;
  Finding f = Only(facts, "busy");
  ExpectOk(f);
  EXPECT_THAT(f.evidence, HasSubstr("1 of 2 GPUs busy (more than 80 % of memory used)"));
}

TEST(DoctorLeftoversTest, WarnsAndSaysWhomToAsk) {
  DoctorFacts facts = HealthyFacts();
  facts.leftovers = {
      {{1}, 4121, "alice", "python train.py", 3 * kGiB, "its gpupin lease has ended", true, false},
      {{0}, 5000, "bob", "python eval.py", std::nullopt, "orphaned", false, false},
  };
  Finding f = Only(facts, "leftovers");
  EXPECT_EQ(f.verdict, Verdict::kWarn);
  EXPECT_EQ(f.evidence,
            "2 leftover process(es) hold 3G: pid 4121 (alice, python train.py) holds 3G on GPU "
            "1, its gpupin lease has ended; pid 5000 (bob, python eval.py) holds memory on GPU 0, "
            "orphaned");
  EXPECT_EQ(f.fix,
            "end yours: gpupin ps --leftovers --kill, or by hand: kill 4121; ask bob to end theirs "
            "(gpupin ps --leftovers lists them)");
}

TEST(DoctorLeftoversTest, OneProcessOnFourGpusIsCountedOnceWithAFixThatEndsItStopped) {
  DoctorFacts facts = HealthyFacts();
  facts.leftovers = MergeLeftovers({
      {{0}, 30484, "alice", "python train.py", 2 * kGiB, "stopped", true, true},
      {{1}, 30484, "alice", "python train.py", 2 * kGiB, "stopped", true, true},
      {{2}, 30484, "alice", "python train.py", 2 * kGiB, "stopped", true, true},
      {{3}, 30484, "alice", "python train.py", 2 * kGiB, "stopped", true, true},
  });
  Finding f = Only(facts, "leftovers");
  EXPECT_EQ(f.evidence,
            "1 leftover process(es) hold 8G: pid 30484 (alice, python train.py) holds 8G on GPUs "
            "0,1,2,3, stopped");
  EXPECT_EQ(f.fix,
            "end yours: gpupin ps --leftovers --kill, or by hand: kill 30484 && kill -CONT 30484 "
            "(stopped) (gpupin ps --leftovers lists them)");
}

TEST(DoctorLeftoversTest, AGpuWhoseProcessesNvmlWillNotListIsUnknownNotClear) {
  DoctorFacts facts = HealthyFacts();
  facts.inventory.gpus[1].processes_known = false;
  Finding f = Only(facts, "leftovers");
  EXPECT_EQ(f.verdict, Verdict::kWarn);
  EXPECT_EQ(f.evidence,
            "NVML does not list the processes of GPU 1: leftovers there are unknown; none on the "
            "others");
  EXPECT_THAT(f.fix, HasSubstr("sudo gpupin ps --leftovers"));

  for (Gpu& gpu : facts.inventory.gpus) gpu.processes_known = false;
  EXPECT_EQ(Only(facts, "leftovers").evidence,
            "NVML does not list the processes of GPUs 0,1: leftovers there are unknown");

  facts.inventory.gpus[0].processes_known = true;
  facts.leftovers = {{{0}, 5000, "bob", "python eval.py", kGiB, "orphaned", false, false}};
  EXPECT_THAT(Only(facts, "leftovers").evidence,
              testing::EndsWith("orphaned; NVML does not list the processes of GPU 1: leftovers "
                                "there are unknown"));
}

TEST(DoctorLeftoversTest, RootIsNotToldToUseSudoForListsNvmlRefusesEvenToRoot) {
  DoctorFacts facts = HealthyFacts();
  facts.inventory.gpus[1].processes_known = false;
  facts.as_root = true;
  Finding f = Only(facts, "leftovers");
  EXPECT_EQ(f.verdict, Verdict::kWarn);
  EXPECT_THAT(f.fix, testing::Not(HasSubstr("sudo")));
  EXPECT_THAT(f.fix, HasSubstr("health"));
}

TEST(DoctorLeasesTest, LeasesThatCouldNotBeReadAreUnknownNotNone) {
  DoctorFacts facts = HealthyFacts();
  facts.leases_unread = true;
  Finding f = Only(facts, "leases");
  EXPECT_EQ(f.verdict, Verdict::kWarn);
  EXPECT_THAT(f.evidence, HasSubstr("could not be read"));
}

TEST(DoctorLeftoversTest, LongListsStayOneLine) {
  DoctorFacts facts = HealthyFacts();
  for (uint32_t pid = 100; pid < 106; ++pid) {
    facts.leftovers.push_back({{0}, pid, "carol", "python x.py", kGiB, "orphaned", false, false});
  }
  Finding f = Only(facts, "leftovers");
  EXPECT_THAT(f.evidence, HasSubstr("; and 3 more"));
  EXPECT_EQ(f.evidence.find('\n'), std::string::npos);
  EXPECT_EQ(f.fix, "ask carol to end theirs (gpupin ps --leftovers lists them)");
}

TEST(DoctorLeasesTest, ExpiredLeasesAreOnlyInformation) {
  DoctorFacts facts = HealthyFacts();
  facts.expired_leases = 3;
  Finding f = Only(facts, "leases");
  ExpectOk(f);
  EXPECT_THAT(f.evidence, HasSubstr("3 expired lease(s)"));
}

DoctorProbe ProbeOf(const DoctorFacts& facts, ProbeResult result) {
  return {"libcuda.so.1", result, CompareProbe(facts.resolution, result)};
}

TEST(DoctorProbeTest, OnlyWhenAskedFor) {
  std::vector<Finding> findings = RunDoctorChecks(HealthyFacts());
  EXPECT_TRUE(std::none_of(findings.begin(), findings.end(),
                           [](const Finding& f) { return f.check == "cuda_probe"; }));
}

TEST(DoctorProbeTest, OkWhenTheDriverAgrees) {
  DoctorFacts facts = HealthyFacts();
  ProbeResult result;
  result.status = ProbeStatus::kOk;
  for (const Gpu& gpu : facts.inventory.gpus)
    result.devices.push_back({static_cast<int>(gpu.index), gpu.uuid, gpu.pci_bus_id, gpu.name, {}});
  facts.probe = ProbeOf(facts, result);
  Finding f = Only(facts, "cuda_probe");
  EXPECT_EQ(f.verdict, Verdict::kOk);
  EXPECT_EQ(f.evidence, "the driver (libcuda.so.1) sees 2 device(s), as gpupin's model does");
}

TEST(DoctorProbeTest, WarnsWhenTheDriverNumbersDifferently) {
  DoctorFacts facts = HealthyFacts();
  ProbeResult result;
  result.status = ProbeStatus::kOk;
  result.devices.push_back({0, facts.inventory.gpus[1].uuid, "", "", {}});
  result.devices.push_back({1, facts.inventory.gpus[0].uuid, "", "", {}});
  facts.probe = ProbeOf(facts, result);
  Finding f = Only(facts, "cuda_probe");
  EXPECT_EQ(f.verdict, Verdict::kWarn);
  EXPECT_THAT(f.evidence, HasSubstr("cuda:0: gpupin expects GPU 0"));
  EXPECT_THAT(f.fix, HasSubstr("CUDA_DEVICE_ORDER=PCI_BUS_ID"));
}

TEST(DoctorProbeTest, FailsWhenTheDriverGivesNoAnswer) {
  DoctorFacts facts = HealthyFacts();
  ProbeResult result;
  result.status = ProbeStatus::kUnavailable;
  result.detail = "cannot load libcuda.so.1";
  facts.probe = ProbeOf(facts, result);
  Finding f = Only(facts, "cuda_probe");
  EXPECT_EQ(f.verdict, Verdict::kFail);
  EXPECT_THAT(f.evidence, HasSubstr("libcuda.so.1 gave no answer: cannot load libcuda.so.1"));
  EXPECT_EQ(DoctorExitCode(facts, RunDoctorChecks(facts)), ExitCode::kError);
}

TEST(DoctorStateDirTest, AMissingDirectoryFailsOnlyWhenNamed) {
  DoctorFacts facts = HealthyFacts();
  facts.state_dir = "/tmp/gpupin";
  facts.state_dir_missing = true;
  Finding f = Only(facts, "state_dir");
  ExpectOk(f);
  EXPECT_EQ(f.evidence,
            "/tmp/gpupin does not exist yet: the first gpupin to take a GPU creates it");
  facts.state_dir = "/tmp/gpupni";
  facts.state_dir_named = true;
  f = Only(facts, "state_dir");
  EXPECT_EQ(f.verdict, Verdict::kFail);
  EXPECT_THAT(f.evidence, HasSubstr("/tmp/gpupni does not exist: named by --state-dir"));
  EXPECT_THAT(f.fix, HasSubstr("check the name"));
}

TEST(DoctorStateDirTest, UnsafeStateDirFails) {
  DoctorFacts facts = HealthyFacts();
  facts.state_dir = "/tmp/gpupin";
  facts.state_dir_problem = "is a symlink to /home/mallory/x";
  Finding f = Only(facts, "state_dir");
  EXPECT_EQ(f.verdict, Verdict::kFail);
  EXPECT_EQ(f.evidence, "/tmp/gpupin: is a symlink to /home/mallory/x");
  EXPECT_THAT(f.fix, HasSubstr("--state-dir"));
  EXPECT_EQ(DoctorExitCode(facts, RunDoctorChecks(facts)), ExitCode::kError);
}

TEST(DoctorStateDirTest, ADirectoryOwnedByAUserFails) {
  DoctorFacts facts = HealthyFacts();
  facts.state_dir = "/tmp/gpupin";
  facts.state_dir_user_owner = "alice (uid 1000)";
  Finding f = Only(facts, "state_dir");
  EXPECT_EQ(f.verdict, Verdict::kFail);
  EXPECT_EQ(f.evidence,
            "/tmp/gpupin belongs to alice (uid 1000), who can remove anyone's lease in it (the "
            "sticky bit does not stop a directory's owner)");
  EXPECT_THAT(f.fix, HasSubstr("/run/gpupin"));
  EXPECT_THAT(f.fix, HasSubstr("systemd-tmpfiles --create"));
  EXPECT_EQ(DoctorExitCode(facts, RunDoctorChecks(facts)), ExitCode::kError);
}

TEST(DoctorPythonTest, OneEntryPerFindingWithItsVerdict) {
  DoctorFacts facts = HealthyFacts();
  facts.python_files_checked = 1;
  facts.python_findings = {
      {"train.py", 3, PythonFindingKind::kVisibilitySetAfterImport, "set after torch",
       "set before"},
      {"train.py", 9, PythonFindingKind::kDataParallelWithoutDeviceIds, "every GPU", "device_ids"},
  };
  std::vector<Finding> python;
  for (const Finding& f : RunDoctorChecks(facts)) {
    if (f.check == "python") python.push_back(f);
  }
  ASSERT_EQ(python.size(), 2u);
  EXPECT_EQ(python[0].verdict, Verdict::kFail);
  EXPECT_EQ(python[0].evidence, "train.py:3: set after torch");
  EXPECT_EQ(python[0].fix, "set before");
  EXPECT_EQ(python[1].verdict, Verdict::kWarn);
  EXPECT_EQ(python[1].evidence, "train.py:9: every GPU");

  facts.python_findings.pop_back();
  facts.python_findings[0].kind = PythonFindingKind::kDataParallelWithoutDeviceIds;
  EXPECT_EQ(DoctorExitCode(facts, RunDoctorChecks(facts)), ExitCode::kOk);
}

TEST(DoctorPythonTest, CleanFilesAreOk) {
  DoctorFacts facts = HealthyFacts();
  facts.python_files_checked = 2;
  Finding f = Only(facts, "python");
  ExpectOk(f);
  EXPECT_EQ(f.evidence, "2 Python file(s) checked: no problems found");
}

TEST(LeftoverReasonTest, NamesWhyAProcessIsLeftOver) {
  EXPECT_EQ(LeftoverReason(true, 'S', 1, std::nullopt), "its gpupin lease has ended");
  EXPECT_EQ(LeftoverReason(false, 'T', 4000, 'S'), "stopped");
  EXPECT_EQ(LeftoverReason(false, 'S', 1, std::nullopt), "orphaned (its parent is init)");
  EXPECT_EQ(LeftoverReason(false, 'R', 4000, 'Z'), "its parent is a zombie");
  EXPECT_EQ(LeftoverReason(false, 'S', 4000, 'S'), std::nullopt);
}

TEST(HostPidsVisibleTest, AllNvmlPidsMustExist) {
  Inventory inv = HealthyFacts().inventory;
  EXPECT_EQ(HostPidsVisible(inv, [](uint32_t) { return true; }), std::nullopt);
  GpuProcess small;
  small.pid = 7;
  GpuProcess large;
  large.pid = 123456;
  inv.gpus[0].processes = {small};
  inv.gpus[1].mig_devices.push_back({});
  inv.gpus[1].mig_devices[0].processes = {large};
  EXPECT_EQ(HostPidsVisible(inv, [](uint32_t) { return true; }), true);
  // pid 7 exists by chance in the container; 123456 does not.
  EXPECT_EQ(HostPidsVisible(inv, [](uint32_t pid) { return pid < 100; }), false);
}

TEST(DoctorTest, AStateLockHeldTooLongFailsNamingItsHolderAndLeavesTheDirectory) {
  DoctorFacts facts = HealthyFacts();
  facts.state_dir = "/run/gpupin";
  facts.state_lock_holder = "pid 7 (nobody: flock)";
  facts.state_lock_held_ms = 3000;
  Finding f = Only(facts, "state_dir");
  EXPECT_EQ(f.verdict, Verdict::kFail);
  EXPECT_THAT(f.evidence, HasSubstr("/run/gpupin/lock has been held by pid 7 (nobody: flock) for "
                                    "3000 ms"));
  EXPECT_THAT(f.fix, HasSubstr("kill PID"));
  EXPECT_THAT(f.fix, Not(HasSubstr("remove")));
}

TEST(DoctorTest, AnUnsafeStateDirectoryIsToBeRepaired) {
  DoctorFacts facts = HealthyFacts();
  facts.state_dir_problem = "/run/gpupin/lock belongs to nobody";
  Finding f = Only(facts, "state_dir");
  EXPECT_EQ(f.verdict, Verdict::kFail);
  EXPECT_THAT(f.fix, HasSubstr("remove or repair it"));
}

}  // namespace
}  // namespace gpupin
