#include "cli/slurm.h"

#include <unistd.h>

#include <climits>
#include <cstdio>

#include "core/slurm_gres.h"

namespace gpupin {

CommandSpec SlurmCommand() {
  return {"slurm", "help move to Slurm: `gpupin slurm gres` prints gres.conf lines for this node",
          [](CLI::App& app) {
            app.require_subcommand(1);
            CLI::App* gres =
                app.add_subcommand("gres", "gres.conf lines for this node's GPUs, from NVML");
            gres->fallthrough();
            return [](World& world) -> Result<int> {
              Result<GpuSource*> gpus = world.Gpus();
              if (!gpus.ok()) return gpus.error();
              Result<Inventory> inventory = (*gpus)->Snapshot();
              if (!inventory.ok()) return inventory.error();
              char hostname[HOST_NAME_MAX + 1] = {};
              gethostname(hostname, sizeof hostname - 1);
              std::fputs(RenderGresConf(*inventory, hostname).c_str(), stdout);
              return 0;
            };
          }};
}

}  // namespace gpupin
