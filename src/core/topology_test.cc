#include "core/topology.h"

#include <gtest/gtest.h>

namespace gpupin {
namespace {

Gpu MakeGpu(std::string bus_id) {
  Gpu gpu;
  gpu.pci_bus_id = std::move(bus_id);
  return gpu;
}

TEST(TopologyTest, NormalizesBusIds) {
  EXPECT_EQ(NormalizePciBusId("00000000:3B:00.0"), "0:3b:00.0");
  EXPECT_EQ(NormalizePciBusId("0000:3b:00.0"), "0:3b:00.0");
  EXPECT_EQ(NormalizePciBusId("00010000:3B:00.0"), "10000:3b:00.0");
  EXPECT_EQ(NormalizePciBusId("3B:00.0"), "3b:00.0");
}

TEST(TopologyTest, ClassesFromLevelsLinksBoardsAndNuma) {
  std::vector<Gpu> gpus = {MakeGpu("00000000:10:00.0"), MakeGpu("00000000:11:00.0"),
                           MakeGpu("00000000:12:00.0"), MakeGpu("00000000:13:00.0"),
                           MakeGpu("00000000:14:00.0"), MakeGpu("00000000:15:00.0")};
  // NVLink listed on one side only, with a 4-digit domain.
  gpus[0].nvlink_peer_bus_ids = {"0000:11:00.0"};
  gpus[2].board_id = 5;
  gpus[3].board_id = 5;
  gpus[4].numa_node = 1;
  gpus[5].numa_node = 1;
  std::vector<std::vector<std::optional<TopologyLevel>>> levels(
      6, std::vector<std::optional<TopologyLevel>>(6));
  levels[0][2] = TopologyLevel::kMultiple;  // one direction only
  levels[1][2] = TopologyLevel::kNode;
  levels[2][1] = TopologyLevel::kSystem;  // the closer answer wins
  levels[0][3] = TopologyLevel::kInternal;
  Topology topology(gpus, levels);
  EXPECT_EQ(topology.Between(0, 1), Closeness::kNvLink);
  EXPECT_EQ(topology.Between(1, 0), Closeness::kNvLink);
  EXPECT_EQ(topology.Between(2, 3), Closeness::kSameBoard);
  EXPECT_EQ(topology.Between(0, 3), Closeness::kSameBoard);
  EXPECT_EQ(topology.Between(2, 0), Closeness::kPcieSwitch);
  EXPECT_EQ(topology.Between(1, 2), Closeness::kNumaNode);
  EXPECT_EQ(topology.Between(4, 5), Closeness::kNumaNode);
  EXPECT_EQ(topology.Between(1, 4), Closeness::kSystem);
}

TEST(TopologyTest, UnknownIsSystem) {
  std::vector<Gpu> gpus = {MakeGpu("00000000:10:00.0"), MakeGpu("")};
  gpus[0].nvlink_peer_bus_ids = {""};  // an empty bus id links nothing
  Topology topology(gpus, {});
  EXPECT_EQ(topology.size(), 2u);
  EXPECT_EQ(topology.Between(0, 1), Closeness::kSystem);
}

}  // namespace
}  // namespace gpupin
