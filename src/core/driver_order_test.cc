#include "core/driver_order.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "testing/probe_results.h"

namespace gpupin {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

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

TEST(DriverOrderTest, JsonRoundTrips) {
  std::vector<Gpu> gpus = Gpus({kA, kB, kC});
  DriverOrder order{MachineKey(kBoot, "535.183.01", gpus), {kB, kC, kA}};
  Result<DriverOrder> read = DriverOrderFromJson(DriverOrderToJson(order));
  ASSERT_TRUE(read.ok()) << read.error().message;
  EXPECT_EQ(read->key, order.key);
  EXPECT_EQ(read->fastest_first_uuids, order.fastest_first_uuids);
}

TEST(DriverOrderTest, ReaderSortsTheKeysUuids) {
  Result<DriverOrder> read = DriverOrderFromJson(
      R"({"format_version":1,"boot_id":"b","driver_version":"d",)"
      R"("gpu_uuids":["GPU-b","GPU-a","GPU-b"],"fastest_first_uuids":["GPU-b"]})");
  ASSERT_TRUE(read.ok()) << read.error().message;
  EXPECT_THAT(read->key.gpu_uuids, ElementsAre("GPU-a", "GPU-b"));
}

TEST(DriverOrderTest, ReaderRejectsWhatNoProbeWrites) {
  auto error = [](std::string_view text) {
    Result<DriverOrder> read = DriverOrderFromJson(text);
    return read.ok() ? std::string("accepted") : read.error().message;
  };
  EXPECT_THAT(error("{"), HasSubstr("not valid JSON"));
  EXPECT_THAT(error(R"({"format_version":2})"), HasSubstr("format_version"));
  EXPECT_THAT(
      error(R"({"format_version":1,"boot_id":"b","driver_version":"d","gpu_uuids":["GPU-a"]})"),
      HasSubstr("fastest_first_uuids"));
  // An order naming a card outside the key, or one twice.
  EXPECT_THAT(error(R"({"format_version":1,"boot_id":"b","driver_version":"d",)"
                    R"("gpu_uuids":["GPU-a"],"fastest_first_uuids":["GPU-z"]})"),
              HasSubstr("at most once"));
  EXPECT_THAT(error(R"({"format_version":1,"boot_id":"b","driver_version":"d",)"
                    R"("gpu_uuids":["GPU-a"],"fastest_first_uuids":["GPU-a","GPU-a"]})"),
              HasSubstr("at most once"));
  EXPECT_THAT(error(R"({"format_version":1,"boot_id":"b","driver_version":"d",)"
                    R"("gpu_uuids":["GPU a"],"fastest_first_uuids":[]})"),
              HasSubstr("gpu_uuids"));
}

}  // namespace
}  // namespace gpupin
