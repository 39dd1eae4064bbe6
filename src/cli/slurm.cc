#include "cli/slurm.h"

#include <unistd.h>

#include <climits>
#include <cstdio>

#include "core/slurm_gres.h"
#include "sys/sysfs_cpu.h"

namespace gpupin {

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
              Result<Inventory> inventory = (*gpus)->Snapshot();
              if (!inventory.ok()) return inventory.error();
              char hostname[HOST_NAME_MAX + 1] = {};
              gethostname(hostname, sizeof hostname - 1);
              Result<CpuTopology> topology = ReadCpuTopology(SysfsRoot());
              std::fputs(RenderGresConf(*inventory, hostname, topology).c_str(), stdout);
              return 0;
            };
          }};
}

}  // namespace gpupin
