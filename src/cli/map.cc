#include "cli/map.h"

#include <fmt/format.h>

#include <charconv>
#include <cstdio>
#include <limits>
#include <memory>

#include "cli/cuda_numbering.h"
#include "cli/number_checks.h"
#include "core/env_words.h"
#include "core/gpu_use.h"
#include "core/printable.h"
#include "out/json_value.h"
#include "out/map_output.h"
#include "sys/cuda_probe.h"
#include "sys/environment.h"

namespace gpupin {
namespace {

struct MapOptions {
  std::optional<std::string> env;
  std::optional<int> pid;
  bool probe = false;
  std::optional<std::string> ordinal;
};

// The environment being examined: its variables (NAME -> value) and how to
// name it in the output.
struct Examined {
  std::string label;
  std::map<std::string, std::string> variables;
};

Result<Examined> ExaminedEnvironment(const World& world, const MapOptions& options) {
  if (options.env) {
    // --env describes the whole environment: what it does not name is unset,
    // so the answer never depends on the shell gpupin happens to run in.
    Result<std::map<std::string, std::string>> variables = ParseEnvWords(*options.env);
    if (!variables.ok()) return variables.error();
    return Examined{"--env", std::move(*variables)};
  }
  if (options.pid) {
    // As `env --for` says of a pid that names no process: the value given
    // cannot be used, whatever the machine's state.
    if (!world.procfs().Stat(*options.pid))
      return OptionError("--pid", fmt::format("no running process with pid {}", *options.pid));
    Result<std::map<std::string, std::string>> variables = world.procfs().Environ(*options.pid);
    if (!variables.ok()) return variables.error();
    // Another user's command line, shown on one line of a terminal.
    std::string command = Printable(world.procfs().Cmdline(*options.pid).value_or(""), 60);
    return Examined{command.empty() ? fmt::format("pid {}", *options.pid)
                                    : fmt::format("pid {} ({})", *options.pid, command),
                    std::move(*variables)};
  }
  return Examined{"this environment", ProcessEnvironment()};
}

// --probe: the driver asked with the examined CUDA_VISIBLE_DEVICES and
// CUDA_DEVICE_ORDER (into view.probe and view.libcuda).
Status Probe(const World& world, const Examined& examined, MapView& view) {
  Result<std::string> libcuda = ProbeLibcudaPath(world);
  if (!libcuda.ok()) return libcuda.error();
  ProbeOptions probe_options;
  probe_options.libcuda_path = *libcuda;
  probe_options.environment = ProbeEnvironment(examined.variables);
  Result<ProbeResult> probe = ProbeCuda(probe_options);
  if (!probe.ok()) return probe.error();
  view.libcuda = *libcuda;
  view.probe = std::move(*probe);
  return Ok{};
}

void AddUses(const World& world, CudaNumbering& numbering, int pid, MapView& view) {
  view.pid = pid;
  const ProcFs& procfs = world.procfs();
  // A child started with a CUDA_VISIBLE_DEVICES of its own (a launcher's
  // workers, a batch script's steps) is judged by the environment it got.
  auto own_resolution = [&](uint32_t gpu_pid) -> std::optional<Resolution> {
    if (static_cast<int>(gpu_pid) == pid) return std::nullopt;
    Result<std::map<std::string, std::string>> environment =
        procfs.Environ(static_cast<int>(gpu_pid));
    if (!environment.ok()) return std::nullopt;
    VisibilityEnv own = VisibilityEnvFromMap(*environment);
    if (own == view.env) return std::nullopt;
    return numbering.Resolve(*view.inventory, own);
  };
  view.uses = FindGpuUses(
      *view.inventory, view.resolution,
      [&](uint32_t gpu_pid) { return procfs.DescendsFrom(static_cast<int>(gpu_pid), pid); },
      own_resolution);
  view.unknown_process_gpus = GpusWithUnknownProcesses(*view.inventory);
}

std::string OrdinalsThatExist(const Resolution& resolution) {
  std::string exist = resolution.visible.empty() ? "no cuda:N exists"
                      : resolution.visible.size() == 1
                          ? "only cuda:0 exists"
                          : fmt::format("cuda:0 to cuda:{} exist", resolution.visible.size() - 1);
  if (resolution.dropped.empty()) return exist;
  return fmt::format("{}; {} entr{} dropped (gpupin map without the device shows why)", exist,
                     resolution.dropped.size(),
                     resolution.dropped.size() == 1 ? "y was" : "ies were");
}

Result<int> Map(World& world, const MapOptions& options) {
  if (Status exists = world.RequireExistingStateDir(); !exists.ok()) return exists.error();
  std::optional<int> asked;
  if (options.ordinal) {
    Result<int> ordinal = ParseCudaOrdinal(*options.ordinal);
    if (!ordinal.ok()) return ordinal.error();
    asked = *ordinal;
  }
  // Read before NVML opens, so an unreadable process fails fast.
  Result<Examined> examined = ExaminedEnvironment(world, options);
  if (!examined.ok()) return examined.error();
  Result<GpuSource*> gpus = world.Gpus();
  if (!gpus.ok()) return gpus.error();
  MapView view;
  view.environment_label = examined->label;
  view.env = VisibilityEnvFromMap(examined->variables);
  // The processes and their memory only for --pid: the mapping itself needs
  // the cards, their MIG instances and, on mixed models, CUDA's order,
  // unless the environment examined numbers in PCI order.
  GpuFacts facts = gpu_facts::kMig | (options.pid ? gpu_facts::kMemory | gpu_facts::kProcesses : 0);
  if (!FollowsPciBusOrder(view.env)) facts |= gpu_facts::kCudaOrderIfMixed;
  Result<Inventory> inventory = (*gpus)->Snapshot(facts);
  if (!inventory.ok()) return inventory.error();
  view.inventory = &*inventory;
  // Probes the driver when cuda:N would be a guess and no probe of this
  // boot and driver is kept (an order, or a failure that still stands).
  // --probe asks the driver itself; where it asks what that probe asks, it
  // stands in for it: with nothing kept, the model is its answer, and what
  // was kept is checked against the answer, which then replaces it for the
  // commands after this one.
  const bool probe_is_kept = options.probe && NumbersEveryDeviceByDefault(examined->variables);
  CudaNumbering numbering(world,
                          probe_is_kept ? ProbePolicy::kKeptOnly : ProbePolicy::kProbeIfNeeded);
  view.resolution = numbering.Resolve(*inventory, view.env);
  if (options.probe) {
    if (Status probed = Probe(world, *examined, view); !probed.ok()) return probed.error();
    const std::string order_file = numbering.order_file();
    if (probe_is_kept && numbering.Adopt(*inventory, *view.probe, *view.libcuda))
      view.resolution = numbering.Resolve(*inventory, view.env);
    view.comparison =
        CompareProbe(view.resolution, *view.probe, order_file, numbering.replaced_kept_order());
  }
  view.asked_ordinal = asked;
  if (asked && (*asked >= static_cast<int>(view.resolution.visible.size()))) {
    return MakeError(ExitCode::kError,
                     fmt::format("cuda:{} does not exist under {}: {}", *asked, examined->label,
                                 OrdinalsThatExist(view.resolution)));
  }
  if (options.pid) AddUses(world, numbering, *options.pid, view);
  if (world.options().json) {
    std::printf("%s\n", JsonText(MapToJson(view)).c_str());
  } else {
    std::fputs(RenderMap(view, world.terminal()).c_str(), stdout);
  }
  return 0;
}

}  // namespace

Result<int> ParseCudaOrdinal(std::string_view text) {
  std::string_view digits = text;
  if (digits.starts_with("cuda:")) digits.remove_prefix(5);
  int ordinal = -1;
  auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), ordinal);
  if (digits.empty() || error != std::errc() || end != digits.data() + digits.size() ||
      ordinal < 0) {
    return MakeError(
        ExitCode::kUsage,
        fmt::format("'{}' is not a CUDA device; write cuda:N or N, e.g. cuda:1", text));
  }
  return ordinal;
}

CommandSpec MapCommand() {
  return {"map", "which physical GPU each cuda:N is, for an environment or a running process",
          [](CLI::App& app) {
            auto options = std::make_shared<MapOptions>();
            app.add_option("device", options->ordinal, "show only this device (cuda:N or N)")
                ->option_text("cuda:N");
            auto* env = app.add_option("--env", options->env,
                                       "examine this environment instead of gpupin's own "
                                       "(shell quoting); what it does not name is unset")
                            ->option_text("'VAR=VALUE ...'");
            app.add_option("--pid", options->pid,
                           "examine a running process (/proc/PID/environ) and show which GPUs "
                           "it really uses")
                ->check(WholeNumber(1, std::numeric_limits<pid_t>::max()))
                ->excludes(env)
                ->option_text("PID");
            app.add_flag("--probe", options->probe,
                         "also ask the CUDA driver, in a child process given only the examined "
                         "CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER, and compare");
            app.footer(
                "On mixed GPU models cuda:N follow the CUDA driver's own order, asked once per "
                "boot, driver and set of GPUs and kept in the state directory (as gpupin ls "
                "does).\n"
                "Exit status: 0; 1 when cuda:N does not exist or the process's environment "
                "cannot be read; 2 usage (also a --pid that names no running process); 4 NVML "
                "unavailable.\n"
                "Examples:\n"
                "  gpupin map --env 'CUDA_VISIBLE_DEVICES=0,7,1'   cuda:0 is GPU 0; 7 and 1 are "
                "dropped, and why\n"
                "  gpupin map --pid 4121                           a running job: its cuda:N and "
                "the GPUs it uses\n"
                "  gpupin map cuda:1 --probe                       cuda:1 here, checked against "
                "the driver");
            return [options](World& world) { return Map(world, *options); };
          }};
}

}  // namespace gpupin
