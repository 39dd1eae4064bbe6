#include "sim/cuda_devices.h"

namespace gpupin::sim {

std::vector<Gpu> ScenarioGpus(const Scenario& scenario) {
  std::vector<Gpu> gpus;
  for (uint32_t i = 0; i < scenario.gpus.size(); ++i) {
    const SimGpu& s = scenario.gpus[i];
    Gpu g;
    g.index = i;
    g.uuid = s.uuid;
    g.pci_bus_id = s.pci ? s.pci->bus_id : "";
    g.name = s.name.value_or("");
    if (s.compute_capability)
      g.compute_capability =
          ComputeCapability{s.compute_capability->first, s.compute_capability->second};
    g.cores = s.cores;
    g.mig_enabled = s.mig_enabled;
    if (s.mig_enabled.value_or(false)) {
      for (const auto& m : s.mig_instances) {
        MigDevice d;
        d.index = m.slot;
        d.uuid = m.uuid;
        d.name = m.name.value_or("");
        d.gpu_instance_id = m.gpu_instance_id;
        d.compute_instance_id = m.compute_instance_id;
        g.mig_devices.push_back(std::move(d));
      }
    }
    gpus.push_back(std::move(g));
  }
  return gpus;
}

Resolution ResolveCudaDevices(const Scenario& scenario, const VisibilityEnv& env) {
  auto gpus = ScenarioGpus(scenario);
  // Without a stated order the simulated driver's truth is the documented
  // default (compute capability, then cores, then PCI order), which is what
  // the resolver's guess computes.
  if (!scenario.cuda_fastest_first_order) return ResolveVisibleDevices(gpus, env);
  return ResolveVisibleDevicesWithOrder(gpus, env, *scenario.cuda_fastest_first_order);
}

int CudaInitResult(const Resolution& resolution) {
  constexpr int kNoDevice = 100;
  constexpr int kInvalidDevice = 101;
  if (resolution.names_a_device_twice()) return kInvalidDevice;
  return resolution.visible.empty() ? kNoDevice : 0;
}

}  // namespace gpupin::sim
