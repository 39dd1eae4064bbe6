// Arbitrary bytes as a scenario file (doc/scenario.md): ParseScenario must
// not crash or throw, and a scenario it accepts keeps the promises the
// simulated NVML relies on without checking again.
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string_view>

#include "sim/scenario.h"

namespace {

void Check(bool condition) {
  if (!condition) std::abort();
}

// `processes_bytes`: what the processes on the device use, which the
// device's used memory includes.
void CheckMemory(const std::optional<gpupin::sim::SimMemory>& memory,
                 unsigned __int128 processes_bytes) {
  if (!memory) return;
  Check(memory->used_bytes <= memory->total_bytes);
  Check(memory->reserved_bytes <= memory->total_bytes - memory->used_bytes);
  Check(processes_bytes <= memory->used_bytes);
}

unsigned __int128 ProcessBytes(const std::vector<gpupin::sim::SimProcess>& processes) {
  unsigned __int128 sum = 0;
  for (const auto& process : processes) sum += process.used_memory_bytes.value_or(0);
  return sum;
}

void CheckProcesses(const std::vector<gpupin::sim::SimProcess>& processes) {
  for (const auto& process : processes)
    Check(process.pid > 0 && (process.compute || process.graphics));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gpupin::sim;
  auto scenario = ParseScenario(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!scenario) {
    Check(!scenario.error().message.empty());
    return 0;
  }
  Check(scenario->process_stride == 24 || scenario->process_stride == 32);
  std::set<std::string> uuids;
  for (const SimGpu& gpu : scenario->gpus) {
    Check(gpu.uuid.starts_with("GPU-") && UuidBytes(gpu.uuid).has_value());
    Check(uuids.insert(gpu.uuid).second);
    if (gpu.pci) {
      // The bus id is stored normalised: parsing it again gives itself.
      auto again = ParsePciBusId(gpu.pci->bus_id);
      Check(again && again->bus_id == gpu.pci->bus_id);
    }
    unsigned __int128 gpu_bytes = ProcessBytes(gpu.processes);
    for (const SimMigInstance& mig : gpu.mig_instances) gpu_bytes += ProcessBytes(mig.processes);
    CheckMemory(gpu.memory, gpu_bytes);
    CheckProcesses(gpu.processes);
    if (gpu.utilization) Check(gpu.utilization->gpu <= 100 && gpu.utilization->memory <= 100);
    Check(gpu.mig_instances.empty() || gpu.mig_enabled.value_or(false));
    std::set<uint32_t> slots;
    for (const SimMigInstance& mig : gpu.mig_instances) {
      Check(mig.slot < gpu.mig_max_devices && slots.insert(mig.slot).second);
      Check(mig.uuid.starts_with("MIG-") && UuidBytes(mig.uuid).has_value());
      Check(uuids.insert(mig.uuid).second);
      CheckMemory(mig.memory, ProcessBytes(mig.processes));
      CheckProcesses(mig.processes);
    }
    for (const auto& [call, code] : gpu.errors)
      Check(call.starts_with("nvml") && code != NVML_SUCCESS);
  }
  if (scenario->cuda_fastest_first_order) {
    const auto& order = *scenario->cuda_fastest_first_order;
    Check(order.size() == scenario->gpus.size());
    std::set<uint32_t> seen(order.begin(), order.end());
    Check(seen.size() == order.size() && (order.empty() || *seen.rbegin() < order.size()));
  }
  return 0;
}
