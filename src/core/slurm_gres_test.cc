#include "core/slurm_gres.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gpupin {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

Gpu MakeGpu(uint32_t index, uint32_t minor, std::string name, std::string affinity = "0-15,32-47") {
  Gpu gpu;
  gpu.index = index;
  gpu.minor_number = minor;
  gpu.name = std::move(name);
  gpu.uuid = "GPU-" + std::to_string(index);
  gpu.pci_bus_id = "00000000:0" + std::to_string(index) + ":00.0";
  gpu.cpu_affinity = std::move(affinity);
  return gpu;
}

// 2 sockets x 16 cores x 2 threads, core c's threads are c and c + 32.
CpuTopology Hyperthreaded() {
  CpuTopology topology;
  for (uint32_t cpu = 0; cpu < 64; ++cpu) topology.push_back({cpu, (cpu % 32) / 16, cpu % 32});
  return topology;
}

TEST(SlurmGresTest, TypeIsSlurmsAutoDetectSpelling) {
  EXPECT_EQ(SlurmGpuType("NVIDIA A100-SXM4-40GB"), "nvidia_a100-sxm4-40gb");
  EXPECT_EQ(SlurmGpuType("NVIDIA GeForce RTX 3090"), "nvidia_geforce_rtx_3090");
}

TEST(SlurmGresTest, LinesInPciOrderWithSlurmCoreIndicesAndCounts) {
  Inventory inventory;
  inventory.gpus = {MakeGpu(0, 0, "NVIDIA L40S"), MakeGpu(1, 1, "NVIDIA L40S"),
                    MakeGpu(2, 2, "NVIDIA A2", "16-31,48-63")};
  std::string conf = RenderGresConf(PlanGresConf(inventory, "node7", Hyperthreaded()));
  EXPECT_THAT(conf, HasSubstr("#   NodeName=node7 Gres=gpu:nvidia_a2:1,gpu:nvidia_l40s:2\n"));
  EXPECT_THAT(conf, HasSubstr("Name=gpu Type=nvidia_l40s File=/dev/nvidia0 Cores=0-15  # NVML "
                              "index 0, 00000000:00:00.0, GPU-0\n"
                              "Name=gpu Type=nvidia_l40s File=/dev/nvidia1 Cores=0-15  # NVML "
                              "index 1, 00000000:01:00.0, GPU-1\n"
                              "Name=gpu Type=nvidia_a2 File=/dev/nvidia2 Cores=16-31  # NVML "
                              "index 2, 00000000:02:00.0, GPU-2\n"));
  EXPECT_THAT(conf, HasSubstr("# Keep the lines in this (PCI bus) order"));
  EXPECT_THAT(conf, Not(HasSubstr("not in PCI bus order")));
  EXPECT_THAT(conf, Not(HasSubstr("left out")));
}

// Slurm numbers GPUs by their line: in minor order, Slurm's GPU 0 would be
// /dev/nvidia0 = NVML (and CUDA PCI_BUS_ID) GPU 2.
TEST(SlurmGresTest, MinorsOutOfPciOrderKeepPciOrderAndSaySo) {
  Inventory inventory;
  inventory.gpus = {MakeGpu(0, 2, "NVIDIA L40S"), MakeGpu(1, 3, "NVIDIA L40S"),
                    MakeGpu(2, 0, "NVIDIA L40S"), MakeGpu(3, 1, "NVIDIA L40S")};
  std::string conf = RenderGresConf(PlanGresConf(inventory, "node7", Hyperthreaded()));
  size_t first = conf.find("File=/dev/nvidia2 Cores=0-15  # NVML index 0");
  size_t second = conf.find("File=/dev/nvidia3 Cores=0-15  # NVML index 1");
  size_t third = conf.find("File=/dev/nvidia0 Cores=0-15  # NVML index 2");
  size_t fourth = conf.find("File=/dev/nvidia1 Cores=0-15  # NVML index 3");
  ASSERT_NE(fourth, std::string::npos) << conf;
  EXPECT_LT(first, second);
  EXPECT_LT(second, third);
  EXPECT_LT(third, fourth);
  EXPECT_THAT(conf, HasSubstr("# The /dev/nvidiaN numbers are not in PCI bus order here: do not "
                              "sort the lines by File=.\n"));
}

TEST(SlurmGresTest, GpusLeftOutAreListedAndShiftSlurmsNumbers) {
  Inventory inventory;
  inventory.gpus = {MakeGpu(0, 0, "NVIDIA L40S"), MakeGpu(1, 1, "NVIDIA L40S"),
                    MakeGpu(2, 2, "NVIDIA L40S")};
  inventory.gpus[1].health_error = "GPU is lost";
  std::string conf = RenderGresConf(PlanGresConf(inventory, "node7", Hyperthreaded()));
  EXPECT_THAT(conf, HasSubstr("# GPU 1 (GPU-1) left out: GPU is lost\n"));
  EXPECT_THAT(conf, HasSubstr("# A GPU is left out (below), so Slurm's numbers for the GPUs "
                              "after GPU 1 differ from NVML's"));
  EXPECT_THAT(conf, Not(HasSubstr("/dev/nvidia1")));
  EXPECT_THAT(conf, HasSubstr("#   NodeName=node7 Gres=gpu:nvidia_l40s:2\n"));

  inventory.gpus.push_back(MakeGpu(3, 3, "NVIDIA L40S"));
  inventory.gpus[0].health_error = "GPU is lost";
  conf = RenderGresConf(PlanGresConf(inventory, "node7", Hyperthreaded()));
  EXPECT_THAT(conf, HasSubstr("# GPUs are left out (below), so Slurm's numbers for the GPUs "
                              "after GPU 0 differ"));
  inventory.gpus.pop_back();
  inventory.gpus[0].health_error.reset();

  // The last GPU left out shifts nothing.
  inventory.gpus[1].health_error.reset();
  inventory.gpus[2].minor_number.reset();
  conf = RenderGresConf(PlanGresConf(inventory, "node7", Hyperthreaded()));
  EXPECT_THAT(conf, HasSubstr("# GPU 2 (GPU-2) left out: NVML gives no minor number\n"));
  EXPECT_THAT(conf, Not(HasSubstr("differ from NVML's")));
}

// Wrong core numbers would bind jobs to the wrong socket: none is better.
TEST(SlurmGresTest, WithoutTheCpuTopologyCoresAreLeftOut) {
  Inventory inventory;
  inventory.gpus = {MakeGpu(0, 0, "NVIDIA L40S")};
  std::string conf = RenderGresConf(PlanGresConf(
      inventory, "node7",
      MakeError(ExitCode::kError, "/sys/devices/system/cpu/online: No such file or directory")));
  EXPECT_THAT(conf, HasSubstr("# Cores= left out: cannot read the CPU topology: "
                              "/sys/devices/system/cpu/online: No such file or directory\n"));
  EXPECT_THAT(conf, HasSubstr("Name=gpu Type=nvidia_l40s File=/dev/nvidia0  # NVML index 0"));
}

TEST(SlurmGresTest, AffinityNamingCpusTheMachineLacksLeavesCoresOut) {
  Inventory inventory;
  inventory.gpus = {MakeGpu(0, 0, "NVIDIA L40S", "0-1"), MakeGpu(1, 1, "NVIDIA L40S", "0-31")};
  CpuTopology two_cpus = {{0, 0, 0}, {1, 0, 1}};
  std::string conf = RenderGresConf(PlanGresConf(inventory, "node7", two_cpus));
  EXPECT_THAT(conf, HasSubstr("File=/dev/nvidia0 Cores=0-1  # NVML index 0"));
  EXPECT_THAT(conf, HasSubstr("# Cores= left out for GPU 1: NVML's CPU affinity: CPUs 2-31 of "
                              "\"0-31\" not on this machine\n"
                              "Name=gpu Type=nvidia_l40s File=/dev/nvidia1  # NVML index 1"));
  EXPECT_THAT(conf, Not(HasSubstr("GPUPIN_SYSFS_ROOT")));

  // The simulated server's CPUs are usually not this machine's: say how to
  // describe them.
  inventory.simulated = true;
  conf = RenderGresConf(PlanGresConf(inventory, "node7", two_cpus));
  EXPECT_THAT(conf, HasSubstr("GPUPIN_SYSFS_ROOT can name a sysfs tree with them"));
}

TEST(SlurmGresTest, GpuWithoutAffinityHasNoCores) {
  Inventory inventory;
  inventory.gpus = {MakeGpu(0, 0, "NVIDIA L40S")};
  inventory.gpus[0].cpu_affinity.reset();
  std::string conf = RenderGresConf(PlanGresConf(inventory, "node7", Hyperthreaded()));
  EXPECT_THAT(conf, HasSubstr("# Cores= left out for GPU 0: NVML gives no CPU affinity for it\n"
                              "Name=gpu Type=nvidia_l40s File=/dev/nvidia0  # NVML index 0"));
}

TEST(SlurmGresTest, ACardInMigModeIsLeftOutAsAWholeCard) {
  Inventory inventory;
  inventory.gpus = {MakeGpu(0, 0, "NVIDIA A100-SXM4-40GB"), MakeGpu(1, 1, "NVIDIA A100-SXM4-40GB")};
  inventory.gpus[0].mig_enabled = true;
  std::string conf = RenderGresConf(PlanGresConf(inventory, "node7", Hyperthreaded()));
  EXPECT_THAT(conf, HasSubstr("# GPU 0 (GPU-0) left out: in MIG mode: give Slurm its MIG devices"));
  EXPECT_THAT(conf, Not(HasSubstr("File=/dev/nvidia0")));
  EXPECT_THAT(conf, HasSubstr("Gres=gpu:nvidia_a100-sxm4-40gb:1\n"));
}

TEST(SlurmGresTest, SeveralModelsSayHowSlurmNumbersTypedGpus) {
  Inventory inventory;
  inventory.gpus = {MakeGpu(0, 0, "NVIDIA L40S"), MakeGpu(1, 1, "NVIDIA L40S")};
  EXPECT_THAT(RenderGresConf(PlanGresConf(inventory, "node7", Hyperthreaded())),
              Not(HasSubstr("Several models")));
  inventory.gpus[1].name = "NVIDIA RTX A6000";
  EXPECT_THAT(RenderGresConf(PlanGresConf(inventory, "node7", Hyperthreaded())),
              HasSubstr("Several models: Slurm may number typed GPUs type by type"));
}

TEST(SlurmGresTest, AGpuLeftOutWithoutAUuidIsNamedByIndexAlone) {
  Inventory inventory;
  inventory.gpus = {MakeGpu(0, 0, "NVIDIA L40S"), MakeGpu(1, 1, "NVIDIA L40S")};
  inventory.gpus[1].uuid.clear();
  inventory.gpus[1].health_error = "reading the UUID failed (NVML: GPU is lost)";
  std::string conf = RenderGresConf(PlanGresConf(inventory, "node7", Hyperthreaded()));
  EXPECT_THAT(conf, HasSubstr("# GPU 1 left out: reading the UUID failed (NVML: GPU is lost)\n"));
}

// The plan is what --json prints: the same facts as the text, as fields.
TEST(SlurmGresTest, PlanHoldsEachLineAndWhatWasLeftOut) {
  Inventory inventory;
  inventory.gpus = {MakeGpu(0, 1, "NVIDIA L40S"), MakeGpu(1, 0, "NVIDIA L40S", "0-99"),
                    MakeGpu(2, 2, "NVIDIA L40S")};
  inventory.gpus[2].health_error = "GPU is lost";
  GresConf conf = PlanGresConf(inventory, "node7", Hyperthreaded());
  EXPECT_EQ(conf.hostname, "node7");
  EXPECT_EQ(conf.node_gres, "gpu:nvidia_l40s:2");
  ASSERT_EQ(conf.lines.size(), 2u);
  EXPECT_EQ(conf.lines[0].nvml_index, 0u);
  EXPECT_EQ(conf.lines[0].minor_number, 1u);
  EXPECT_EQ(conf.lines[0].cores, "0-15");
  EXPECT_EQ(conf.lines[0].cores_left_out, std::nullopt);
  EXPECT_EQ(GresLineText(conf.lines[0]), "Name=gpu Type=nvidia_l40s File=/dev/nvidia1 Cores=0-15");
  EXPECT_EQ(conf.lines[1].cores, std::nullopt);
  EXPECT_THAT(conf.lines[1].cores_left_out.value_or(""), HasSubstr("NVML's CPU affinity: CPUs "));
  EXPECT_EQ(GresLineText(conf.lines[1]), "Name=gpu Type=nvidia_l40s File=/dev/nvidia0");
  ASSERT_EQ(conf.left_out.size(), 1u);
  EXPECT_EQ(conf.left_out[0].nvml_index, 2u);
  EXPECT_EQ(conf.left_out[0].reason, "GPU is lost");
  ASSERT_EQ(conf.notes.size(), 1u);
  EXPECT_THAT(conf.notes[0], HasSubstr("not in PCI bus order"));
}

TEST(SlurmGresTest, NoUsableGpuIsGresZero) {
  Inventory inventory;
  inventory.gpus = {MakeGpu(0, 0, "NVIDIA L40S")};
  inventory.gpus[0].minor_number.reset();
  GresConf conf = PlanGresConf(inventory, "node7", Hyperthreaded());
  EXPECT_EQ(conf.node_gres, "gpu:0");
  EXPECT_TRUE(conf.lines.empty());
  EXPECT_THAT(RenderGresConf(conf), HasSubstr("#   NodeName=node7 Gres=gpu:0\n"));
}

}  // namespace
}  // namespace gpupin
