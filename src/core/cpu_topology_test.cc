#include "core/cpu_topology.h"

#include <gtest/gtest.h>

namespace gpupin {
namespace {

// `sockets` x `cores` x `threads`, numbered the usual Linux way: the first
// thread of every core first (socket by socket), then the second threads in
// the same order, so core c's siblings are c and c + sockets * cores.
CpuTopology SiblingsFar(uint32_t sockets, uint32_t cores, uint32_t threads) {
  CpuTopology topology;
  const uint32_t total_cores = sockets * cores;
  for (uint32_t thread = 0; thread < threads; ++thread) {
    for (uint32_t core = 0; core < total_cores; ++core) {
      topology.push_back({thread * total_cores + core, core / cores, core});
    }
  }
  return topology;
}

// The other common numbering: a core's threads adjacent (0,1 = one core).
CpuTopology SiblingsAdjacent(uint32_t sockets, uint32_t cores, uint32_t threads) {
  CpuTopology topology;
  for (uint32_t cpu = 0; cpu < sockets * cores * threads; ++cpu) {
    uint32_t core = cpu / threads;
    topology.push_back({cpu, core / cores, 100 + core});
  }
  return topology;
}

std::string Indices(std::string_view cpus, const CpuTopology& topology) {
  Result<std::string> indices = SlurmCoreIndices(cpus, topology);
  return indices.ok() ? *indices : "error: " + indices.error().message;
}

TEST(CpuTopologyTest, WithoutHyperthreadsCoreIndicesAreCpuIds) {
  CpuTopology topology = SiblingsFar(2, 32, 1);
  EXPECT_EQ(Indices("0-31", topology), "0-31");
  EXPECT_EQ(Indices("32-63", topology), "32-63");
  EXPECT_EQ(Indices("5,40", topology), "5,40");
}

TEST(CpuTopologyTest, TwoWaySmtWithSiblingsNAndNPlusCores) {
  // 2 sockets x 16 cores x 2 threads: socket 0 is CPUs 0-15 and 32-47.
  CpuTopology topology = SiblingsFar(2, 16, 2);
  EXPECT_EQ(Indices("0-15,32-47", topology), "0-15");
  EXPECT_EQ(Indices("16-31,48-63", topology), "16-31");
  EXPECT_EQ(Indices("0-63", topology), "0-31");
}

TEST(CpuTopologyTest, SiblingsAdjacent) {
  CpuTopology topology = SiblingsAdjacent(2, 4, 2);  // socket 0: CPUs 0-7, cores 0-3
  EXPECT_EQ(Indices("0-7", topology), "0-3");
  EXPECT_EQ(Indices("8-15", topology), "4-7");
  EXPECT_EQ(Indices("0,1", topology), "0");
}

TEST(CpuTopologyTest, ACoreCountsWhenAnyOfItsThreadsIsListed) {
  CpuTopology topology = SiblingsFar(2, 16, 2);
  EXPECT_EQ(Indices("0-15", topology), "0-15");   // first threads of socket 0
  EXPECT_EQ(Indices("35,51", topology), "3,19");  // second threads of cores 3 and 19
  EXPECT_EQ(Indices("3,35", topology), "3");
}

TEST(CpuTopologyTest, SocketsInOrderOfTheirCpusNotOfTheirIds) {
  // Package ids 7 and 2, listed out of order: Slurm (hwloc) numbers the
  // socket holding CPU 0 first.
  CpuTopology topology = {{2, 2, 2}, {0, 7, 0}, {3, 2, 3}, {1, 7, 1}};
  EXPECT_EQ(Indices("0-1", topology), "0-1");
  EXPECT_EQ(Indices("2-3", topology), "2-3");
  // Cores within a socket by their lowest CPU, whatever their ids.
  CpuTopology reversed = {{0, 0, 9}, {1, 0, 8}, {2, 0, 7}};
  EXPECT_EQ(Indices("2", reversed), "2");
}

TEST(CpuTopologyTest, CpusTheMachineLacksAreAnError) {
  CpuTopology topology = SiblingsFar(1, 2, 1);  // CPUs 0-1
  EXPECT_EQ(Indices("0-31", topology), "error: CPUs 2-31 of \"0-31\" not on this machine");
  EXPECT_EQ(Indices("1,5", topology), "error: CPU 5 of \"1,5\" not on this machine");
  EXPECT_EQ(Indices("0-", topology), "error: malformed CPU list \"0-\"");
  EXPECT_EQ(Indices("", topology), "error: malformed CPU list \"\"");
  EXPECT_EQ(Indices("0", {}), "error: CPU 0 of \"0\" not on this machine");
}

}  // namespace
}  // namespace gpupin
