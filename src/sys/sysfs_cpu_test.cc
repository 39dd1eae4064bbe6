#include "sys/sysfs_cpu.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include "testing/temp_dir.h"

namespace gpupin {
namespace {

using ::testing::HasSubstr;
using testing::TempDir;

// A sysfs tree for `cpus`, each {cpu, package, siblings list}.
void WriteCpus(const TempDir& root, const std::string& online,
               const std::vector<std::tuple<int, std::string, std::string>>& cpus,
               const std::string& siblings_file = "core_cpus_list") {
  root.Write("devices/system/cpu/online", online + "\n");
  for (const auto& [cpu, package, siblings] : cpus) {
    std::string dir = "devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/";
    root.Write(dir + "physical_package_id", package + "\n");
    root.Write(dir + siblings_file, siblings + "\n");
  }
}

TEST(SysfsCpuTest, ReadsPackageAndCoreOfEveryOnlineCpu) {
  TempDir root;
  // 1 socket, 2 cores x 2 threads, siblings N and N+2; CPU 4 is offline.
  WriteCpus(root, "0-3", {{0, "0", "0,2"}, {1, "0", "1,3"}, {2, "0", "0,2"}, {3, "0", "1,3"}});
  Result<CpuTopology> topology = ReadCpuTopology(root.path());
  ASSERT_TRUE(topology.ok()) << topology.error().message;
  ASSERT_EQ(topology->size(), 4u);
  EXPECT_EQ((*topology)[2].cpu, 2u);
  EXPECT_EQ((*topology)[2].core, 0u);
  EXPECT_EQ((*topology)[3].core, 1u);
  EXPECT_EQ(*SlurmCoreIndices("2-3", *topology), "0-1");
}

TEST(SysfsCpuTest, OlderKernelsThreadSiblingsList) {
  TempDir root;
  WriteCpus(root, "0-1", {{0, "1", "0-1"}, {1, "1", "0-1"}}, "thread_siblings_list");
  Result<CpuTopology> topology = ReadCpuTopology(root.path());
  ASSERT_TRUE(topology.ok()) << topology.error().message;
  EXPECT_EQ((*topology)[1].package, 1u);
  EXPECT_EQ((*topology)[1].core, 0u);
}

TEST(SysfsCpuTest, UnknownPackageIsOneSocket) {
  TempDir root;
  WriteCpus(root, "0-1", {{0, "-1", "0"}, {1, "-1", "1"}});
  Result<CpuTopology> topology = ReadCpuTopology(root.path());
  ASSERT_TRUE(topology.ok()) << topology.error().message;
  EXPECT_EQ((*topology)[0].package, (*topology)[1].package);
}

TEST(SysfsCpuTest, MissingOrGarbledFilesAreErrorsNamingThem) {
  TempDir root;
  Result<CpuTopology> none = ReadCpuTopology(root.path());
  ASSERT_FALSE(none.ok());
  EXPECT_THAT(none.error().message, HasSubstr(root.path() + "/devices/system/cpu/online"));

  WriteCpus(root, "0-1", {{0, "0", "0"}});  // cpu1 has no topology
  Result<CpuTopology> partial = ReadCpuTopology(root.path());
  ASSERT_FALSE(partial.ok());
  EXPECT_THAT(partial.error().message, HasSubstr("cpu1/topology/physical_package_id"));

  WriteCpus(root, "0", {{0, "zero", "0"}});
  Result<CpuTopology> garbled = ReadCpuTopology(root.path());
  ASSERT_FALSE(garbled.ok());
  EXPECT_THAT(garbled.error().message, HasSubstr("not a number: \"zero\""));
}

TEST(SysfsCpuTest, RootFromTheEnvironment) {
  const char* saved = std::getenv("GPUPIN_SYSFS_ROOT");
  std::string restore = saved ? saved : "";
  unsetenv("GPUPIN_SYSFS_ROOT");
  EXPECT_EQ(SysfsRoot(), "/sys");
  setenv("GPUPIN_SYSFS_ROOT", "/tmp/fake-sys", 1);
  EXPECT_EQ(SysfsRoot(), "/tmp/fake-sys");
  if (saved) {
    setenv("GPUPIN_SYSFS_ROOT", restore.c_str(), 1);
  } else {
    unsetenv("GPUPIN_SYSFS_ROOT");
  }
}

}  // namespace
}  // namespace gpupin
