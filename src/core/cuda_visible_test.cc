#include "core/cuda_visible.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gpupin {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

Gpu MakeGpu(uint32_t index, std::string name = "NVIDIA A100-SXM4-80GB",
            ComputeCapability cc = {8, 0}, uint32_t cores = 6912) {
  Gpu gpu;
  gpu.index = index;
  gpu.uuid = "GPU-" + std::to_string(index) + std::to_string(index) +
             "aaaaaa-1111-2222-3333-44444444444" + std::to_string(index);
  char bus[32];
  std::snprintf(bus, sizeof bus, "00000000:%02X:00.0", 0x10 * (index + 1));
  gpu.pci_bus_id = bus;
  gpu.name = std::move(name);
  gpu.compute_capability = cc;
  gpu.cores = cores;
  gpu.mig_enabled = false;
  return gpu;
}

MigDevice MakeMig(uint32_t gpu_index, uint32_t slot, uint32_t gi, uint32_t ci) {
  MigDevice mig;
  mig.index = slot;
  mig.uuid = "MIG-" + std::to_string(gpu_index) + std::to_string(slot) +
             "c788539f-c1ea-5a36-8b4d-9b07d024b1bb";
  mig.gpu_instance_id = gi;
  mig.compute_instance_id = ci;
  return mig;
}

std::vector<Gpu> FourA100() { return {MakeGpu(0), MakeGpu(1), MakeGpu(2), MakeGpu(3)}; }

// GPU 0: T4 (7.5), GPU 1: A100 (8.0), GPU 2: V100 (7.0), GPU 3: A100.
std::vector<Gpu> Mixed() {
  return {MakeGpu(0, "Tesla T4", {7, 5}, 2560), MakeGpu(1), MakeGpu(2, "Tesla V100", {7, 0}, 5120),
          MakeGpu(3)};
}

// GPU 0 whole, GPU 1 in MIG mode with two instances, GPU 2 in MIG mode without one.
std::vector<Gpu> WithMig() {
  std::vector<Gpu> gpus = {MakeGpu(0), MakeGpu(1), MakeGpu(2)};
  gpus[1].mig_enabled = true;
  gpus[1].mig_devices = {MakeMig(1, 0, 1, 0), MakeMig(1, 1, 2, 0)};
  gpus[2].mig_enabled = true;
  return gpus;
}

VisibilityEnv Cvd(std::string value) {
  VisibilityEnv env;
  env.cuda_visible_devices = std::move(value);
  return env;
}

std::vector<uint32_t> Indices(const Resolution& r) {
  std::vector<uint32_t> out;
  for (const VisibleDevice& d : r.visible) out.push_back(d.gpu_index);
  return out;
}

std::vector<DropReason> Reasons(const Resolution& r) {
  std::vector<DropReason> out;
  for (const DroppedEntry& d : r.dropped) out.push_back(d.reason);
  return out;
}

std::string AllNotes(const Resolution& r) {
  std::string out;
  for (const std::string& note : r.notes) out += note + "\n";
  return out;
}

TEST(CudaVisibleTest, UnsetShowsAllInPciOrder) {
  const Resolution r = ResolveVisibleDevices(FourA100(), {});
  EXPECT_THAT(Indices(r), ElementsAre(0, 1, 2, 3));
  EXPECT_THAT(r.dropped, IsEmpty());
  EXPECT_EQ(r.visible[2].ordinal, 2);
  EXPECT_EQ(r.visible[2].token, "");
  EXPECT_EQ(r.visible[2].uuid, FourA100()[2].uuid);
  EXPECT_FALSE(r.order_is_guess);
  EXPECT_EQ(r.order, DeviceOrder::kFastestFirst);
}

TEST(CudaVisibleTest, EmptyShowsNone) {
  const Resolution r = ResolveVisibleDevices(FourA100(), Cvd(""));
  EXPECT_THAT(r.visible, IsEmpty());
  EXPECT_THAT(r.dropped, IsEmpty());
  EXPECT_THAT(AllNotes(r), HasSubstr("set but empty"));
}

TEST(CudaVisibleTest, ListOrderGivesOrdinals) {
  const Resolution r = ResolveVisibleDevices(FourA100(), Cvd("2,1"));
  EXPECT_THAT(Indices(r), ElementsAre(2, 1));
  EXPECT_EQ(r.visible[0].ordinal, 0);
  EXPECT_EQ(r.visible[1].ordinal, 1);
  EXPECT_EQ(r.visible[1].token, "1");
}

TEST(CudaVisibleTest, WhitespaceAroundEntriesIsStripped) {
  const Resolution r = ResolveVisibleDevices(FourA100(), Cvd(" 3 ,\t0 "));
  EXPECT_THAT(Indices(r), ElementsAre(3, 0));
  EXPECT_EQ(r.visible[0].token, "3");
}

TEST(CudaVisibleTest, LeadingDigitsAreReadLikeStrtoul) {
  const Resolution r = ResolveVisibleDevices(FourA100(), Cvd("1gpu2,2ampere"));
  EXPECT_THAT(Indices(r), ElementsAre(1, 2));
  EXPECT_THAT(AllNotes(r), HasSubstr("`1gpu2` is read as index 1"));
}

TEST(CudaVisibleTest, RangeReadsAsItsFirstNumber) {
  const Resolution r = ResolveVisibleDevices(FourA100(), Cvd("0-2"));
  EXPECT_THAT(Indices(r), ElementsAre(0));
  EXPECT_THAT(AllNotes(r), HasSubstr("no ranges"));
}

TEST(CudaVisibleTest, InvalidEntryCutsTheList) {
  const Resolution r = ResolveVisibleDevices(FourA100(), Cvd("0,2,-1,1"));
  EXPECT_THAT(Indices(r), ElementsAre(0, 2));
  EXPECT_THAT(Reasons(r), ElementsAre(DropReason::kInvalidToken, DropReason::kAfterInvalid));
  EXPECT_EQ(r.dropped[0].position, 2);
  EXPECT_EQ(r.dropped[0].token, "-1");
  EXPECT_THAT(r.dropped[0].detail, HasSubstr("hide every GPU"));
  EXPECT_EQ(r.dropped[1].position, 3);
  EXPECT_EQ(r.dropped[1].token, "1");
}

TEST(CudaVisibleTest, OutOfRangeIndexCutsTheList) {
  const Resolution r = ResolveVisibleDevices(FourA100(), Cvd("1,7,0"));
  EXPECT_THAT(Indices(r), ElementsAre(1));
  EXPECT_THAT(Reasons(r), ElementsAre(DropReason::kNoSuchIndex, DropReason::kAfterInvalid));
  EXPECT_THAT(r.dropped[0].detail, HasSubstr("index 7 but only 4 GPUs"));
}

TEST(CudaVisibleTest, HugeIndexIsOutOfRangeNotWrapped) {
  const Resolution r = ResolveVisibleDevices(FourA100(), Cvd("18446744073709551617"));
  EXPECT_THAT(r.visible, IsEmpty());
  EXPECT_THAT(Reasons(r), ElementsAre(DropReason::kNoSuchIndex));
}

TEST(CudaVisibleTest, MinusOneFirstHidesEverything) {
  const Resolution r = ResolveVisibleDevices(FourA100(), Cvd("-1"));
  EXPECT_THAT(r.visible, IsEmpty());
  EXPECT_THAT(Reasons(r), ElementsAre(DropReason::kInvalidToken));
}

TEST(CudaVisibleTest, SignedIndexIsReadAsStrtolReadsIt) {
  Resolution r = ResolveVisibleDevices(FourA100(), Cvd("+1,-0,3"));
  EXPECT_THAT(Indices(r), ElementsAre(1, 0, 3));
  EXPECT_THAT(AllNotes(r), HasSubstr("a sign before the digits"));
  for (const char* value : {"0,-1,2", "0,+ 1,2", "0,++1,2", "0,-,2"}) {
    r = ResolveVisibleDevices(FourA100(), Cvd(value));
    EXPECT_THAT(Indices(r), ElementsAre(0)) << value;
    EXPECT_THAT(Reasons(r), ElementsAre(DropReason::kInvalidToken, DropReason::kAfterInvalid))
        << value;
  }
  r = ResolveVisibleDevices(FourA100(), Cvd("+ 1"));
  EXPECT_THAT(r.dropped[0].detail, HasSubstr("no digit right after its sign"));
}

TEST(CudaVisibleTest, NoDevFilesIsAnOldSlurmValueAndInvalid) {
  const Resolution r = ResolveVisibleDevices(FourA100(), Cvd("NoDevFiles"));
  EXPECT_THAT(r.visible, IsEmpty());
  EXPECT_THAT(Reasons(r), ElementsAre(DropReason::kInvalidToken));
  EXPECT_THAT(r.dropped[0].detail, HasSubstr("older Slurm"));
}

TEST(CudaVisibleTest, ContainerKeywordsAreInvalid) {
  for (const char* keyword : {"void", "none", "all"}) {
    const Resolution r = ResolveVisibleDevices(FourA100(), Cvd(keyword));
    EXPECT_THAT(r.visible, IsEmpty()) << keyword;
    ASSERT_THAT(Reasons(r), ElementsAre(DropReason::kInvalidToken)) << keyword;
    EXPECT_THAT(r.dropped[0].detail, HasSubstr("NVIDIA_VISIBLE_DEVICES value")) << keyword;
  }
}

TEST(CudaVisibleTest, EmptyEntryCutsTheList) {
  const Resolution r = ResolveVisibleDevices(FourA100(), Cvd("0,,1"));
  EXPECT_THAT(Indices(r), ElementsAre(0));
  EXPECT_THAT(Reasons(r), ElementsAre(DropReason::kEmptyEntry, DropReason::kAfterInvalid));
  const Resolution trailing = ResolveVisibleDevices(FourA100(), Cvd("0,1,"));
  EXPECT_THAT(Indices(trailing), ElementsAre(0, 1));
  EXPECT_THAT(Reasons(trailing), ElementsAre(DropReason::kEmptyEntry));
  EXPECT_THAT(ResolveVisibleDevices(FourA100(), Cvd("  ")).visible, IsEmpty());
}

TEST(CudaVisibleTest, DuplicateIndexLeavesNoDevice) {
  const Resolution r = ResolveVisibleDevices(FourA100(), Cvd("0,1,0,2"));
  EXPECT_THAT(r.visible, IsEmpty());
  EXPECT_THAT(Reasons(r), ElementsAre(DropReason::kListVoided, DropReason::kListVoided,
                                      DropReason::kDuplicate, DropReason::kListVoided));
  EXPECT_THAT(r.dropped[2].detail, HasSubstr("first by entry 0"));
  EXPECT_THAT(AllNotes(r), HasSubstr("CUDA_ERROR_INVALID_DEVICE"));
}

TEST(CudaVisibleTest, DuplicateByUuidAndPrefixLeavesNoDevice) {
  const std::vector<Gpu> gpus = FourA100();
  const Resolution r = ResolveVisibleDevices(gpus, Cvd(gpus[1].uuid + ",GPU-11"));
  EXPECT_THAT(r.visible, IsEmpty());
  EXPECT_THAT(Reasons(r), ElementsAre(DropReason::kListVoided, DropReason::kDuplicate));
  EXPECT_EQ(r.dropped[1].uuid, gpus[1].uuid);
}

TEST(CudaVisibleTest, DuplicateAfterTheCutDoesNotCount) {
  const Resolution r = ResolveVisibleDevices(FourA100(), Cvd("0,x,0"));
  EXPECT_THAT(Indices(r), ElementsAre(0));
  EXPECT_THAT(Reasons(r), ElementsAre(DropReason::kInvalidToken, DropReason::kAfterInvalid));
}

TEST(CudaVisibleTest, FullUuidAndUniquePrefix) {
  const std::vector<Gpu> gpus = FourA100();
  const Resolution r = ResolveVisibleDevices(gpus, Cvd(gpus[3].uuid + ",GPU-22"));
  EXPECT_THAT(Indices(r), ElementsAre(3, 2));
  EXPECT_EQ(r.visible[1].token, "GPU-22");
  EXPECT_EQ(r.visible[1].uuid, gpus[2].uuid);
}

TEST(CudaVisibleTest, AmbiguousPrefixCutsTheList) {
  std::vector<Gpu> gpus = FourA100();
  gpus[3].uuid = "GPU-22bbbbbb-1111-2222-3333-444444444443";
  const Resolution r = ResolveVisibleDevices(gpus, Cvd("GPU-00,GPU-22,GPU-11"));
  EXPECT_THAT(Indices(r), ElementsAre(0));
  EXPECT_THAT(Reasons(r), ElementsAre(DropReason::kAmbiguousUuid, DropReason::kAfterInvalid));
  EXPECT_THAT(r.dropped[0].detail, HasSubstr("start of 2 UUIDs"));
}

TEST(CudaVisibleTest, APrefixWithoutDigitsIsInvalid) {
  const Resolution r = ResolveVisibleDevices({MakeGpu(0)}, Cvd("GPU-"));
  EXPECT_THAT(r.visible, IsEmpty());
  EXPECT_THAT(Reasons(r), ElementsAre(DropReason::kInvalidToken));
  EXPECT_THAT(r.dropped[0].detail, HasSubstr("no UUID digits"));
}

// What driver 580 (CUDA 13.0) accepted for a GPU's UUID, bench/gpu/check.sh (f).
TEST(CudaVisibleTest, UuidsMatchIgnoringCaseDashesPrefixKindAndExtraDigits) {
  const std::vector<Gpu> gpus = FourA100();
  for (const std::string& value :
       {std::string("GPU-22AAAAAA-1111-2222-3333-444444444442"),
        std::string("GPU-22aaaaaa111122223333444444444442"), std::string("MIG-22aaaa"),
        gpus[2].uuid + "0", std::string("GPU-2-2")}) {
    const Resolution r = ResolveVisibleDevices(gpus, Cvd(value));
    EXPECT_THAT(Indices(r), ElementsAre(2)) << value;
    EXPECT_THAT(r.dropped, IsEmpty()) << value;
  }
}

TEST(CudaVisibleTest, UnknownUuidCutsTheList) {
  for (const char* value : {"GPU-22aaax,GPU-11", "GPU-99,GPU-11", "gpu-22aa,GPU-11"}) {
    const Resolution r = ResolveVisibleDevices(FourA100(), Cvd(value));
    EXPECT_THAT(r.visible, IsEmpty()) << value;
    EXPECT_THAT(r.dropped.back().reason, DropReason::kAfterInvalid) << value;
  }
}

TEST(CudaVisibleTest, FirstEntryDecidesTheParseMode) {
  const std::vector<Gpu> gpus = FourA100();
  const Resolution uuid_first = ResolveVisibleDevices(gpus, Cvd("GPU-22,1"));
  EXPECT_THAT(Indices(uuid_first), ElementsAre(2));
  EXPECT_THAT(Reasons(uuid_first), ElementsAre(DropReason::kInvalidToken));
  EXPECT_THAT(AllNotes(uuid_first), HasSubstr("undocumented"));

  const Resolution index_first = ResolveVisibleDevices(gpus, Cvd("1,GPU-22,0"));
  EXPECT_THAT(Indices(index_first), ElementsAre(1));
  EXPECT_THAT(Reasons(index_first),
              ElementsAre(DropReason::kInvalidToken, DropReason::kAfterInvalid));
  EXPECT_THAT(index_first.dropped[0].detail, HasSubstr("began with an index"));
}

TEST(CudaVisibleTest, MigUuidNewForm) {
  const std::vector<Gpu> gpus = WithMig();
  const Resolution r = ResolveVisibleDevices(gpus, Cvd(gpus[1].mig_devices[1].uuid));
  ASSERT_EQ(r.visible.size(), 1u);
  EXPECT_EQ(r.visible[0].gpu_index, 1u);
  EXPECT_EQ(r.visible[0].mig_index, 1u);
  EXPECT_EQ(r.visible[0].uuid, gpus[1].mig_devices[1].uuid);
}

TEST(CudaVisibleTest, MigUuidOldForm) {
  const std::vector<Gpu> gpus = WithMig();
  const Resolution r = ResolveVisibleDevices(gpus, Cvd("MIG-" + gpus[1].uuid + "/2/0"));
  ASSERT_EQ(r.visible.size(), 1u);
  EXPECT_EQ(r.visible[0].mig_index, 1u);
  const Resolution prefix = ResolveVisibleDevices(gpus, Cvd("MIG-GPU-11/1/0"));
  ASSERT_EQ(prefix.visible.size(), 1u);
  EXPECT_EQ(prefix.visible[0].mig_index, 0u);
  const Resolution missing = ResolveVisibleDevices(gpus, Cvd("MIG-GPU-11/9/0"));
  EXPECT_THAT(Reasons(missing), ElementsAre(DropReason::kNoSuchUuid));
  const Resolution malformed = ResolveVisibleDevices(gpus, Cvd("MIG-GPU-11/1"));
  EXPECT_THAT(Reasons(malformed), ElementsAre(DropReason::kInvalidToken));
}

TEST(CudaVisibleTest, OneMigInstancePerProcess) {
  const std::vector<Gpu> gpus = WithMig();
  const Resolution r = ResolveVisibleDevices(
      gpus, Cvd(gpus[1].mig_devices[1].uuid + "," + gpus[1].mig_devices[0].uuid));
  ASSERT_EQ(r.visible.size(), 1u);
  EXPECT_EQ(r.visible[0].mig_index, 1u);
  EXPECT_THAT(Reasons(r), ElementsAre(DropReason::kMigLimit));
  EXPECT_EQ(r.dropped[0].position, 1);
  EXPECT_THAT(r.dropped[0].detail, HasSubstr("one MIG instance per process"));
}

TEST(CudaVisibleTest, NoWholeGpuNextToAMigInstance) {
  const std::vector<Gpu> gpus = WithMig();
  const Resolution r =
      ResolveVisibleDevices(gpus, Cvd(gpus[0].uuid + "," + gpus[1].mig_devices[0].uuid));
  ASSERT_EQ(r.visible.size(), 1u);
  EXPECT_EQ(r.visible[0].ordinal, 0);
  EXPECT_EQ(r.visible[0].mig_index, 0u);
  EXPECT_THAT(Reasons(r), ElementsAre(DropReason::kMigLimit));
  EXPECT_EQ(r.dropped[0].uuid, gpus[0].uuid);
  EXPECT_THAT(r.dropped[0].detail, HasSubstr("no whole GPU"));
}

TEST(CudaVisibleTest, UnsetWithMigEnumeratesOnlyTheFirstInstance) {
  const std::vector<Gpu> gpus = WithMig();
  const Resolution r = ResolveVisibleDevices(gpus, {});
  ASSERT_EQ(r.visible.size(), 1u);
  EXPECT_EQ(r.visible[0].uuid, gpus[1].mig_devices[0].uuid);
  EXPECT_THAT(Reasons(r), ElementsAre(DropReason::kMigLimit, DropReason::kMigLimit));
  EXPECT_EQ(r.dropped[0].position, -1);
}

TEST(CudaVisibleTest, MigGpuNamedWholeStandsForItsFirstInstance) {
  const std::vector<Gpu> gpus = WithMig();
  const Resolution r = ResolveVisibleDevices(gpus, Cvd("1"));
  ASSERT_EQ(r.visible.size(), 1u);
  EXPECT_EQ(r.visible[0].mig_index, 0u);
}

TEST(CudaVisibleTest, MigGpuWithoutInstancesGivesNoDevice) {
  const std::vector<Gpu> gpus = WithMig();
  const Resolution r = ResolveVisibleDevices(gpus, Cvd("2,0"));
  EXPECT_THAT(Indices(r), ElementsAre(0));
  EXPECT_THAT(Reasons(r), ElementsAre(DropReason::kNoDevice));
  EXPECT_EQ(r.dropped[0].position, 0);
  std::vector<Gpu> only = {gpus[2]};
  EXPECT_THAT(ResolveVisibleDevices(only, {}).visible, IsEmpty());
}

TEST(CudaVisibleTest, PciBusIdOrderIsAscendingBusId) {
  std::vector<Gpu> gpus = Mixed();
  std::swap(gpus[0].pci_bus_id, gpus[3].pci_bus_id);  // NVML index need not be PCI order
  VisibilityEnv env = Cvd("0,3");
  env.cuda_device_order = "PCI_BUS_ID";
  const Resolution r = ResolveVisibleDevices(gpus, env);
  EXPECT_EQ(r.order, DeviceOrder::kPciBusId);
  EXPECT_THAT(Indices(r), ElementsAre(3, 0));
  EXPECT_FALSE(r.order_is_guess);
}

TEST(CudaVisibleTest, FastestFirstWithIdenticalModelsIsPciOrderAndNoGuess) {
  const Resolution r = ResolveVisibleDevices(FourA100(), Cvd("0,3"));
  EXPECT_THAT(Indices(r), ElementsAre(0, 3));
  EXPECT_FALSE(r.order_is_guess);
}

TEST(CudaVisibleTest, FastestFirstWithMixedModelsIsAGuess) {
  // Guess: A100 (8.0) GPUs 1 and 3 in PCI order, then T4 (7.5), then V100 (7.0).
  const Resolution r = ResolveVisibleDevices(Mixed(), Cvd("0,1,2,3"));
  EXPECT_THAT(Indices(r), ElementsAre(1, 3, 0, 2));
  EXPECT_TRUE(r.order_is_guess);
  EXPECT_THAT(AllNotes(r), HasSubstr("heuristic is not public"));
}

TEST(CudaVisibleTest, FastestFirstGuessUsesCoresAfterCapability) {
  std::vector<Gpu> gpus = {MakeGpu(0, "small", {8, 6}, 2048), MakeGpu(1, "big", {8, 6}, 10496)};
  EXPECT_THAT(Indices(ResolveVisibleDevices(gpus, {})), ElementsAre(1, 0));
}

TEST(CudaVisibleTest, UuidsDoNotDependOnTheGuessedOrder) {
  const std::vector<Gpu> gpus = Mixed();
  const Resolution r = ResolveVisibleDevices(gpus, Cvd(gpus[0].uuid));
  EXPECT_THAT(Indices(r), ElementsAre(0));
  EXPECT_FALSE(r.order_is_guess);
}

TEST(CudaVisibleTest, UnknownOrderValueMeansFastestFirst) {
  VisibilityEnv env = Cvd("0");
  env.cuda_device_order = "pci_bus_id";
  const Resolution r = ResolveVisibleDevices(Mixed(), env);
  EXPECT_EQ(r.order, DeviceOrder::kFastestFirst);
  EXPECT_THAT(Indices(r), ElementsAre(1));
  EXPECT_THAT(AllNotes(r), HasSubstr("not PCI_BUS_ID"));
}

TEST(CudaVisibleTest, KnownFastestFirstOrderIsNoGuess) {
  const std::vector<uint32_t> truth = {2, 0, 3, 1};
  const Resolution r = ResolveVisibleDevicesWithOrder(Mixed(), Cvd("0,1"), truth);
  EXPECT_THAT(Indices(r), ElementsAre(2, 0));
  EXPECT_FALSE(r.order_is_guess);
  EXPECT_TRUE(r.order_from_driver);
  EXPECT_THAT(AllNotes(r), HasSubstr("the order the CUDA driver itself gave"));
  EXPECT_FALSE(ResolveVisibleDevices(Mixed(), Cvd("0,1")).order_from_driver);
}

TEST(CudaVisibleTest, KnownOrderWinsEvenForIdenticalModelsAndFillsInMissingGpus) {
  const std::vector<uint32_t> truth = {3, 1};
  const Resolution r = ResolveVisibleDevicesWithOrder(FourA100(), {}, truth);
  EXPECT_THAT(Indices(r), ElementsAre(3, 1, 0, 2));
  VisibilityEnv pci = Cvd("0");
  pci.cuda_device_order = "PCI_BUS_ID";
  const Resolution by_pci = ResolveVisibleDevicesWithOrder(FourA100(), pci, truth);
  EXPECT_THAT(Indices(by_pci), ElementsAre(0));
  EXPECT_FALSE(by_pci.order_from_driver);
}

TEST(CudaVisibleTest, ContainerNote) {
  VisibilityEnv env = Cvd("0");
  env.nvidia_visible_devices = "2";
  EXPECT_THAT(AllNotes(ResolveVisibleDevices(FourA100(), env)), HasSubstr("container's GPUs"));
}

TEST(CudaVisibleTest, SlurmGlobalIdsCopiedIntoCudaVisibleDevicesAreFlagged) {
  VisibilityEnv env = Cvd("2, 3");
  env.slurm_job_gpus = "2,3";
  env.gpu_device_ordinal = "2,3";
  const std::string notes = AllNotes(ResolveVisibleDevices(FourA100(), env));
  EXPECT_THAT(notes, HasSubstr("equals SLURM_JOB_GPUS"));
  EXPECT_THAT(notes, Not(HasSubstr("GPU_DEVICE_ORDINAL")));

  env.slurm_job_gpus = "0,1";
  env.cuda_visible_devices = "0,1";
  EXPECT_THAT(AllNotes(ResolveVisibleDevices(FourA100(), env)), Not(HasSubstr("equals")));
}

TEST(CudaVisibleTest, SlurmGpuDeviceOrdinalMismatchIsNoted) {
  VisibilityEnv env = Cvd("0");
  env.slurm_step_gpus = "1";
  env.gpu_device_ordinal = "1";
  EXPECT_THAT(AllNotes(ResolveVisibleDevices(FourA100(), env)),
              HasSubstr("GPU_DEVICE_ORDINAL=`1` differs"));
  env.slurm_step_gpus.reset();
  EXPECT_THAT(AllNotes(ResolveVisibleDevices(FourA100(), env)),
              Not(HasSubstr("GPU_DEVICE_ORDINAL")));
}

TEST(CudaVisibleTest, EnvFromMapKeepsUnsetApartFromEmpty) {
  const VisibilityEnv env =
      VisibilityEnvFromMap({{"CUDA_VISIBLE_DEVICES", ""}, {"SLURM_JOB_GPUS", "1"}, {"HOME", "/"}});
  EXPECT_EQ(env.cuda_visible_devices, "");
  EXPECT_EQ(env.slurm_job_gpus, "1");
  EXPECT_FALSE(env.cuda_device_order.has_value());
  EXPECT_FALSE(env.gpu_device_ordinal.has_value());
}

TEST(CudaVisibleTest, EveryReasonHasAName) {
  EXPECT_STREQ(DropReasonName(DropReason::kAfterInvalid), "after an invalid entry");
  EXPECT_STREQ(DropReasonName(DropReason::kListVoided), "voided by a duplicate");
}

TEST(FollowsPciBusOrder, OnlyWhenCudaDeviceOrderSaysSo) {
  VisibilityEnv env;
  EXPECT_FALSE(FollowsPciBusOrder(env)) << "unset: FASTEST_FIRST";
  env.cuda_device_order = "PCI_BUS_ID";
  EXPECT_TRUE(FollowsPciBusOrder(env));
  env.cuda_device_order = "FASTEST_FIRST";
  EXPECT_FALSE(FollowsPciBusOrder(env));
  env.cuda_device_order = "pci_bus_id";
  EXPECT_FALSE(FollowsPciBusOrder(env)) << "CUDA compares the value exactly";
}

}  // namespace
}  // namespace gpupin
