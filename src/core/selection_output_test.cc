#include "core/selection_output.h"

#include <gtest/gtest.h>

namespace gpupin {
namespace {

Gpu MakeGpu(uint32_t index, std::string name, ComputeCapability capability) {
  Gpu gpu;
  gpu.index = index;
  gpu.uuid = "GPU-" + std::to_string(index) + "aaaaaaa-0000-4000-8000-000000000000";
  gpu.name = std::move(name);
  gpu.compute_capability = capability;
  return gpu;
}

std::vector<Gpu> SameModel() {
  return {MakeGpu(0, "NVIDIA A100", {8, 0}), MakeGpu(1, "NVIDIA A100", {8, 0}),
          MakeGpu(2, "NVIDIA A100", {8, 0}), MakeGpu(3, "NVIDIA A100", {8, 0})};
}

std::vector<Gpu> Mixed() {
  return {MakeGpu(0, "Tesla V100", {7, 0}), MakeGpu(1, "NVIDIA A100", {8, 0}),
          MakeGpu(2, "NVIDIA A100", {8, 0})};
}

const std::string kUuid1 = "GPU-1aaaaaaa-0000-4000-8000-000000000000";
const std::string kUuid2 = "GPU-2aaaaaaa-0000-4000-8000-000000000000";

TEST(SelectionOutputTest, ChildGetsIndicesBecauseItsOrderIsPciBusId) {
  EXPECT_EQ(ChildVisibleDevices({1, 2}, Mixed(), false), "1,2");
  EXPECT_EQ(ChildVisibleDevices({1, 2}, Mixed(), true), kUuid1 + "," + kUuid2);
  EXPECT_EQ(ChildVisibleDevices({3}, SameModel(), false), "3");
}

TEST(SelectionOutputTest, IndicesCountInPciBusOrderWhereNvmlNumbersOtherwise) {
  // NVML's index 0 sits on bus 0xE3, after the other three: under
  // CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA calls it 3.
  std::vector<Gpu> gpus = SameModel();
  gpus[0].pci_bus_id = "00000000:E3:00.0";
  gpus[1].pci_bus_id = "00000000:17:00.0";
  gpus[2].pci_bus_id = "00000000:65:00.0";
  gpus[3].pci_bus_id = "00000000:CA:00.0";
  EXPECT_EQ(ChildVisibleDevices({0}, gpus, false), "3");
  EXPECT_EQ(ChildVisibleDevices({1, 3}, gpus, false), "0,2");
  EXPECT_EQ(PickIds({0, 2}, gpus, false, std::nullopt).value, "3,1");
}

struct PickCase {
  std::string name;
  std::vector<Gpu> gpus;
  bool uuids;
  std::optional<std::string> order;
  std::string value;
  bool note;
};

class PickIdsTest : public ::testing::TestWithParam<PickCase> {};

TEST_P(PickIdsTest, Prints) {
  const PickCase& c = GetParam();
  DeviceIds ids = PickIds({1, 2}, c.gpus, c.uuids, c.order);
  EXPECT_EQ(ids.value, c.value);
  EXPECT_EQ(ids.note.has_value(), c.note);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, PickIdsTest,
    ::testing::Values(
        PickCase{"SameModelIndices", SameModel(), false, std::nullopt, "1,2", false},
        PickCase{"SameModelFastestFirst", SameModel(), false, "FASTEST_FIRST", "1,2", false},
        PickCase{"MixedPciBusId", Mixed(), false, "PCI_BUS_ID", "1,2", false},
        PickCase{"MixedUnsetGetsUuids", Mixed(), false, std::nullopt, kUuid1 + "," + kUuid2, true},
        PickCase{"MixedFastestFirstGetsUuids", Mixed(), false, "FASTEST_FIRST",
                 kUuid1 + "," + kUuid2, true},
        PickCase{"AskedForUuids", SameModel(), true, std::nullopt, kUuid1 + "," + kUuid2, false}),
    [](const auto& test) { return test.param.name; });

TEST(SelectionOutputTest, SameNameDifferentCapabilityCountsAsMixed) {
  std::vector<Gpu> gpus = SameModel();
  gpus[3].compute_capability = ComputeCapability{9, 0};
  DeviceIds ids = PickIds({1}, gpus, false, std::nullopt);
  EXPECT_EQ(ids.value, kUuid1);
  ASSERT_TRUE(ids.note.has_value());
  EXPECT_EQ(*ids.note,
            "printing UUIDs: GPU 0 (NVIDIA A100) and GPU 3 (NVIDIA A100) differ and "
            "CUDA_DEVICE_ORDER is not "
            "PCI_BUS_ID, so CUDA may number them unlike nvidia-smi; set "
            "CUDA_DEVICE_ORDER=PCI_BUS_ID to get indices");
}

}  // namespace
}  // namespace gpupin
