#include "core/policy.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gpupin {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr uint64_t kMiB = uint64_t{1} << 20;
constexpr uint64_t kGiB = uint64_t{1} << 30;
constexpr int64_t k1405Utc = 1704204300000;  // 2024-01-02 14:05:00 UTC
constexpr uint32_t kCallerUid = 1000;

// GPU-11111111-…, GPU-22222222-…: distinct first digits for indices 0..14.
std::string UuidOf(uint32_t index) {
  return fmt::format("GPU-{:08x}-0000-4000-8000-000000000000", 0x11111111u * (index + 1));
}

Gpu MakeGpu(uint32_t index, uint64_t used_bytes = 0, uint32_t util_percent = 0,
            uint64_t total_bytes = 80 * kGiB) {
  Gpu gpu;
  gpu.index = index;
  gpu.uuid = UuidOf(index);
  gpu.pci_bus_id = fmt::format("00000000:{:02X}:00.0", 0x10 + index);
  gpu.name = "NVIDIA A100-SXM4-80GB";
  gpu.memory_total_bytes = total_bytes;
  gpu.memory_used_bytes = used_bytes;
  gpu.memory_free_bytes = total_bytes - used_bytes;
  gpu.utilization_gpu_percent = util_percent;
  gpu.compute_mode = ComputeMode::kDefault;
  gpu.mig_enabled = false;
  return gpu;
}

Lease MakeLease(std::string id, std::vector<uint32_t> gpu_indices, int pid, std::string user,
                std::optional<uint64_t> shared_bytes = std::nullopt) {
  Lease lease;
  lease.id = std::move(id);
  for (uint32_t index : gpu_indices) lease.gpu_uuids.push_back(UuidOf(index));
  lease.holder = {pid, 1234};
  lease.uid = user == "dave" ? kCallerUid : 2000;
  lease.user = std::move(user);
  lease.command = "python train.py";
  lease.created_unix_ms = k1405Utc;
  lease.shared_bytes = shared_bytes;
  return lease;
}

// A reservation of GPU 0 by `user`'s pid 99 until 14:07; returns its holder.
ProcessIdentity AddReservation(PolicyInput& in, std::string user) {
  Lease lease = MakeLease("r-1", {0}, 99, std::move(user));
  lease.reservation_deadline_unix_ms = k1405Utc + 2 * 60000;
  in.live_leases.push_back(lease);
  return lease.holder;
}

void AddProcess(Gpu& gpu, uint32_t pid, uint64_t bytes) {
  GpuProcess process;
  process.pid = pid;
  process.used_memory_bytes = bytes;
  process.compute = true;
  gpu.processes.push_back(process);
  if (gpu.memory_used_bytes) {
    *gpu.memory_used_bytes += bytes;
    *gpu.memory_free_bytes -= bytes;
  }
}

ProcessOwner Owner(uint32_t uid, std::string user, std::string command,
                   std::optional<std::string> lease_id = std::nullopt) {
  return {uid, std::move(user), std::move(command), std::move(lease_id)};
}

PolicyInput MakeInput(std::vector<Gpu> gpus) {
  PolicyInput input;
  input.gpus = std::move(gpus);
  input.caller = {kCallerUid, "dave"};
  input.format_clock = FormatUtcClock;
  input.now_unix_ms = k1405Utc;
  return input;
}

PolicyInput IdleBox(uint32_t count) {
  std::vector<Gpu> gpus;
  for (uint32_t index = 0; index < count; ++index) gpus.push_back(MakeGpu(index));
  return MakeInput(std::move(gpus));
}

// The verdict of every card, or of every card on failure.
std::vector<CardVerdict> VerdictsOf(const PolicyInput& input) {
  ChoiceFailure on_failure;
  auto selection = ChooseGpus(input, &on_failure);
  return selection ? selection->verdicts : on_failure.verdicts;
}

std::string ReasonOf(const PolicyInput& input, uint32_t index) {
  for (const CardVerdict& verdict : VerdictsOf(input)) {
    if (verdict.gpu_index == index) return verdict.reason;
  }
  return "no verdict";
}

std::vector<uint32_t> Chosen(const PolicyInput& input) {
  auto selection = ChooseGpus(input);
  EXPECT_TRUE(selection.ok()) << selection.error().message;
  return selection ? selection->chosen_gpu_indices : std::vector<uint32_t>{};
}

// ---- Exclusive requests: thresholds, processes, explanations ----

struct ReasonCase {
  std::string name;
  std::function<void(PolicyInput&)> setup;
  bool eligible;
  std::string reason;
};

class ExclusiveReasonTest : public ::testing::TestWithParam<ReasonCase> {};

TEST_P(ExclusiveReasonTest, VerdictOfGpu0) {
  PolicyInput input = IdleBox(2);
  GetParam().setup(input);
  std::vector<CardVerdict> verdicts = VerdictsOf(input);
  ASSERT_EQ(verdicts.size(), 2u);
  EXPECT_EQ(verdicts[0].gpu_index, 0u);
  EXPECT_EQ(verdicts[0].eligible, GetParam().eligible);
  EXPECT_EQ(verdicts[0].reason, GetParam().reason);
}

Gpu& Gpu0(PolicyInput& input) { return input.gpus[0]; }

INSTANTIATE_TEST_SUITE_P(
    Cases, ExclusiveReasonTest,
    ::testing::Values(
        ReasonCase{"Idle", [](PolicyInput& in) { in.gpus[1].memory_free_bytes = 10 * kGiB; }, true,
                   "chosen: 80G free, 0% util; ranked by free memory"},
        ReasonCase{
            "OverDefaultMaxUsed",
            [](PolicyInput& in) { Gpu0(in) = MakeGpu(0, static_cast<uint64_t>(23.1 * kGiB)); },
            false, "busy: 23.1G used > 1G (--max-used)"},
        ReasonCase{"UnderDefaultMaxUsed", [](PolicyInput& in) { Gpu0(in) = MakeGpu(0, kGiB); },
                   true, "free: 79G free, 0% util"},
        ReasonCase{"OverMaxUsedBytes",
                   [](PolicyInput& in) {
                     Gpu0(in) = MakeGpu(0, 3 * kGiB);
                     in.request.max_used = UsageLimit{2 * kGiB, std::nullopt};
                   },
                   false, "busy: 3G used > 2G (--max-used)"},
        ReasonCase{"OverMaxUsedPercent",
                   [](PolicyInput& in) {
                     Gpu0(in) = MakeGpu(0, 45 * kGiB);
                     in.request.max_used = UsageLimit{std::nullopt, 50};
                   },
                   false, "busy: 45G used > 50% of 80G (--max-used)"},
        ReasonCase{"UnderMaxUsedPercent",
                   [](PolicyInput& in) {
                     Gpu0(in) = MakeGpu(0, 39 * kGiB);
                     in.request.max_used = UsageLimit{std::nullopt, 50};
                   },
                   true, "free: 41G free, 0% util"},
        ReasonCase{"OverDefaultMaxUtil",
                   [](PolicyInput& in) { Gpu0(in).utilization_gpu_percent = 87; }, false,
                   "busy: 87% util > 10% (--max-util)"},
        ReasonCase{"AtDefaultMaxUtil",
                   [](PolicyInput& in) {
                     Gpu0(in).utilization_gpu_percent = 10;
                     in.gpus[1].memory_free_bytes = 0;
                   },
                   true, "chosen: 80G free, 10% util; ranked by free memory"},
        ReasonCase{"UnderRaisedMaxUtil",
                   [](PolicyInput& in) {
                     Gpu0(in).utilization_gpu_percent = 87;
                     in.request.max_util_percent = 90;
                   },
                   true, "free: 80G free, 87% util"},
        ReasonCase{"UtilUnknown", [](PolicyInput& in) { Gpu0(in).utilization_gpu_percent.reset(); },
                   true, "free: 80G free, util unknown"},
        ReasonCase{"MemoryUnknown",
                   [](PolicyInput& in) {
                     Gpu0(in).memory_used_bytes.reset();
                     Gpu0(in).memory_free_bytes.reset();
                     Gpu0(in).memory_total_bytes.reset();
                   },
                   true, "free: memory unknown, 0% util"},
        ReasonCase{"FreeFromTotalMinusUsed",
                   [](PolicyInput& in) {
                     Gpu0(in) = MakeGpu(0, 512 * kMiB);
                     Gpu0(in).memory_free_bytes.reset();
                   },
                   true, "free: 79.5G free, 0% util"},
        // A foreign process under the threshold leaves the card free, and is named.
        ReasonCase{"SmallForeignProcessIsNamed",
                   [](PolicyInput& in) {
                     AddProcess(Gpu0(in), 777, 300 * kMiB);
                     in.process_owners[777] = Owner(1003, "carol", "python eval.py");
                   },
                   true,
                   "free: 79.7G free, 0% util, foreign process: pid 777 (carol, python eval.py) "
                   "uses 300M"},
        // ... unless it is younger than --settle: it may still be allocating.
        ReasonCase{"YoungForeignProcessSettles",
                   [](PolicyInput& in) {
                     AddProcess(Gpu0(in), 777, 300 * kMiB);
                     in.process_owners[777] = Owner(1003, "carol", "python eval.py");
                     in.process_owners[777].age_ms = 3'500;
                   },
                   false,
                   "busy: pid 777 started 3s ago and may still be allocating (--settle 120s), "
                   "foreign process: pid 777 (carol, python eval.py) uses 300M"},
        ReasonCase{"SettledForeignProcessIsJudgedByItsUse",
                   [](PolicyInput& in) {
                     AddProcess(Gpu0(in), 777, 300 * kMiB);
                     in.process_owners[777] = Owner(1003, "carol", "python eval.py");
                     in.process_owners[777].age_ms = 3'500;
                     in.request.settle_ms = 3'000;
                   },
                   true,
                   "free: 79.7G free, 0% util, foreign process: pid 777 (carol, python eval.py) "
                   "uses 300M"},
        ReasonCase{"SettleZeroTurnsItOff",
                   [](PolicyInput& in) {
                     AddProcess(Gpu0(in), 777, 300 * kMiB);
                     in.process_owners[777] = Owner(1003, "carol", "python eval.py");
                     in.process_owners[777].age_ms = 0;
                     in.request.settle_ms = 0;
                   },
                   true,
                   "free: 79.7G free, 0% util, foreign process: pid 777 (carol, python eval.py) "
                   "uses 300M"},
        ReasonCase{"YoungGraphicsProcessDoesNotSettle",
                   [](PolicyInput& in) {
                     AddProcess(Gpu0(in), 777, 300 * kMiB);
                     Gpu0(in).processes.back().compute = false;
                     Gpu0(in).processes.back().graphics = true;
                     in.process_owners[777] = Owner(1003, "root", "Xorg");
                     in.process_owners[777].age_ms = 1'000;
                   },
                   true, "free: 79.7G free, 0% util, foreign process: pid 777 (root, Xorg) uses 300M"},
        ReasonCase{"OwnYoungProcessDoesNotSettle",
                   [](PolicyInput& in) {
                     AddProcess(Gpu0(in), 12, 300 * kMiB);
                     in.process_owners[12] = Owner(kCallerUid, "dave", "python old.py");
                     in.process_owners[12].age_ms = 1'000;
                   },
                   true, "free: 79.7G free, 0% util, your process: pid 12 (dave, python old.py) uses 300M"},
        ReasonCase{"LargeForeignProcessMakesItBusy",
                   [](PolicyInput& in) {
                     AddProcess(Gpu0(in), 777, 12 * kGiB);
                     AddProcess(Gpu0(in), 778, 1 * kGiB);
                     in.process_owners[777] = Owner(1003, "carol", "python eval.py");
                   },
                   false,
                   "busy: 13G used > 1G (--max-used), foreign process: pid 777 (carol, python "
                   "eval.py) uses 12G "
                   "and 1 more"},
        ReasonCase{
            "UnknownOwnerIsForeign",
            [](PolicyInput& in) {
              AddProcess(Gpu0(in), 5, 2 * kGiB);
              in.process_owners[5] = ProcessOwner{};
            },
            false,
            "busy: 2G used > 1G (--max-used), foreign process: pid 5 (owner unknown) uses 2G"},
        ReasonCase{"OwnerWithoutName",
                   [](PolicyInput& in) {
                     AddProcess(Gpu0(in), 6, 100 * kMiB);
                     in.process_owners[6] = Owner(1004, "", "");
                   },
                   true, "free: 79.9G free, 0% util, foreign process: pid 6 (uid 1004) uses 100M"},
        ReasonCase{"OwnProcessWithoutMineFreeCounts",
                   [](PolicyInput& in) {
                     AddProcess(Gpu0(in), 12, 10 * kGiB);
                     in.process_owners[12] = Owner(kCallerUid, "dave", "python old.py");
                   },
                   false,
                   "busy: 10G used > 1G (--max-used), your process: pid 12 (dave, python old.py) "
                   "uses 10G"},
        ReasonCase{"OwnProcessWithMineFreeIsIgnored",
                   [](PolicyInput& in) {
                     AddProcess(Gpu0(in), 12, 10 * kGiB);
                     Gpu0(in).utilization_gpu_percent = 95;
                     in.process_owners[12] = Owner(kCallerUid, "dave", "python old.py");
                     in.request.mine_free = true;
                   },
                   true,
                   "free: 70G free, 95% util, your process: pid 12 (dave, python old.py) uses 10G"},
        ReasonCase{"MineFreeStillCountsOthers",
                   [](PolicyInput& in) {
                     AddProcess(Gpu0(in), 12, 10 * kGiB);
                     AddProcess(Gpu0(in), 777, 2 * kGiB);
                     in.process_owners[12] = Owner(kCallerUid, "dave", "python old.py");
                     in.process_owners[777] = Owner(1003, "carol", "python eval.py");
                     in.request.mine_free = true;
                   },
                   false,
                   "busy: 2G used by others > 1G (--max-used), foreign process: pid 777 (carol, "
                   "python eval.py) "
                   "uses 2G, your process: pid 12 (dave, python old.py) uses 10G"},
        // Utilization cannot be split by process: a foreign process keeps it counting.
        ReasonCase{"MineFreeUtilWithForeignProcess",
                   [](PolicyInput& in) {
                     AddProcess(Gpu0(in), 12, 10 * kGiB);
                     AddProcess(Gpu0(in), 777, 100 * kMiB);
                     Gpu0(in).utilization_gpu_percent = 95;
                     in.process_owners[12] = Owner(kCallerUid, "dave", "python old.py");
                     in.process_owners[777] = Owner(1003, "carol", "python eval.py");
                     in.request.mine_free = true;
                   },
                   false,
                   "busy: 95% util > 10% (--max-util), foreign process: pid 777 (carol, python "
                   "eval.py) uses "
                   "100M, your process: pid 12 (dave, python old.py) uses 10G"},
        ReasonCase{"ProcessesUnknown", [](PolicyInput& in) { Gpu0(in).processes_known = false; },
                   true, "chosen: 80G free, 0% util, processes unknown; ranked by free memory"},
        ReasonCase{
            "ExclusiveLease",
            [](PolicyInput& in) { in.live_leases.push_back(MakeLease("a", {0}, 4121, "alice")); },
            false, "leased by alice (pid 4121, python train.py) since 14:05"},
        // Two picks by one user at the same moment must get two cards.
        ReasonCase{"CallersOwnLeaseBlocks",
                   [](PolicyInput& in) {
                     in.live_leases.push_back(MakeLease("d", {0}, 50, "dave"));
                     in.request.mine_free = true;
                   },
                   false, "leased by dave (pid 50, python train.py) since 14:05"},
        ReasonCase{"SharedLeasesBlockExclusive",
                   [](PolicyInput& in) {
                     in.live_leases.push_back(MakeLease("a", {0, 1}, 4121, "alice", 10 * kGiB));
                     in.live_leases.push_back(MakeLease("b", {0}, 4122, "bob", 10 * kGiB));
                     in.live_leases.back().created_unix_ms += 60000;
                     in.live_leases.back().user = "";
                     in.live_leases.back().uid = 2001;
                     std::swap(in.live_leases[0], in.live_leases[1]);
                   },
                   false, "shared by alice (pid 4121, python train.py) since 14:05 and 1 more job"},
        ReasonCase{"LeaseWithoutUserOrCommand",
                   [](PolicyInput& in) {
                     Lease lease = MakeLease("b", {0}, 4122, "");
                     lease.uid = 2001;
                     lease.command = "";
                     in.live_leases.push_back(lease);
                   },
                   false, "leased by uid 2001 (pid 4122) since 14:05"},
        ReasonCase{"Reservation", [](PolicyInput& in) { AddReservation(in, "bob"); }, false,
                   "reserved by bob (pid 99) until 14:07"},
        ReasonCase{"ReservationOfTheSameShell",
                   [](PolicyInput& in) { in.caller.shell = AddReservation(in, "dave"); }, false,
                   "reserved for this same shell (pid 99) until 14:07; if the job it was for has "
                   "ended: gpupin release r-1"},
        ReasonCase{"ReservationOfAReusedPidIsNotTheSameShell",
                   [](PolicyInput& in) {
                     AddReservation(in, "dave");
                     in.caller.shell = ProcessIdentity{99, 4321};
                   },
                   false, "reserved by dave (pid 99) until 14:07"},
        ReasonCase{"ReservationOfTheSameShellByAnotherUser",
                   [](PolicyInput& in) { in.caller.shell = AddReservation(in, "bob"); }, false,
                   "reserved by bob (pid 99) until 14:07"},
        ReasonCase{"ExclusiveProcessModeWithProcess",
                   [](PolicyInput& in) {
                     Gpu0(in).compute_mode = ComputeMode::kExclusiveProcess;
                     AddProcess(Gpu0(in), 12, 100 * kMiB);
                     in.process_owners[12] = Owner(kCallerUid, "dave", "python old.py");
                     in.request.mine_free = true;
                   },
                   false, "EXCLUSIVE_PROCESS mode and pid 12 runs on it"},
        ReasonCase{"ExclusiveProcessModeIdle",
                   [](PolicyInput& in) { Gpu0(in).compute_mode = ComputeMode::kExclusiveProcess; },
                   true, "chosen: 80G free, 0% util; ranked by free memory"},
        ReasonCase{"Prohibited",
                   [](PolicyInput& in) { Gpu0(in).compute_mode = ComputeMode::kProhibited; }, false,
                   "PROHIBITED compute mode: no process may use it"},
        ReasonCase{"Lost", [](PolicyInput& in) { Gpu0(in).health_error = "GPU is lost"; }, false,
                   "unhealthy: GPU is lost"},
        ReasonCase{"MigEnabled", [](PolicyInput& in) { Gpu0(in).mig_enabled = true; }, false,
                   "MIG enabled: gpupin chooses whole GPUs only (a job runs on an instance with "
                   "CUDA_VISIBLE_DEVICES set to its MIG UUID, which gpupin ls lists)"},
        ReasonCase{"NotAllowed",
                   [](PolicyInput& in) { in.allowed_gpu_indices = std::vector<uint32_t>{1}; },
                   false, "not in CUDA_VISIBLE_DEVICES"},
        ReasonCase{"NotInOnly", [](PolicyInput& in) { in.request.only = {"1"}; }, false,
                   "not in --only"},
        ReasonCase{"Excluded", [](PolicyInput& in) { in.request.exclude = {"GPU-1111"}; }, false,
                   "excluded by --exclude"},
        // Lease files are anyone's: their text cannot break the line or flood it.
        ReasonCase{
            "HostileLeaseText",
            [](PolicyInput& in) {
              Lease lease = MakeLease("a", {0}, 4121, "eve\nGPU 1 free");
              lease.command = std::string(100, 'x');
              in.live_leases.push_back(lease);
            },
            false,
            "leased by eve?GPU 1 free (pid 4121, " + std::string(48, 'x') + "...) since 14:05"}),
    [](const auto& test) { return test.param.name; });

TEST(PolicyTest, ProcessesOfTheCallersJobCountAsTheJobs) {
  // With --mine-free the caller's processes are subtracted; a process of a
  // gpupin job on the card belongs to that job, not to the caller.
  PolicyInput input = IdleBox(1);
  input.live_leases.push_back(MakeLease("mine", {0}, 50, "dave", 10 * kGiB));
  AddProcess(input.gpus[0], 51, 30 * kGiB);
  input.process_owners[51] = Owner(kCallerUid, "dave", "python big.py", "mine");
  input.request.mem_bytes = 10 * kGiB;
  input.request.mine_free = true;
  EXPECT_EQ(ReasonOf(input, 0),
            "chosen: 50G left of 80G (1 shared job), 0% util; ranked by free memory");
}

TEST(PolicyTest, TheLeaseOfTheCallersOwnJobDoesNotBlockIt) {
  // `gpupin run` inside a job: the job's exclusive lease on GPU 0 is the
  // caller's own, while another lease of the same user still blocks GPU 1.
  PolicyInput input = IdleBox(2);
  input.live_leases.push_back(MakeLease("job", {0}, 50, "dave"));
  input.live_leases.push_back(MakeLease("other", {1}, 60, "dave"));
  input.caller.job_lease_id = "job";
  EXPECT_EQ(ReasonOf(input, 0), "chosen: 80G free, 0% util; ranked by free memory");
  EXPECT_EQ(ReasonOf(input, 1), "leased by dave (pid 60, python train.py) since 14:05");
  input.caller.job_lease_id.reset();
  EXPECT_EQ(ReasonOf(input, 0), "leased by dave (pid 50, python train.py) since 14:05");
}

TEST(PolicyTest, ListedProcessesCountEvenWhenUsedMemoryLagsBehind) {
  // The process list was read after the job started, the memory before it.
  PolicyInput input = IdleBox(1);
  GpuProcess process;
  process.pid = 51;
  process.used_memory_bytes = 2 * kGiB;
  input.gpus[0].processes.push_back(process);
  input.process_owners[51] = Owner(kCallerUid, "dave", "python train.py");
  EXPECT_EQ(ReasonOf(input, 0),
            "busy: 2G used > 1G (--max-used), your process: pid 51 (dave, python train.py) uses "
            "2G");
}

// ---- Shared requests ----

PolicyInput SharedCard(std::vector<std::pair<uint64_t, uint64_t>> jobs, uint64_t mem_bytes) {
  PolicyInput input = IdleBox(1);
  uint32_t pid = 100;
  for (auto [leased, uses] : jobs) {
    std::string id = fmt::format("job{}", pid);
    input.live_leases.push_back(MakeLease(id, {0}, static_cast<int>(pid), "alice", leased));
    if (uses > 0) {
      AddProcess(input.gpus[0], pid + 1, uses);
      input.process_owners[pid + 1] = Owner(2000, "alice", "python shared.py", id);
    }
    pid += 10;
  }
  input.request.mem_bytes = mem_bytes;
  return input;
}

TEST(PolicySharedTest, FourTwentyGigJobsFitOnAnEightyGigCardTheFifthDoesNot) {
  for (size_t jobs = 0; jobs < 4; ++jobs) {
    PolicyInput input =
        SharedCard(std::vector<std::pair<uint64_t, uint64_t>>(jobs, {20 * kGiB, 0}), 20 * kGiB);
    EXPECT_THAT(Chosen(input), ElementsAre(0u)) << jobs << " jobs already";
  }
  PolicyInput full =
      SharedCard(std::vector<std::pair<uint64_t, uint64_t>>(4, {20 * kGiB, 0}), 20 * kGiB);
  ChoiceFailure failure;
  auto selection = ChooseGpus(full, &failure);
  const std::vector<CardVerdict>& verdicts = failure.verdicts;
  ASSERT_FALSE(selection.ok());
  EXPECT_EQ(selection.error().code, ExitCode::kNoGpu);
  EXPECT_EQ(selection.error().message,
            "no GPU available: GPU 0 full: 80G in use or leased + 20G asked > 80G (--mem); use "
            "--wait to queue, "
            "or ask for less --mem");
  ASSERT_EQ(verdicts.size(), 1u);
  EXPECT_FALSE(verdicts[0].eligible);
}

TEST(PolicySharedTest, EachJobCountsTheLargerOfItsLeaseAndItsUsage) {
  // 20G leased, 5G used: counts 20G. 10G leased, 25G used: counts 25G.
  PolicyInput input = SharedCard({{20 * kGiB, 5 * kGiB}, {10 * kGiB, 25 * kGiB}}, 35 * kGiB);
  EXPECT_EQ(ReasonOf(input, 0),
            "chosen: 35G left of 80G (2 shared jobs), 0% util; ranked by free memory");
  input.request.mem_bytes = 36 * kGiB;
  EXPECT_EQ(ReasonOf(input, 0), "full: 45G in use or leased + 36G asked > 80G (--mem)");
}

TEST(PolicySharedTest, MemoryOutsideGpupinCountsAsUsed) {
  PolicyInput input = SharedCard({{20 * kGiB, 0}}, 20 * kGiB);
  AddProcess(input.gpus[0], 777, 30 * kGiB);
  input.process_owners[777] = Owner(1003, "carol", "python eval.py");
  // Memory without any process (driver, other namespaces) counts as well.
  *input.gpus[0].memory_used_bytes += 5 * kGiB;
  EXPECT_EQ(ReasonOf(input, 0),
            "chosen: 25G left of 80G (1 shared job), 0% util, foreign process: pid 777 (carol, "
            "python eval.py) "
            "uses 30G; ranked by free memory");
  input.request.mem_bytes = 26 * kGiB;
  EXPECT_THAT(ReasonOf(input, 0),
              HasSubstr("full: 55G in use or leased + 26G asked > 80G (--mem)"));
}

TEST(PolicySharedTest, TheHoldersOwnProcessIsTheJobs) {
  PolicyInput input = SharedCard({{20 * kGiB, 0}}, 20 * kGiB);
  AddProcess(input.gpus[0], 100, 15 * kGiB);  // the holder itself, no lease id known
  EXPECT_EQ(ReasonOf(input, 0),
            "chosen: 60G left of 80G (1 shared job), 0% util; ranked by free memory");
}

TEST(PolicySharedTest, DefaultMaxUsedIsEightyPercentAndUtilIsFree) {
  PolicyInput input = IdleBox(2);
  input.gpus[0] = MakeGpu(0, 65 * kGiB, 99);
  input.gpus[1] = MakeGpu(1, 60 * kGiB, 99);
  input.request.mem_bytes = 10 * kGiB;
  EXPECT_EQ(ReasonOf(input, 0), "busy: 65G used > 80% of 80G (--max-used)");
  EXPECT_EQ(ReasonOf(input, 1), "chosen: 20G left of 80G, 99% util; ranked by free memory");
  input.request.max_util_percent = 50;
  EXPECT_EQ(ReasonOf(input, 1), "busy: 99% util > 50% (--max-util)");
}

TEST(PolicySharedTest, ExclusiveLeaseAndReservationBlockSharedRequests) {
  PolicyInput input = IdleBox(3);
  input.live_leases.push_back(MakeLease("a", {0}, 4121, "alice"));
  Lease shared_reservation = MakeLease("r", {1}, 99, "bob", 5 * kGiB);
  shared_reservation.reservation_deadline_unix_ms = k1405Utc + 60000;
  input.live_leases.push_back(shared_reservation);
  input.request.mem_bytes = 5 * kGiB;
  EXPECT_EQ(ReasonOf(input, 0), "leased by alice (pid 4121, python train.py) since 14:05");
  EXPECT_EQ(ReasonOf(input, 1), "reserved by bob (pid 99) until 14:06");
  EXPECT_THAT(Chosen(input), ElementsAre(2u));
}

TEST(PolicySharedTest, ExclusiveProcessModeTakesOneJob) {
  PolicyInput input = SharedCard({{10 * kGiB, 0}}, 10 * kGiB);
  input.gpus[0].compute_mode = ComputeMode::kExclusiveThread;
  EXPECT_EQ(ReasonOf(input, 0), "EXCLUSIVE_THREAD mode and a gpupin job holds it");
}

TEST(PolicySharedTest, MaxJobsCapsJobsPerCard) {
  PolicyInput input = SharedCard({{10 * kGiB, 0}, {10 * kGiB, 0}}, 10 * kGiB);
  EXPECT_THAT(Chosen(input), ElementsAre(0u));
  input.request.max_jobs = 3;
  EXPECT_THAT(Chosen(input), ElementsAre(0u));
  input.request.max_jobs = 2;
  EXPECT_EQ(ReasonOf(input, 0), "full: 2 gpupin jobs, --max-jobs 2");
  input = SharedCard({{10 * kGiB, 0}}, 10 * kGiB);
  input.request.max_jobs = 1;
  EXPECT_EQ(ReasonOf(input, 0), "full: 1 gpupin job, --max-jobs 1");
}

TEST(PolicySharedTest, UnknownMemoryCannotBeShared) {
  PolicyInput input = IdleBox(2);
  input.gpus[0].memory_used_bytes.reset();
  input.request.mem_bytes = 10 * kGiB;
  EXPECT_EQ(ReasonOf(input, 0), "memory unknown: cannot fit --mem");
}

TEST(PolicySharedTest, TooSmallCardIsNamedAndNeverCounts) {
  PolicyInput input = IdleBox(2);
  input.gpus[1] = MakeGpu(1, 0, 0, 16 * kGiB);
  input.request.mem_bytes = 24 * kGiB;
  EXPECT_EQ(ReasonOf(input, 1), "too small: 16G total < 24G (--mem)");
  input.request.count = 2;
  ChoiceFailure failure;
  auto selection = ChooseGpus(input, &failure);
  ASSERT_FALSE(selection.ok());
  EXPECT_EQ(selection.error().code, ExitCode::kNoGpu);
  EXPECT_FALSE(failure.waiting_can_help);
  EXPECT_EQ(selection.error().message,
            "asked for 2 GPUs with --mem 24G but only 1 has that much memory");
}

// ---- Ranking ----

struct RankCase {
  std::string name;
  Preference prefer;
  std::vector<std::string> order;
  int count;
  std::vector<uint32_t> chosen;
};

class RankingTest : public ::testing::TestWithParam<RankCase> {};

// GPU 0: 70G free, 5% util. GPU 1: 79G free, 8%. GPU 2: 79G free, 2%. GPU 3: 60G free, 0%.
TEST_P(RankingTest, Chooses) {
  PolicyInput input = IdleBox(4);
  input.gpus[0].memory_free_bytes = 70 * kGiB;
  input.gpus[1].memory_free_bytes = 79 * kGiB;
  input.gpus[2].memory_free_bytes = 79 * kGiB;
  input.gpus[3].memory_free_bytes = 60 * kGiB;
  input.gpus[0].utilization_gpu_percent = 5;
  input.gpus[1].utilization_gpu_percent = 8;
  input.gpus[2].utilization_gpu_percent = 2;
  input.request.prefer = GetParam().prefer;
  input.request.order = GetParam().order;
  input.request.count = GetParam().count;
  EXPECT_EQ(Chosen(input), GetParam().chosen);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, RankingTest,
    ::testing::Values(RankCase{"FreeThenUtil", Preference::kFree, {}, 1, {2}},
                      RankCase{"FreeTwo", Preference::kFree, {}, 2, {1, 2}},
                      RankCase{"FreeThree", Preference::kFree, {}, 3, {0, 1, 2}},
                      RankCase{"Util", Preference::kUtil, {}, 1, {3}},
                      RankCase{"UtilTwo", Preference::kUtil, {}, 2, {2, 3}},
                      RankCase{"Index", Preference::kIndex, {}, 2, {0, 1}},
                      RankCase{"OrderFirst", Preference::kFree, {"3"}, 1, {3}},
                      // Chosen cards come in NVML order, not in rank order.
                      RankCase{"OrderThenPreference", Preference::kFree, {"3", "0"}, 3, {0, 2, 3}},
                      RankCase{"OrderByUuid", Preference::kIndex, {"GPU-3333", "1"}, 1, {2}}),
    [](const auto& test) { return test.param.name; });

TEST(PolicyRankingTest, UnknownUtilizationRanksLast) {
  PolicyInput input = IdleBox(2);
  input.gpus[0].utilization_gpu_percent.reset();
  input.gpus[1].utilization_gpu_percent = 9;
  input.request.prefer = Preference::kUtil;
  EXPECT_THAT(Chosen(input), ElementsAre(1u));
}

TEST(PolicyRankingTest, ChosenReasonSaysWhy) {
  PolicyInput input = IdleBox(2);
  input.request.order = {"1"};
  EXPECT_EQ(ReasonOf(input, 1), "chosen: 80G free, 0% util; listed in --order");
  EXPECT_EQ(ReasonOf(input, 0), "free: 80G free, 0% util");
  input.request.order.clear();
  input.request.prefer = Preference::kUtil;
  EXPECT_EQ(ReasonOf(input, 0), "chosen: 80G free, 0% util; ranked by utilization");
  input.request.prefer = Preference::kIndex;
  EXPECT_EQ(ReasonOf(input, 0), "chosen: 80G free, 0% util; ranked by index");
}

// ---- Topology: --near ----

// 8 GPUs in NVLink pairs (0-1, 2-3, 4-5, 6-7), GPUs 0-3 on NUMA node 0 and
// 4-7 on node 1; NVML says kNode within a socket and kSystem across.
PolicyInput NvLinkPairsBox() {
  PolicyInput input = IdleBox(8);
  input.topology.assign(8, std::vector<std::optional<TopologyLevel>>(8));
  for (uint32_t a = 0; a < 8; ++a) {
    Gpu& gpu = input.gpus[a];
    gpu.numa_node = a < 4 ? 0 : 1;
    gpu.nvlink_peer_bus_ids.push_back(input.gpus[a ^ 1].pci_bus_id);
    for (uint32_t b = 0; b < 8; ++b) {
      input.topology[a][b] = (a < 4) == (b < 4) ? TopologyLevel::kNode : TopologyLevel::kSystem;
    }
  }
  return input;
}

// 8 PCIe GPUs: pairs under one switch (kSingle), four per NUMA node, no NVLink.
PolicyInput TwoNumaBox() {
  PolicyInput input = IdleBox(8);
  input.topology.assign(8, std::vector<std::optional<TopologyLevel>>(8));
  for (uint32_t a = 0; a < 8; ++a) {
    for (uint32_t b = 0; b < 8; ++b) {
      TopologyLevel level = TopologyLevel::kSystem;
      if (a / 2 == b / 2) {
        level = TopologyLevel::kSingle;
      } else if (a / 4 == b / 4) {
        level = TopologyLevel::kHostBridge;
      }
      input.topology[a][b] = level;
    }
  }
  return input;
}

// Free memory that ranks GPU `best` first, then the others from the last.
void RankFirst(PolicyInput& input, uint32_t best) {
  for (Gpu& gpu : input.gpus) gpu.memory_free_bytes = (40 + gpu.index) * kGiB;
  input.gpus[best].memory_free_bytes = 79 * kGiB;
}

struct NearCase {
  std::string name;
  std::function<PolicyInput()> box;
  uint32_t best;
  int count;
  bool near;
  std::vector<uint32_t> busy;
  std::vector<uint32_t> chosen;
  std::string set_note;  // "" when no set note is expected
};

class NearTest : public ::testing::TestWithParam<NearCase> {};

TEST_P(NearTest, ChoosesClosestSet) {
  const NearCase& c = GetParam();
  PolicyInput input = c.box();
  RankFirst(input, c.best);
  for (uint32_t index : c.busy) input.gpus[index].utilization_gpu_percent = 100;
  input.request.count = c.count;
  input.request.near = c.near;
  auto selection = ChooseGpus(input);
  ASSERT_TRUE(selection.ok()) << selection.error().message;
  EXPECT_EQ(selection->chosen_gpu_indices, c.chosen);
  const std::string& reason = selection->verdicts[c.chosen.front()].reason;
  if (c.set_note.empty()) {
    EXPECT_THAT(reason, ::testing::Not(HasSubstr("; set ")));
  } else {
    EXPECT_THAT(reason, HasSubstr("; set " + c.set_note));
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, NearTest,
    ::testing::Values(
        // GPU 3 is best, but alone it makes no pair better than 6-7, whose
        // weaker card (46G) beats GPU 2 (42G); the most free pair, 3 and 7,
        // is not linked.
        NearCase{"NvLinkPairBeatsFreeMemory",
                 NvLinkPairsBox,
                 3,
                 2,
                 true,
                 {},
                 {6, 7},
                 "linked by NVLink"},
        NearCase{"NearOffTakesTheMostFree", NvLinkPairsBox, 3, 2, false, {}, {3, 7}, ""},
        // GPU 6 is best and its pair 6-7 wins, until its peer is busy: then
        // the best complete pair left, 4-5.
        NearCase{"BestPair", NvLinkPairsBox, 6, 2, true, {}, {6, 7}, "linked by NVLink"},
        NearCase{"BestCardsPeerBusy", NvLinkPairsBox, 6, 2, true, {7}, {4, 5}, "linked by NVLink"},
        // No four are all NVLinked: one NUMA node, the best card's.
        NearCase{
            "FourOnOneNumaNode", NvLinkPairsBox, 5, 4, true, {}, {4, 5, 6, 7}, "on one NUMA node"},
        NearCase{"FourAroundBusyCards",
                 NvLinkPairsBox,
                 5,
                 4,
                 true,
                 {4},
                 {0, 1, 2, 3},
                 "on one NUMA node"},
        NearCase{"SixSpanNodes", NvLinkPairsBox, 0, 6, true, {}, {0, 3, 4, 5, 6, 7}, ""},
        // Equally close sets: the one whose weakest card ranks best.
        NearCase{"SwitchPair", TwoNumaBox, 4, 2, true, {}, {6, 7}, "under one PCIe switch"},
        NearCase{"ThreeOnOneNode", TwoNumaBox, 5, 3, true, {}, {5, 6, 7}, "on one NUMA node"},
        // Two of node 1's cards busy: only node 0 still has three.
        NearCase{
            "ThreeWhenANodeIsBusy", TwoNumaBox, 5, 3, true, {5, 6}, {1, 2, 3}, "on one NUMA node"},
        NearCase{"SinglesIgnoreTopology", TwoNumaBox, 1, 1, true, {}, {1}, ""},
        NearCase{"UnknownTopology", [] { return IdleBox(4); }, 1, 2, true, {}, {1, 3}, ""}),
    [](const auto& test) { return test.param.name; });

// 80G+10G under one switch, 79G+79G under another. A job
// spread over two cards runs at the pace of its smaller one.
TEST(PolicyNearTest, TheWeakestCardDecidesAmongEquallyCloseSets) {
  PolicyInput input = TwoNumaBox();
  const std::vector<uint64_t> free_gib = {80, 10, 79, 79, 5, 5, 5, 5};
  for (uint32_t index = 0; index < 8; ++index)
    input.gpus[index].memory_free_bytes = free_gib[index] * kGiB;
  input.request.count = 2;
  EXPECT_THAT(Chosen(input), ElementsAre(2u, 3u));
  EXPECT_EQ(ReasonOf(input, 0),
            "free: 80G free, 0% util; not under one PCIe switch with the chosen cards, whose set "
            "ranks best");
  input.request.count = 3;
  EXPECT_THAT(Chosen(input), ElementsAre(0u, 2u, 3u));
  EXPECT_EQ(ReasonOf(input, 1), "free: 10G free, 0% util; ranked below the chosen cards");
  EXPECT_EQ(ReasonOf(input, 4),
            "free: 5G free, 0% util; not on one NUMA node with the chosen cards, whose set ranks "
            "best");
  input.request.count = 2;
  // Closeness still comes first: 80G beside 10G beats 80G beside 79G
  // across the switch.
  input.gpus[3].memory_free_bytes = 0;
  input.gpus[3].utilization_gpu_percent = 100;
  EXPECT_THAT(Chosen(input), ElementsAre(0u, 1u));
}

TEST(PolicyNearTest, SameBoardComesFirst) {
  PolicyInput input = NvLinkPairsBox();
  RankFirst(input, 0);
  input.gpus[0].board_id = 7;
  input.gpus[5].board_id = 7;
  input.request.count = 2;
  auto selection = ChooseGpus(input);
  ASSERT_TRUE(selection.ok());
  EXPECT_THAT(selection->chosen_gpu_indices, ElementsAre(0u, 5u));
  EXPECT_EQ(selection->verdicts[5].reason,
            "chosen: 45G free, 0% util; ranked by free memory; set on one board");
}

// ---- Failure and usage errors ----

TEST(PolicyFailureTest, OneLineNamesWhatBlockedEachCard) {
  PolicyInput input = IdleBox(4);
  input.live_leases.push_back(MakeLease("a", {0}, 4121, "alice"));
  input.gpus[1] = MakeGpu(1, static_cast<uint64_t>(23.1 * kGiB));
  input.gpus[2].utilization_gpu_percent = 87;
  input.request.exclude = {"3"};
  ChoiceFailure failure;
  auto selection = ChooseGpus(input, &failure);
  const std::vector<CardVerdict>& verdicts = failure.verdicts;
  ASSERT_FALSE(selection.ok());
  EXPECT_EQ(selection.error().code, ExitCode::kNoGpu);
  // The excluded card is in the verdicts, not in the line.
  EXPECT_EQ(selection.error().message,
            "no GPU available: GPU 0 leased by alice (pid 4121, python train.py) since 14:05; GPU "
            "1 busy: 23.1G "
            "used > 1G (--max-used); GPU 2 busy: 87% util > 10% (--max-util); use --wait to queue, "
            "or relax "
            "--max-used/--max-util");
  ASSERT_EQ(verdicts.size(), 4u);
  EXPECT_EQ(verdicts[3].reason, "excluded by --exclude");
}

// Inside a Slurm allocation, free cards outside it are not in the reasons,
// so the line says the search was limited to the allocation.
TEST(PolicyFailureTest, SaysTheSearchWasLimitedToCudaVisibleDevices) {
  PolicyInput input = IdleBox(4);
  input.allowed_gpu_indices = std::vector<uint32_t>{2, 3};
  input.allowed_by = "CUDA_VISIBLE_DEVICES=2,3";
  input.live_leases.push_back(MakeLease("a", {2}, 4121, "alice"));
  input.gpus[3] = MakeGpu(3, 4 * kGiB);
  ChoiceFailure failure;
  auto selection = ChooseGpus(input, &failure);
  const std::vector<CardVerdict>& verdicts = failure.verdicts;
  ASSERT_FALSE(selection.ok());
  EXPECT_EQ(selection.error().code, ExitCode::kNoGpu);
  EXPECT_EQ(selection.error().message,
            "no GPU available within CUDA_VISIBLE_DEVICES=2,3: GPU 2 leased by alice (pid 4121, "
            "python train.py) since 14:05; GPU 3 busy: 4G used > 1G (--max-used); use --wait to "
            "queue, or relax --max-used/--max-util");
  ASSERT_EQ(verdicts.size(), 4u);
  EXPECT_EQ(verdicts[0].reason, "not in CUDA_VISIBLE_DEVICES");

  input.request.count = 2;
  input.live_leases.clear();
  selection = ChooseGpus(input, &failure);
  ASSERT_FALSE(selection.ok());
  EXPECT_THAT(selection.error().message,
              ::testing::StartsWith("2 GPUs asked, only 1 available within "
                                    "CUDA_VISIBLE_DEVICES=2,3: GPU 3 busy"));

  // An allowed list that leaves no card out limits nothing worth saying.
  input.allowed_gpu_indices = std::vector<uint32_t>{0, 1, 2, 3};
  input.live_leases.push_back(MakeLease("a", {0, 1, 2}, 4121, "alice"));
  selection = ChooseGpus(input, &failure);
  ASSERT_FALSE(selection.ok());
  EXPECT_THAT(selection.error().message,
              ::testing::StartsWith("no GPU available: GPUs 0,1,2 leased"));
}

TEST(PolicyFailureTest, FewerThanAskedSaysHowMany) {
  PolicyInput input = IdleBox(3);
  input.live_leases.push_back(MakeLease("a", {0, 1}, 4121, "alice"));
  input.request.count = 2;
  ChoiceFailure failure;
  auto selection = ChooseGpus(input, &failure);
  const std::vector<CardVerdict>& verdicts = failure.verdicts;
  ASSERT_FALSE(selection.ok());
  EXPECT_EQ(selection.error().code, ExitCode::kNoGpu);
  EXPECT_EQ(selection.error().message,
            "2 GPUs asked, only 1 available: GPUs 0,1 leased by alice (pid 4121, python "
            "train.py) since 14:05; use --wait to queue");
  ASSERT_EQ(verdicts.size(), 3u);
  EXPECT_TRUE(verdicts[2].eligible);
  EXPECT_FALSE(verdicts[2].chosen);
}

TEST(PolicyFailureTest, SuggestsMineFreeWhenOwnProcessesBlock) {
  PolicyInput input = IdleBox(1);
  AddProcess(input.gpus[0], 12, 10 * kGiB);
  input.process_owners[12] = Owner(kCallerUid, "dave", "python old.py");
  auto selection = ChooseGpus(input);
  ASSERT_FALSE(selection.ok());
  EXPECT_THAT(selection.error().message,
              HasSubstr("; use --wait to queue, or relax --max-used/--max-util, or --mine-free to "
                        "ignore your own "
                        "processes"));
}

TEST(PolicyFailureTest, LostAndMigCardsAreNoGpuNotUsage) {
  PolicyInput input = IdleBox(2);
  input.gpus[0].health_error = "GPU is lost";
  input.gpus[1].mig_enabled = true;
  auto selection = ChooseGpus(input);
  ASSERT_FALSE(selection.ok());
  EXPECT_EQ(selection.error().code, ExitCode::kNoGpu);
}

// A request that only cards which cannot run jobs at all could meet must not
// wait: in a first-come-first-served queue it would block everyone for ever.
TEST(PolicyFailureTest, WaitingCannotHelpWhenTooFewCardsCanRunJobs) {
  PolicyInput input = IdleBox(4);
  input.gpus[0].mig_enabled = true;
  input.gpus[1].compute_mode = ComputeMode::kProhibited;
  input.gpus[2].health_error = "GPU is lost";
  input.live_leases.push_back(MakeLease("a", {3}, 4121, "alice"));
  ChoiceFailure failure;
  auto selection = ChooseGpus(input, &failure);
  ASSERT_FALSE(selection.ok());
  EXPECT_EQ(selection.error().code, ExitCode::kNoGpu);
  EXPECT_TRUE(failure.waiting_can_help) << "GPU 3 frees when alice's job ends";
  EXPECT_THAT(selection.error().message, HasSubstr("; use --wait to queue"));

  input.request.count = 2;
  selection = ChooseGpus(input, &failure);
  ASSERT_FALSE(selection.ok());
  EXPECT_EQ(selection.error().code, ExitCode::kNoGpu);
  EXPECT_FALSE(failure.waiting_can_help);
  EXPECT_THAT(selection.error().message,
              HasSubstr("GPU 0 MIG enabled: gpupin chooses whole GPUs only (a job runs on an "
                        "instance with CUDA_VISIBLE_DEVICES set to its MIG UUID, which gpupin ls "
                        "lists); GPU 1 PROHIBITED compute mode"));
  EXPECT_THAT(selection.error().message,
              ::testing::EndsWith("; only 1 GPU here can run jobs at all, so --wait would wait "
                                  "for ever"));
  EXPECT_EQ(failure.verdicts.size(), 4u);

  input.request.only = {"0", "1"};
  selection = ChooseGpus(input, &failure);
  ASSERT_FALSE(selection.ok());
  EXPECT_FALSE(failure.waiting_can_help);
  EXPECT_THAT(selection.error().message,
              ::testing::EndsWith("; no GPU that --only/--exclude leave can run jobs at all, so "
                                  "--wait would wait for ever"));
}

struct UsageCase {
  std::string name;
  std::function<void(PolicyInput&)> setup;
  std::string message;
};

class UsageErrorTest : public ::testing::TestWithParam<UsageCase> {};

// A count no state of the cards could meet: no GPU, as for any size, and
// waiting would never help.
class NeverMeetableTest : public ::testing::TestWithParam<UsageCase> {};

TEST_P(NeverMeetableTest, IsKNoGpuAndWaitingCannotHelp) {
  PolicyInput input = IdleBox(8);
  GetParam().setup(input);
  ChoiceFailure failure;
  auto selection = ChooseGpus(input, &failure);
  ASSERT_FALSE(selection.ok());
  EXPECT_EQ(selection.error().code, ExitCode::kNoGpu);
  EXPECT_EQ(selection.error().message, GetParam().message);
  EXPECT_FALSE(failure.waiting_can_help);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, NeverMeetableTest,
    ::testing::Values(
        UsageCase{"MoreThanExist", [](PolicyInput& in) { in.request.count = 9; },
                  "asked for 9 GPUs but this machine has 8"},
        UsageCase{"MoreThanAllowed",
                  [](PolicyInput& in) {
                    in.request.count = 3;
                    in.allowed_gpu_indices = std::vector<uint32_t>{1, 5};
                    in.allowed_by = "CUDA_VISIBLE_DEVICES=1,5";
                  },
                  "asked for 3 GPUs but only 2 are in your allocation, CUDA_VISIBLE_DEVICES=1,5"},
        UsageCase{"MoreThanTheOneAllowed",
                  [](PolicyInput& in) {
                    in.request.count = 2;
                    in.allowed_gpu_indices = std::vector<uint32_t>{5};
                    in.allowed_by = "CUDA_VISIBLE_DEVICES=5";
                  },
                  "asked for 2 GPUs but only 1 is in your allocation, CUDA_VISIBLE_DEVICES=5"},
        UsageCase{"MoreThanOnlyLeaves",
                  [](PolicyInput& in) {
                    in.request.count = 2;
                    in.request.only = {"1", "2"};
                    in.request.exclude = {"2"};
                  },
                  "asked for 2 GPUs but --only/--exclude leave 1"},
        // --only names a card that exists, but outside the allocation.
        UsageCase{"OnlyOutsideTheAllocation",
                  [](PolicyInput& in) {
                    in.request.only = {"0"};
                    in.allowed_gpu_indices = std::vector<uint32_t>{2, 3};
                    in.allowed_by = "CUDA_VISIBLE_DEVICES=2,3";
                  },
                  "asked for 1 GPU but --only/--exclude leave 0 within your allocation, "
                  "CUDA_VISIBLE_DEVICES=2,3"}),
    [](const auto& test) { return test.param.name; });

TEST_P(UsageErrorTest, IsKUsage) {
  PolicyInput input = IdleBox(8);
  GetParam().setup(input);
  auto selection = ChooseGpus(input);
  ASSERT_FALSE(selection.ok());
  EXPECT_EQ(selection.error().code, ExitCode::kUsage);
  EXPECT_EQ(selection.error().message, GetParam().message);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, UsageErrorTest,
    ::testing::Values(
        UsageCase{"ZeroCount", [](PolicyInput& in) { in.request.count = 0; },
                  "invalid GPU count 0; ask for at least 1"},
        UsageCase{"NoSuchIndex", [](PolicyInput& in) { in.request.only = {"9"}; },
                  "--only 9: no GPU has that index (NVML indices here run 0 to 7)"},
        UsageCase{
            "HugeIndex", [](PolicyInput& in) { in.request.exclude = {"99999999999999999999"}; },
            "--exclude 99999999999999999999: no GPU has that index (NVML indices here run 0 to 7)"},
        UsageCase{"NoSuchUuid", [](PolicyInput& in) { in.request.order = {"GPU-abc"}; },
                  "--order GPU-abc: no GPU has a UUID that starts so; see gpupin ls"},
        UsageCase{"ARange", [](PolicyInput& in) { in.request.only = {"0-3"}; },
                  "--only 0-3: --only takes no ranges: list the indices, e.g. 0,1,2"},
        UsageCase{"ANegativeIndex", [](PolicyInput& in) { in.request.only = {"-1"}; },
                  "--only -1: not an NVML index: they count from 0 (gpupin ls lists them)"},
        UsageCase{"ACudaOrdinal", [](PolicyInput& in) { in.request.exclude = {"cuda:1"}; },
                  "--exclude cuda:1: cuda:N is CUDA's numbering, which CUDA_VISIBLE_DEVICES "
                  "changes: give the NVML index (gpupin map cuda:N says which GPU it is)"},
        UsageCase{"ABusId", [](PolicyInput& in) { in.request.only = {"00000000:1B:00.0"}; },
                  "--only 00000000:1B:00.0: a PCI bus id? give the GPU's NVML index or UUID "
                  "(gpupin ls lists both)"},
        UsageCase{"MigInstanceUuid",
                  [](PolicyInput& in) {
                    in.gpus[3].mig_devices = {MigDevice{}};
                    in.gpus[3].mig_devices[0].uuid = "MIG-5d3f0000-0000-4000-8000-000000000000";
                    in.request.only = {"mig-5d3f"};
                  },
                  "--only mig-5d3f: a MIG instance of GPU 3; --only names whole cards: give 3 "
                  "or its UUID"},
        UsageCase{"MigInstanceOfACardInMigMode",
                  [](PolicyInput& in) {
                    in.gpus[3].mig_enabled = true;
                    in.gpus[3].mig_devices = {MigDevice{}};
                    in.gpus[3].mig_devices[0].uuid = "MIG-5d3f0000-0000-4000-8000-000000000000";
                    in.request.only = {"MIG-5d3f"};
                  },
                  "--only MIG-5d3f: a MIG instance of GPU 3; --only names whole cards: give 3 "
                  "or its UUID, though no card in MIG mode is chosen: a job uses this instance "
                  "with CUDA_VISIBLE_DEVICES=MIG-5d3f0000-0000-4000-8000-000000000000"},
        UsageCase{"UnknownMigUuid", [](PolicyInput& in) { in.request.exclude = {"MIG-77"}; },
                  "--exclude MIG-77: a MIG instance's UUID; --exclude names whole cards by NVML "
                  "index or GPU- UUID; see gpupin ls"},
        UsageCase{"AmbiguousUuid",
                  [](PolicyInput& in) {
                    in.gpus[2].uuid = "GPU-abaa0000-0000-4000-8000-000000000000";
                    in.gpus[5].uuid = "GPU-abbb0000-0000-4000-8000-000000000000";
                    in.request.only = {"GPU-ab"};
                  },
                  "--only GPU-ab: ambiguous, matches GPU 2, GPU 5; give more of the UUID"},
        UsageCase{"EmptyId", [](PolicyInput& in) { in.request.exclude = {""}; },
                  "--exclude: empty GPU id; give an NVML index or a UUID prefix"},
        UsageCase{"ZeroMem", [](PolicyInput& in) { in.request.mem_bytes = 0; },
                  "--mem 0: give the memory the job needs, e.g. --mem 24G"},
        UsageCase{"ZeroMaxJobs",
                  [](PolicyInput& in) {
                    in.request.mem_bytes = kGiB;
                    in.request.max_jobs = 0;
                  },
                  "invalid --max-jobs 0; give at least 1"},
        UsageCase{"MaxJobsWithoutMem", [](PolicyInput& in) { in.request.max_jobs = 2; },
                  "--max-jobs 2 needs --mem: without it a job takes its cards alone"},
        UsageCase{"BadMaxUtil", [](PolicyInput& in) { in.request.max_util_percent = 150; },
                  "invalid --max-util percentage; give 0 to 100"},
        UsageCase{"BadMaxUsed",
                  [](PolicyInput& in) {
                    in.request.max_used = UsageLimit{std::nullopt, -1};
                  },
                  "invalid --max-used percentage; give 0 to 100"}),
    [](const auto& test) { return test.param.name; });

TEST(PolicyIdsTest, UuidPrefixesWithOrWithoutGpuDashAnyCase) {
  PolicyInput input = IdleBox(4);
  input.request.only = {"gpu-3333"};
  EXPECT_THAT(Chosen(input), ElementsAre(2u));
  input.request.only = {"44444444-0000"};
  EXPECT_THAT(Chosen(input), ElementsAre(3u));
  input.request.only = {"GPU-22222222-0000-4000-8000-000000000000"};
  EXPECT_THAT(Chosen(input), ElementsAre(1u));
}

TEST(PolicyIdsTest, MaxJobsOneIsTheExclusiveDefault) {
  PolicyInput input = IdleBox(1);
  input.request.max_jobs = 1;
  EXPECT_THAT(Chosen(input), ElementsAre(0u));
}

}  // namespace
}  // namespace gpupin
