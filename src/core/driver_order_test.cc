#include "core/driver_order.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>

#include "testing/probe_results.h"

namespace gpupin {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

constexpr char kA[] = "GPU-aaaaaaaa-0000-0000-0000-000000000000";
constexpr char kB[] = "GPU-bbbbbbbb-0000-0000-0000-000000000000";
constexpr char kC[] = "GPU-cccccccc-0000-0000-0000-000000000000";
constexpr char kMigOfC[] = "MIG-cccccccc-1111-1111-1111-000000000000";
constexpr char kBoot[] = "0f6c8a1e-2b3d-4e5f-8a9b-0c1d2e3f4a5b";

std::vector<Gpu> Gpus(std::vector<std::string> uuids) {
  std::vector<Gpu> gpus;
  for (size_t i = 0; i < uuids.size(); ++i) {
    Gpu gpu;
    gpu.index = static_cast<uint32_t>(i);
    gpu.uuid = uuids[i];
    gpus.push_back(gpu);
  }
  return gpus;
}

TEST(DriverOrderTest, KeyIsTheSortedSetOfReadableUuids) {
  std::vector<Gpu> gpus = Gpus({kC, kA, "", kB});
  EXPECT_THAT(MachineKey(kBoot, "535.183.01", gpus).gpu_uuids, ElementsAre(kA, kB, kC));
  // The order NVML lists the cards in is no part of the key.
  EXPECT_EQ(MachineKey(kBoot, "535.183.01", gpus),
            MachineKey(kBoot, "535.183.01", Gpus({kA, kB, kC})));
}

TEST(DriverOrderTest, KeyDiffersByBootDriverOrCards) {
  const DriverOrderKey key = MachineKey(kBoot, "535.183.01", Gpus({kA, kB, kC}));
  EXPECT_NE(key, MachineKey("another-boot", "535.183.01", Gpus({kA, kB, kC})));
  EXPECT_NE(key, MachineKey(kBoot, "550.54.14", Gpus({kA, kB, kC})));
  EXPECT_NE(key, MachineKey(kBoot, "535.183.01", Gpus({kA, kB})));
  EXPECT_NE(key, MachineKey(kBoot, "535.183.01", Gpus({kA, kB, kMigOfC})));
}

TEST(DriverOrderTest, ProbeGivesTheCardsInTheDriversOrder) {
  std::vector<Gpu> gpus = Gpus({kA, kB, kC});
  auto order = DriverOrderFromProbe(MachineKey(kBoot, "535", gpus),
                                    testing::DriverListing({kB, kC, kA}), gpus);
  ASSERT_TRUE(order);
  EXPECT_THAT(order->fastest_first_uuids, ElementsAre(kB, kC, kA));
  EXPECT_THAT(FastestFirstIndices(*order, gpus), ElementsAre(1u, 2u, 0u));
}

TEST(DriverOrderTest, MigInstancesStandForTheirCardOnce) {
  std::vector<Gpu> gpus = Gpus({kA, kB, kC});
  MigDevice mig;
  mig.uuid = kMigOfC;
  gpus[2].mig_devices = {mig, mig};
  // The driver formats every UUID as GPU-, whatever the device is.
  std::string mig_as_driver_says = "GPU-" + std::string(kMigOfC).substr(4);
  auto order =
      DriverOrderFromProbe(MachineKey(kBoot, "535", gpus),
                           testing::DriverListing({mig_as_driver_says, kMigOfC, kA, kB}), gpus);
  ASSERT_TRUE(order);
  EXPECT_THAT(order->fastest_first_uuids, ElementsAre(kC, kA, kB));
}

TEST(DriverOrderTest, NoOrderFromAListingThatLeavesAWholeGpuOut) {
  // C is in MIG mode: the driver lists its first instance and, as CUDA does
  // then, neither A nor B. That numbers part of the machine only.
  std::vector<Gpu> gpus = Gpus({kA, kB, kC});
  MigDevice mig;
  mig.uuid = kMigOfC;
  gpus[2].mig_enabled = true;
  gpus[2].mig_devices = {mig};
  const DriverOrderKey key = MachineKey(kBoot, "535", gpus);
  const ProbeResult listing = testing::DriverListing({kMigOfC});
  EXPECT_FALSE(DriverOrderFromProbe(key, listing, gpus));
  EXPECT_EQ(FailureFromProbe(key, listing, gpus, 42).reason,
            std::string("the CUDA driver did not list GPU 0 (") + kA +
                "): CUDA leaves whole GPUs out where it lists a MIG instance");
  // A GPU in MIG mode may be left out; a lost one too.
  gpus[1].health_error = "reading memory failed (NVML: GPU is lost)";
  EXPECT_TRUE(DriverOrderFromProbe(key, testing::DriverListing({kA}), gpus));
}

TEST(DriverOrderTest, AKeptOrderMustListEveryCardTheDriverLists) {
  std::vector<Gpu> gpus = Gpus({kA, kB, kC});
  DriverOrder order{MachineKey(kBoot, "535", gpus), {kB, kA, kC}};
  EXPECT_EQ(OrderGap(order, gpus), std::nullopt);
  order.fastest_first_uuids = {kB, kA};
  EXPECT_EQ(OrderGap(order, gpus), std::string("it leaves out GPU 2 (") + kC + ")");
  order.fastest_first_uuids = {};
  EXPECT_EQ(OrderGap(order, gpus), std::string("it leaves out GPU 0 (") + kA + ")");
  // A card in MIG mode, or one that does not answer, is no CUDA device.
  order.fastest_first_uuids = {kB};
  gpus[0].health_error = "GPU is lost";
  gpus[2].mig_enabled = true;
  EXPECT_EQ(OrderGap(order, gpus), std::nullopt);
}

TEST(DriverOrderTest, NoOrderFromAFailedProbeOrAnotherMachinesDevice) {
  std::vector<Gpu> gpus = Gpus({kA, kB});
  const DriverOrderKey key = MachineKey(kBoot, "535", gpus);
  ProbeResult failed = testing::DriverListing({kA, kB});
  failed.status = ProbeStatus::kTimedOut;
  EXPECT_FALSE(DriverOrderFromProbe(key, failed, gpus));
  EXPECT_FALSE(DriverOrderFromProbe(key, testing::DriverListing({kA, kC}), gpus));
  ProbeResult unnamed = testing::DriverListing({kA, kB});
  unnamed.devices[1].uuid.reset();
  EXPECT_FALSE(DriverOrderFromProbe(key, unnamed, gpus));
}

// The reader's message for `text`, or "accepted".
std::string ReadError(std::string_view text) {
  Result<KeptDriverOrder> read = KeptDriverOrderFromJson(text);
  return read.ok() ? std::string("accepted") : read.error().message;
}

constexpr char kKeyFields[] =
    R"({"format_version":2,"boot_id":"b","driver_version":"d","gpu_uuids":["GPU-a"],)";

TEST(DriverOrderTest, JsonRoundTrips) {
  std::vector<Gpu> gpus = Gpus({kA, kB, kC});
  const KeptDriverOrder order = DriverOrder{MachineKey(kBoot, "535.183.01", gpus), {kB, kC, kA}};
  Result<KeptDriverOrder> read = KeptDriverOrderFromJson(KeptDriverOrderToJson(order));
  ASSERT_TRUE(read.ok()) << read.error().message;
  EXPECT_EQ(*read, order);
}

TEST(DriverOrderTest, KeptFailureRoundTrips) {
  std::vector<Gpu> gpus = Gpus({kA, kB, kC});
  const KeptDriverOrder failure = DriverOrderFailure{
      MachineKey(kBoot, "535.183.01", gpus), 1764952800123, "the CUDA driver did not answer"};
  const std::string written = KeptDriverOrderToJson(failure);
  EXPECT_THAT(written, HasSubstr(R"("unix_ms": 1764952800123)"));
  EXPECT_THAT(written, Not(HasSubstr("fastest_first_uuids")));
  Result<KeptDriverOrder> read = KeptDriverOrderFromJson(written);
  ASSERT_TRUE(read.ok()) << read.error().message;
  EXPECT_EQ(*read, failure);
  EXPECT_EQ(KeyOf(*read), MachineKey(kBoot, "535.183.01", gpus));
}

TEST(DriverOrderTest, ReaderSortsTheKeysUuids) {
  Result<KeptDriverOrder> read = KeptDriverOrderFromJson(
      R"({"format_version":2,"boot_id":"b","driver_version":"d",)"
      R"("gpu_uuids":["GPU-b","GPU-a","GPU-b"],"fastest_first_uuids":["GPU-b"]})");
  ASSERT_TRUE(read.ok()) << read.error().message;
  EXPECT_THAT(KeyOf(*read).gpu_uuids, ElementsAre("GPU-a", "GPU-b"));
}

TEST(DriverOrderTest, ReaderRejectsWhatNoProbeWrites) {
  EXPECT_THAT(ReadError("{"), HasSubstr("not valid JSON"));
  // Version 1 had no failures; it is read as any unknown version.
  EXPECT_THAT(ReadError(R"({"format_version":1,"boot_id":"b","driver_version":"d",)"
                        R"("gpu_uuids":["GPU-a"],"fastest_first_uuids":["GPU-a"]})"),
              HasSubstr("reads only version 2"));
  EXPECT_THAT(
      ReadError(R"({"format_version":2,"boot_id":"b","driver_version":"d","gpu_uuids":["GPU-a"]})"),
      HasSubstr("fastest_first_uuids"));
  // An order naming a card outside the key, or one twice.
  EXPECT_THAT(ReadError(std::string(kKeyFields) + R"("fastest_first_uuids":["GPU-z"]})"),
              HasSubstr("at most once"));
  EXPECT_THAT(ReadError(std::string(kKeyFields) + R"("fastest_first_uuids":["GPU-a","GPU-a"]})"),
              HasSubstr("at most once"));
  EXPECT_THAT(ReadError(R"({"format_version":2,"boot_id":"b","driver_version":"d",)"
                        R"("gpu_uuids":["GPU a"],"fastest_first_uuids":[]})"),
              HasSubstr("gpu_uuids"));
}

TEST(DriverOrderTest, ReaderRejectsAMalformedFailure) {
  const std::string key = kKeyFields;
  EXPECT_EQ(ReadError(key + R"("probe_failed":{"unix_ms":5,"reason":"hung"}})"), "accepted");
  // An order and a failure at once: which one holds?
  EXPECT_THAT(ReadError(key + R"("fastest_first_uuids":["GPU-a"],)"
                              R"("probe_failed":{"unix_ms":5,"reason":"hung"}})"),
              HasSubstr("cannot stand beside fastest_first_uuids"));
  EXPECT_THAT(ReadError(key + R"("probe_failed":"hung"})"), HasSubstr("probe_failed"));
  EXPECT_THAT(ReadError(key + R"("probe_failed":{"reason":"hung"}})"),
              HasSubstr("probe_failed.unix_ms' is missing"));
  EXPECT_THAT(ReadError(key + R"("probe_failed":{"unix_ms":-5,"reason":"hung"}})"),
              HasSubstr("probe_failed.unix_ms"));
  EXPECT_THAT(ReadError(key + R"("probe_failed":{"unix_ms":5.5,"reason":"hung"}})"),
              HasSubstr("probe_failed.unix_ms"));
  EXPECT_THAT(ReadError(key + R"("probe_failed":{"unix_ms":5,"reason":7}})"),
              HasSubstr("probe_failed.reason"));
  // A reason that would rewrite the reader's terminal, or run on for pages.
  EXPECT_THAT(ReadError(key + R"("probe_failed":{"unix_ms":5,"reason":"a\u001b[2Jb"}})"),
              HasSubstr("one printable line"));
  EXPECT_THAT(ReadError(key + R"("probe_failed":{"unix_ms":5,"reason":"a\nb"}})"),
              HasSubstr("one printable line"));
  EXPECT_THAT(ReadError(key + R"("probe_failed":{"unix_ms":5,"reason":")" + std::string(1025, 'x') +
                        R"("}})"),
              HasSubstr("one printable line"));
  // A failure is still checked against its key like an order.
  EXPECT_THAT(ReadError(R"({"format_version":2,"boot_id":"b","driver_version":"d",)"
                        R"("gpu_uuids":["GPU a"],"probe_failed":{"unix_ms":5,"reason":"hung"}})"),
              HasSubstr("gpu_uuids"));
}

TEST(DriverOrderTest, AFailureStandsForTheRetryInterval) {
  const DriverOrderFailure failure{{}, 1'000'000, "hung"};
  EXPECT_TRUE(FailureStands(failure, 1'000'000));
  EXPECT_TRUE(FailureStands(failure, 1'000'000 + kProbeRetryAfterMs - 1));
  EXPECT_FALSE(FailureStands(failure, 1'000'000 + kProbeRetryAfterMs));
  EXPECT_EQ(kProbeRetryAfterMs, 10 * 60 * 1000);
  // Dated after now: the clock went back, and the record is not believed.
  EXPECT_FALSE(FailureStands(failure, 999'999));
  EXPECT_FALSE(FailureStands({{}, std::numeric_limits<int64_t>::max(), "hung"}, 0));
  EXPECT_FALSE(FailureStands({{}, 0, "hung"}, std::numeric_limits<int64_t>::max()));
}

TEST(DriverOrderTest, FailureFromProbeSaysWhyInOnePrintableLine) {
  std::vector<Gpu> gpus = Gpus({kA, kB});
  const DriverOrderKey key = MachineKey(kBoot, "535", gpus);
  ProbeResult hung;
  hung.status = ProbeStatus::kTimedOut;
  hung.detail = "the CUDA driver did not answer within 5000 ms (stuck in cuInit)\n\x1b[2J" +
                std::string(1000, 'x');
  const DriverOrderFailure failure = FailureFromProbe(key, hung, gpus, 42);
  EXPECT_EQ(failure.key, key);
  EXPECT_EQ(failure.failed_unix_ms, 42);
  EXPECT_THAT(failure.reason,
              StartsWith("the CUDA driver did not answer within 5000 ms (stuck in cuInit)"));
  EXPECT_THAT(failure.reason, Not(HasSubstr("\n")));
  EXPECT_THAT(failure.reason, Not(HasSubstr("\x1b")));
  EXPECT_LE(failure.reason.size(), 403u);
  // What the writer keeps, the reader takes.
  EXPECT_TRUE(KeptDriverOrderFromJson(KeptDriverOrderToJson(failure)).ok());
  EXPECT_THAT(FailureFromProbe(key, testing::DriverListing({kA, kC}), gpus, 42).reason,
              HasSubstr("listed a device NVML does not"));
}

TEST(DriverOrderTest, OnlyAMissingLibcudaIsNotKept) {
  ProbeResult probe;
  for (ProbeStatus status : {ProbeStatus::kNoDevice, ProbeStatus::kInitFailed,
                             ProbeStatus::kTimedOut, ProbeStatus::kCrashed, ProbeStatus::kOk}) {
    probe.status = status;
    EXPECT_TRUE(KeepsFailure(probe)) << static_cast<int>(status);
  }
  probe.status = ProbeStatus::kUnavailable;
  EXPECT_FALSE(KeepsFailure(probe));
}

}  // namespace
}  // namespace gpupin
