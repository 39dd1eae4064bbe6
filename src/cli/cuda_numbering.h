// The cuda:N of one command. Where gpupin's model would guess CUDA's
// FASTEST_FIRST order (mixed models, CUDA_DEVICE_ORDER not PCI_BUS_ID), the
// driver's own order is used instead: asked once per boot, driver and set
// of GPUs by a probe child (sys/cuda_probe.h) and kept in the state
// directory (sys/driver_order_file.h) for every later command.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cli/world.h"
#include "core/cuda_visible.h"
#include "core/driver_order.h"
#include "core/gpu.h"
#include "core/probe_comparison.h"

namespace gpupin {

// Whether a command may run the probe when no kept order matches: the
// commands that show cuda:N (ls, map) and those that choose within an
// index CUDA_VISIBLE_DEVICES (pick, run, env, docker) do; doctor uses a
// kept order or guesses.
enum class ProbePolicy { kKeptOnly, kProbeIfNeeded };

class CudaNumbering {
 public:
  CudaNumbering(World& world, ProbePolicy policy) : world_(world), policy_(policy) {}

  // ResolveVisibleDevices, with the driver's order wherever the model's
  // would be a guess. The kept order is read, or the probe run, only then,
  // and once for each machine key (boot, driver, GPUs) this object sees,
  // so `ls --watch` probes at most once. A probe that gives no order (no
  // libcuda, an error, a time-out) leaves the guess, with a line under -v;
  // except where libcuda could not be loaded, the failure is kept, and
  // nobody who reads it probes again until it stops standing
  // (FailureStands).
  Resolution Resolve(const Inventory& inventory, const VisibilityEnv& env);

  // The file the driver's order was read from, for the last machine key
  // Resolve saw ("DIR/cuda-order-0.json"); empty when none was read (no
  // order, or one probed by this process).
  const std::string& order_file() const { return found_in_; }

  // Takes the answer of a probe that a command ran itself, with every
  // CUDA_* variable unset (map --probe of an environment that sets neither
  // CUDA_VISIBLE_DEVICES nor CUDA_DEVICE_ORDER), as the probe Resolve would
  // run: where cuda:N of `inventory` would be a guess it is kept as Resolve
  // keeps its own, replacing what was kept for this machine key, and a
  // later Resolve follows it without asking the driver again. True when the
  // caller should resolve again: nothing was kept, so the answer stands in
  // for the probe Resolve would have run; what was kept (an order, a
  // standing failure) stays what the caller checks against the answer.
  bool Adopt(const Inventory& inventory, const ProbeResult& probe, const std::string& libcuda);

  // Whether the last Adopt replaced an order read from order_file() with
  // the answer, which gpupin now keeps: the file needs no one to remove it.
  bool replaced_kept_order() const { return replaced_kept_order_; }

 private:
  // This machine's key now, and whether it can be kept: without the boot id
  // or the driver's version nothing says when an order stops holding.
  std::pair<DriverOrderKey, bool> KeyNow(const Inventory& inventory);
  std::optional<DriverOrder> Lookup(const Inventory& inventory);
  std::optional<DriverOrder> Probe(const Inventory& inventory, const DriverOrderKey& key,
                                   bool keep);
  // `order`, the one `probe` gives (DriverOrderFromProbe), kept (or why
  // the probe gives none, where worth keeping) when `keep`.
  struct Learnt {
    std::optional<DriverOrder> order;
    bool order_kept = false;  // written to the state directory
  };
  Learnt Learn(const Inventory& inventory, const DriverOrderKey& key, const ProbeResult& probe,
               std::optional<DriverOrder> order, const std::string& libcuda, bool keep);
  // Writes the caller's file; false (with a line under -v) when it cannot.
  bool Keep(const KeptDriverOrder& kept);

  World& world_;
  ProbePolicy policy_;
  // The kernel's boot id, read once: it cannot change while gpupin runs.
  std::optional<std::optional<std::string>> boot_id_;
  // The last key looked up and what was found for it.
  std::optional<DriverOrderKey> looked_up_key_;
  std::optional<DriverOrder> found_;
  std::string found_in_;
  bool followed_kept_ = false;
  bool replaced_kept_order_ = false;
};

// A probe child's environment: gpupin's own (so that the driver library
// and, under --simulate, the scenario are found) without its CUDA_*
// variables, and CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER as `examined`
// has them (unset where it does not name them): what cuInit numbers the
// devices by, and nothing else of `examined`.
std::map<std::string, std::string> ProbeEnvironment(
    const std::map<std::string, std::string>& examined);

// Whether a probe given `examined`'s CUDA_VISIBLE_DEVICES and
// CUDA_DEVICE_ORDER asks what the kept order's probe asks (both unset:
// every device, in the driver's own numbering), so that Adopt may take it.
bool NumbersEveryDeviceByDefault(const std::map<std::string, std::string>& examined);

}  // namespace gpupin
