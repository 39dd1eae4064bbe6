#include "cli/cuda_numbering.h"

#include <fmt/format.h>
#include <unistd.h>

#include "cli/machine_state.h"
#include "core/time_format.h"
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
  // Only the variables by which the driver numbers the devices: others may
  // name code for it to load (CUDA_INJECTION64_PATH), and under --pid the
  // examined environment can be another user's while gpupin runs as root.
  for (const char* name : {"CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER"}) {
    if (auto it = examined.find(name); it != examined.end()) environment[name] = it->second;
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

std::pair<DriverOrderKey, bool> CudaNumbering::KeyNow(const Inventory& inventory) {
  if (!boot_id_) boot_id_ = world_.procfs().BootId();
  const std::optional<std::string>& boot_id = *boot_id_;
  return {MachineKey(boot_id.value_or(""), inventory.driver_version.value_or(""), inventory.gpus),
          boot_id && inventory.driver_version};
}

bool NumbersEveryDeviceByDefault(const std::map<std::string, std::string>& examined) {
  return !examined.contains("CUDA_VISIBLE_DEVICES") && !examined.contains("CUDA_DEVICE_ORDER");
}

bool CudaNumbering::Adopt(const Inventory& inventory, const ProbeResult& probe,
                          const std::string& libcuda) {
  const bool resolve_again = !followed_kept_;
  replaced_kept_order_ = false;
  if (!ResolveVisibleDevices(inventory.gpus, VisibilityEnv{}).order_is_guess) return resolve_again;
  auto [key, keyed] = KeyNow(inventory);
  std::optional<DriverOrder> order = DriverOrderFromProbe(key, probe, inventory.gpus);
  // A probe that gives no order leaves an order that one gave: the driver
  // failing now (hung, a card in reset) says nothing against it.
  if (looked_up_key_ == key && followed_kept_ && found_ && !order) {
    world_.Verbose("the kept order stays: this probe gave none");
    return resolve_again;
  }
  looked_up_key_ = key;
  found_in_.clear();
  followed_kept_ = false;
  // As Lookup reads: a state directory that does not exist is not made
  // for it (doctor only looks).
  Learnt learnt =
      Learn(inventory, key, probe, std::move(order), libcuda, keyed && !world_.StateDirMissing());
  found_ = std::move(learnt.order);
  replaced_kept_order_ = !resolve_again && learnt.order_kept;
  return resolve_again;
}

std::optional<DriverOrder> CudaNumbering::Lookup(const Inventory& inventory) {
  auto [key, keyed] = KeyNow(inventory);
  if (looked_up_key_ == key) return found_;
  looked_up_key_ = key;
  found_.reset();
  found_in_.clear();
  followed_kept_ = false;
  // An unkeyed order is neither kept nor taken from the directory.
  std::optional<FoundDriverOrder> found;
  // A state directory that does not exist keeps no order, and reading is
  // no reason to create it (doctor only looks).
  if (keyed && !world_.StateDirMissing()) {
    Result<const StateDir*> dir = world_.StateRoot();
    if (dir.ok()) {
      found = ReadDriverOrder(**dir, getuid(), key,
                              [this](const std::string& line) { world_.Verbose(line); });
    } else {
      world_.Verbose("the driver's numbering is not kept: " + dir.error().message);
    }
  }
  if (auto* order = found ? std::get_if<DriverOrder>(&found->kept) : nullptr) {
    std::optional<std::string> gap = OrderGap(*order, inventory.gpus);
    if (!gap) {
      world_.Verbose(fmt::format(
          "cuda:N follow the CUDA driver's order, kept in {} for this boot, driver and set of "
          "GPUs",
          found->path));
      found_ = std::move(*order);
      found_in_ = found->path;
      followed_kept_ = true;
      return found_;
    }
    world_.Verbose(fmt::format("the driver's order kept in {} is not used: {}", found->path, *gap));
  }
  if (auto* failure = found ? std::get_if<DriverOrderFailure>(&found->kept) : nullptr) {
    const int64_t now = NowUnixMs();
    const std::string when = FormatLocalClock(failure->failed_unix_ms, now);
    if (FailureStands(*failure, now)) {
      world_.Verbose(fmt::format(
          "cuda:N is a guess: at {} the CUDA driver's numbering could not be read (asked again "
          "from {}): {}",
          when, FormatLocalClock(failure->failed_unix_ms + kProbeRetryAfterMs, now),
          failure->reason));
      followed_kept_ = true;
      return found_;
    }
    if (policy_ == ProbePolicy::kProbeIfNeeded) {
      world_.Verbose(
          fmt::format("asking the CUDA driver again: at {} its numbering could not be read: {}",
                      when, failure->reason));
    }
  }
  if (policy_ == ProbePolicy::kProbeIfNeeded) found_ = Probe(inventory, key, keyed);
  return found_;
}

std::optional<DriverOrder> CudaNumbering::Probe(const Inventory& inventory,
                                                const DriverOrderKey& key, bool keep) {
  Result<std::string> libcuda = ProbeLibcudaPath(world_);
  if (!libcuda.ok()) {
    world_.Verbose("cuda:N is a guess: " + libcuda.error().message);
    return std::nullopt;
  }
  ProbeOptions options;
  options.libcuda_path = *libcuda;
  // CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER unset: every device, in
  // CUDA's default order, whatever this environment selects.
  options.environment = ProbeEnvironment({});
  Result<ProbeResult> probe = ProbeCuda(options);
  if (!probe.ok()) {
    world_.Verbose("cuda:N is a guess: the CUDA probe could not start: " + probe.error().message);
    return std::nullopt;
  }
  return Learn(inventory, key, *probe, DriverOrderFromProbe(key, *probe, inventory.gpus), *libcuda,
               keep)
      .order;
}

CudaNumbering::Learnt CudaNumbering::Learn(const Inventory& inventory, const DriverOrderKey& key,
                                           const ProbeResult& probe,
                                           std::optional<DriverOrder> order,
                                           const std::string& libcuda, bool keep) {
  if (order) {
    world_.Verbose(fmt::format("cuda:N follow the CUDA driver's order ({})", libcuda));
    const bool kept = keep && Keep(*order);
    return {std::move(order), kept};
  }
  const int64_t now = NowUnixMs();
  DriverOrderFailure failure = FailureFromProbe(key, probe, inventory.gpus, now);
  world_.Verbose("cuda:N is a guess: " + failure.reason);
  if (keep && KeepsFailure(probe) && Keep(failure)) {
    world_.Verbose(fmt::format("kept: the CUDA driver is not asked again before {}",
                               FormatLocalClock(now + kProbeRetryAfterMs, now)));
  }
  return {};
}

bool CudaNumbering::Keep(const KeptDriverOrder& kept) {
  Result<const StateDir*> dir = world_.StateRoot();
  Status written = dir.ok() ? WriteDriverOrder(**dir, getuid(), kept) : Status(dir.error());
  if (!written.ok())
    world_.Verbose("the driver's numbering is not kept: " + written.error().message);
  return written.ok();
}

}  // namespace gpupin
