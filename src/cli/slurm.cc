#include "cli/slurm.h"

#include <unistd.h>

#include <climits>
#include <cstdio>

#include "core/slurm_gres.h"
#include "out/inventory_json.h"
#include "out/json_value.h"
#include "sys/sysfs_cpu.h"

namespace gpupin {
namespace {

nlohmann::ordered_json GresConfToJson(const GresConf& conf) {
  nlohmann::ordered_json lines = nlohmann::ordered_json::array();
  for (const GresLine& line : conf.lines) {
    lines.push_back({{"gpu_index", line.nvml_index},
                     {"type", line.type},
                     {"file", GresDeviceFile(line)},
                     {"cores", OrNull(line.cores)},
                     {"cores_left_out", OrNull(line.cores_left_out)},
                     {"pci_bus_id", line.pci_bus_id},
                     {"uuid", line.uuid},
                     {"line", GresLineText(line)}});
  }
  nlohmann::ordered_json left_out = nlohmann::ordered_json::array();
  for (const GresLeftOut& gpu : conf.left_out)
    left_out.push_back(
        {{"gpu_index", gpu.nvml_index}, {"uuid", TextOrNull(gpu.uuid)}, {"reason", gpu.reason}});
  return {{"schema_version", kJsonSchemaVersion},
          {"hostname", conf.hostname},
          {"node_gres", conf.node_gres},
          {"lines", lines},
          {"left_out", left_out},
          {"notes", conf.notes}};
}

}  // namespace

CommandSpec SlurmCommand() {
  return {"slurm", "help move to Slurm: `gpupin slurm gres` prints gres.conf lines for this node",
          [](CLI::App& app) {
            app.require_subcommand(1);
            CLI::App* gres = app.add_subcommand(
                "gres",
                "gres.conf lines for this node's GPUs, from NVML, in PCI bus order (Slurm numbers "
                "GPUs by line); Cores= in Slurm's core numbers, from the CPU topology in /sys "
                "(GPUPIN_SYSFS_ROOT: another sysfs tree, e.g. the simulated server's)");
            gres->fallthrough();
            return [](World& world) -> Result<int> {
              Result<GpuSource*> gpus = world.Gpus();
              if (!gpus.ok()) return gpus.error();
              Result<Inventory> inventory = (*gpus)->Snapshot(
                  gpu_facts::kAffinity | gpu_facts::kMinorNumber | gpu_facts::kMig);
              if (!inventory.ok()) return inventory.error();
              char hostname[HOST_NAME_MAX + 1] = {};
              gethostname(hostname, sizeof hostname - 1);
              Result<CpuTopology> topology = ReadCpuTopology(SysfsRoot());
              GresConf conf = PlanGresConf(*inventory, hostname, topology);
              if (world.options().json) {
                std::printf("%s\n", JsonText(GresConfToJson(conf)).c_str());
              } else {
                std::fputs(RenderGresConf(conf).c_str(), stdout);
              }
              return 0;
            };
          }};
}

}  // namespace gpupin
