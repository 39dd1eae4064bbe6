#include "cli/ls.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "cli/cuda_numbering.h"
#include "cli/machine_state.h"
#include "cli/number_checks.h"
#include "core/cuda_visible.h"
#include "core/policy.h"
#include "core/printable.h"
#include "core/units.h"
#include "out/gpu_table.h"
#include "out/inventory_json.h"
#include "out/json_value.h"
#include "sys/environment.h"
#include "sys/interrupt.h"

namespace gpupin {
namespace {

struct LsOptions {
  double watch_seconds = 0;
  bool all = false;
};

// The table's columns, and compute capability and cores only where the
// cuda:N column needs them (mixed models under CUDA's default order);
// --all reads everything NVML tells into --json. The table has no column
// for the rest, so without --json --all reads no more.
GpuFacts FactsToList(const LsOptions& options, const VisibilityEnv& env, bool json) {
  if (options.all && json) return gpu_facts::kAll;
  GpuFacts facts =
      gpu_facts::kMemory | gpu_facts::kUtilization | gpu_facts::kSensors | gpu_facts::kProcesses;
  if (!FollowsPciBusOrder(env)) facts |= gpu_facts::kCudaOrderIfMixed;
  return facts;
}

std::string SourceLabel(const World& world) {
  return world.options().simulate ? fmt::format("simulated server {}", *world.options().simulate)
                                  : "";
}

struct LeaseColumn {
  // Who holds each GPU, by UUID: "alice (pid 4121)", "reserved: bob", or
  // the holders of shared leases; "reserved (admin)" marks a card of the
  // admin's `reserved` list.
  std::map<std::string, std::string> holders;
  // Why no lease is shown, when the leases could not be read.
  std::optional<std::string> unread;
};

LeaseColumn LeaseHolders(World& world, const Inventory& inventory) {
  LeaseColumn column;
  std::map<std::string, std::string>& holders = column.holders;
  std::vector<Lease> live;
  Result<LeaseStore*> store = world.Leases();
  if (!store.ok()) {
    column.unread = store.error().message;
  } else {
    LivenessFacts facts = MakeLivenessFacts(inventory, world.procfs());
    Status read = (*store)->Transact([&](LeaseTransaction& txn) -> Status {
      live = txn.LiveLeases(facts);
      return Ok{};
    });
    if (!read.ok()) column.unread = read.error().message;
  }
  for (const Lease& lease : live) {
    std::string who = lease.is_reservation()
                          ? "reserved: " + lease.user
                          : fmt::format("{} (pid {})", lease.user, lease.holder.pid);
    if (lease.shared_bytes)
      who = fmt::format("{} shared {}", who, FormatBytes(*lease.shared_bytes));
    for (const std::string& uuid : lease.gpu_uuids) {
      std::string& text = holders[uuid];
      text += (text.empty() ? "" : ", ") + who;
    }
  }
  // Cards the admin keeps for interactive work: taken only when named.
  for (size_t position : ReservedGpuPositions(inventory.gpus, world.rules().reserved)) {
    std::string& text = holders[inventory.gpus[position].uuid];
    text.insert(0, text.empty() ? "reserved (admin)" : "reserved (admin), ");
  }
  return column;
}

struct Annotations {
  std::map<uint32_t, GpuAnnotation> by_gpu;
  // The cuda:N column rests on a guess of CUDA's FASTEST_FIRST order.
  bool order_is_guess = false;
  // Where cuda:N come from (CudaOrderSource).
  const char* order_source = "";
  // Why the LEASE column is empty, when the leases could not be read.
  std::optional<std::string> leases_unread;
};

Annotations Annotate(World& world, CudaNumbering& numbering, const Inventory& inventory,
                     const VisibilityEnv& env) {
  Annotations result;
  std::map<uint32_t, GpuAnnotation>& annotations = result.by_gpu;
  Resolution resolution = numbering.Resolve(inventory, env);
  result.order_is_guess = resolution.order_is_guess;
  result.order_source = CudaOrderSource(resolution);
  for (const VisibleDevice& device : resolution.visible) {
    if (device.mig_index) {
      annotations[device.gpu_index].mig_cuda_ordinals[*device.mig_index] = device.ordinal;
    } else {
      annotations[device.gpu_index].cuda_ordinal = device.ordinal;
    }
  }
  LeaseColumn leases = LeaseHolders(world, inventory);
  result.leases_unread = std::move(leases.unread);
  const std::map<std::string, std::string>& holders = leases.holders;
  for (const Gpu& gpu : inventory.gpus) {
    if (auto it = holders.find(gpu.uuid); it != holders.end())
      annotations[gpu.index].lease = it->second;
  }
  return result;
}

// One frame of output: the table or a JSON document (one line when watching).
Result<std::string> Frame(World& world, GpuSource& gpus, CudaNumbering& numbering,
                          const LsOptions& options, bool compact_json) {
  const VisibilityEnv env = VisibilityEnvFromProcess();
  Result<Inventory> inventory = gpus.Snapshot(FactsToList(options, env, world.options().json));
  if (!inventory.ok()) return inventory.error();
  Annotations annotated = Annotate(world, numbering, *inventory, env);
  std::map<uint32_t, GpuAnnotation>& annotations = annotated.by_gpu;
  const std::string leases_unread =
      annotated.leases_unread ? "leases not shown: " + *annotated.leases_unread : "";
  if (world.options().json) {
    if (annotated.leases_unread) world.Note(leases_unread);
    nlohmann::ordered_json json = InventoryToJson(*inventory, gpus.LastRead());
    json["cuda_order_is_guess"] = annotated.order_is_guess;
    json["cuda_order"] = annotated.order_source;
    for (auto& gpu : json["gpus"]) {
      const GpuAnnotation& annotation = annotations[gpu["index"].get<uint32_t>()];
      gpu["cuda_ordinal"] = OrNull(annotation.cuda_ordinal);
      for (auto& mig : gpu["mig"]["devices"]) {
        auto ordinal = annotation.mig_cuda_ordinals.find(mig["index"].get<uint32_t>());
        mig["cuda_ordinal"] = ordinal == annotation.mig_cuda_ordinals.end()
                                  ? nlohmann::ordered_json(nullptr)
                                  : nlohmann::ordered_json(ordinal->second);
      }
      gpu["lease"] = annotation.lease.empty() ? nlohmann::ordered_json(nullptr)
                                              : nlohmann::ordered_json(annotation.lease);
    }
    return JsonText(json, compact_json ? -1 : 2) + "\n";
  }
  std::string table = RenderGpuTable(*inventory, annotations, SourceLabel(world), world.terminal());
  // Part of the table, so that --watch redraws it in place with the rest.
  if (annotated.leases_unread)
    table += world.terminal().Paint(PrintableWhole(leases_unread), Color::kYellow) + "\n";
  if (annotated.order_is_guess) {
    table += world.terminal().Paint(
                 "cuda:N is a guess: the models differ and CUDA_DEVICE_ORDER is not PCI_BUS_ID, so "
                 "CUDA orders them "
                 "by an unpublished heuristic and the CUDA driver could not be asked (gpupin -v "
                 "ls says why); set CUDA_DEVICE_ORDER=PCI_BUS_ID",
                 Color::kYellow) +
             "\n";
  }
  return table;
}

void WriteAll(const std::string& text) { std::fwrite(text.data(), 1, text.size(), stdout); }

// Redraws in place: the cursor goes home and every line overwrites the last
// frame's, clearing only what is left over, so nothing flickers.
std::string InPlace(const std::string& frame) {
  std::string out = "\x1b[H";
  size_t start = 0;
  while (start < frame.size()) {
    size_t end = frame.find('\n', start);
    if (end == std::string::npos) end = frame.size();
    out.append(frame, start, end - start);
    out += "\x1b[K\n";
    start = end + 1;
  }
  return out + "\x1b[J";
}

Result<int> Watch(World& world, GpuSource& gpus, CudaNumbering& numbering, const LsOptions& options,
                  double seconds) {
  InterruptGuard interrupt;
  // NO_COLOR asks for no colour, not for a scrolling table.
  bool in_place = world.terminal().stdout_cursor() && !world.options().json;
  if (in_place) WriteAll("\x1b[?25l\x1b[2J");
  do {
    Result<std::string> frame = Frame(world, gpus, numbering, options, true);
    if (!frame.ok()) {
      if (in_place) WriteAll("\x1b[?25h");
      return frame.error();
    }
    WriteAll(in_place ? InPlace(*frame) : *frame + (world.options().json ? "" : "\n"));
    std::fflush(stdout);
  } while (interrupt.Sleep(static_cast<int>(seconds * 1000)));
  if (in_place) WriteAll("\x1b[?25h");
  return 0;
}

}  // namespace

CommandSpec LsCommand() {
  return {"ls", "list every GPU: index, cuda:N, memory, utilization, processes, lease",
          [](CLI::App& app) {
            auto options = std::make_shared<LsOptions>();
            app.add_option(
                   "--watch", options->watch_seconds,
                   "refresh every SECONDS, 0.1 to 86400 (default 2; or a duration: 2s, 500ms), "
                   "until Ctrl-C")
                ->expected(0, 1)
                ->default_str("2")
                ->transform(Seconds(0.1, 86400))
                ->option_text("[SECONDS]");
            app.add_flag("--all", options->all,
                         "with --json: read every fact NVML gives (modes, CPU affinity, NUMA node, "
                         "board, NVLink peers, topology), not only the table's; the table "
                         "itself is the same");
            app.footer(
                "On mixed GPU models cuda:N is the CUDA driver's own order: asked once per boot, "
                "driver and set of GPUs, in a child process, and kept in the state directory "
                "for every gpupin. It is marked as a guess only when the driver cannot be asked "
                "(gpupin -v ls says why); a driver that did not answer is asked again after 10 "
                "minutes, not by every command.");
            return [options, &app](World& world) -> Result<int> {
              if (Status exists = world.RequireExistingStateDir(); !exists.ok())
                return exists.error();
              Result<GpuSource*> gpus = world.Gpus();
              if (!gpus.ok()) return gpus.error();
              // Probes the driver when the cuda:N column would be a guess
              // and no probe of this boot and driver is kept (an order, or
              // a failure that still stands).
              CudaNumbering numbering(world, ProbePolicy::kProbeIfNeeded);
              if (app.count("--watch") > 0) {
                return Watch(world, **gpus, numbering, *options,
                             options->watch_seconds > 0 ? options->watch_seconds : 2);
              }
              Result<std::string> frame = Frame(world, **gpus, numbering, *options, false);
              if (!frame.ok()) return frame.error();
              WriteAll(*frame);
              return 0;
            };
          }};
}

}  // namespace gpupin
