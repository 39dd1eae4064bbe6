#include "cli/cuda_numbering.h"

#include <fmt/format.h>
#include <unistd.h>

#include "sys/cuda_probe.h"
#include "sys/driver_order_file.h"
#include "sys/environment.h"

namespace gpupin {

std::map<std::string, std::string> ProbeEnvironment(
    const std::map<std::string, std::string>& examined) {
  std::map<std::string, std::string> environment;
  for (auto& [name, value] : ProcessEnvironment()) {
    if (!name.starts_with("CUDA_")) environment[name] = value;
  }
  for (const auto& [name, value] : examined) {
    if (name.starts_with("CUDA_")) environment[name] = value;
  }
  return environment;
}

Resolution CudaNumbering::Resolve(const Inventory& inventory, const VisibilityEnv& env) {
  Resolution guessed = ResolveVisibleDevices(inventory.gpus, env);
  if (!guessed.order_is_guess) return guessed;
  std::optional<DriverOrder> order = Lookup(inventory);
  if (!order) return guessed;
  return ResolveVisibleDevicesWithOrder(inventory.gpus, env,
                                        FastestFirstIndices(*order, inventory.gpus));
}

std::optional<DriverOrder> CudaNumbering::Lookup(const Inventory& inventory) {
  if (!boot_id_) boot_id_ = world_.procfs().BootId();
  const std::optional<std::string>& boot_id = *boot_id_;
  DriverOrderKey key =
      MachineKey(boot_id.value_or(""), inventory.driver_version.value_or(""), inventory.gpus);
  if (looked_up_key_ == key) return found_;
  looked_up_key_ = key;
  found_.reset();
  // Without the boot id or the driver's version nothing says when an order
  // stops holding: it is neither kept nor taken from the directory.
  const bool keyed = boot_id && inventory.driver_version;
  if (keyed) {
    Result<const StateDir*> dir = world_.StateRoot();
    if (dir.ok()) {
      found_ = ReadDriverOrder(**dir, getuid(), key,
                               [this](const std::string& line) { world_.Verbose(line); });
    } else {
      world_.Verbose("the driver's numbering is not kept: " + dir.error().message);
    }
  }
  if (!found_ && policy_ == ProbePolicy::kProbeIfNeeded) found_ = Probe(inventory, key, keyed);
  return found_;
}

std::optional<DriverOrder> CudaNumbering::Probe(const Inventory& inventory,
                                                const DriverOrderKey& key, bool keep) {
  auto guess = [this](const std::string& why) -> std::optional<DriverOrder> {
    world_.Verbose("cuda:N is a guess: " + why);
    return std::nullopt;
  };
  Result<std::string> libcuda = ProbeLibcudaPath(world_);
  if (!libcuda.ok()) return guess(libcuda.error().message);
  ProbeOptions options;
  options.libcuda_path = *libcuda;
  // CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER unset: every device, in
  // CUDA's default order, whatever this environment selects.
  options.environment = ProbeEnvironment({});
  Result<ProbeResult> probe = ProbeCuda(options);
  if (!probe.ok()) return guess("the CUDA probe could not start: " + probe.error().message);
  std::optional<DriverOrder> order = DriverOrderFromProbe(key, *probe, inventory.gpus);
  if (!order) {
    return guess(probe->status == ProbeStatus::kOk
                     ? std::string("the CUDA driver listed a device NVML does not")
                     : "the CUDA driver gave no order: " + probe->detail);
  }
  world_.Verbose(fmt::format("cuda:N follow the CUDA driver's order ({})", *libcuda));
  if (keep) {
    Result<const StateDir*> dir = world_.StateRoot();
    Status kept = dir.ok() ? WriteDriverOrder(**dir, getuid(), *order) : Status(dir.error());
    if (!kept.ok()) world_.Verbose("the driver's numbering is not kept: " + kept.error().message);
  }
  return order;
}

}  // namespace gpupin
