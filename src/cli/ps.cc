#include "cli/ps.h"

#include <fmt/format.h>

#include <cstdio>
#include <set>

#include "cli/gpu_processes.h"
#include "cli/leftover_kill.h"
#include "cli/machine_state.h"
#include "core/gpu_list.h"
#include "core/printable.h"
#include "core/units.h"
#include "out/inventory_json.h"
#include "out/json_value.h"
#include "out/table.h"
#include "out/terminal.h"

namespace gpupin {
namespace {

struct PsOptions {
  bool leftovers = false;
  bool devfiles = false;
  bool kill = false;
  KillOptions killing;
};

// A process holding /dev/nvidiaN open that NVML does not list on that GPU
// (fuser's view: e.g. a process that opened the device and never made a
// context, or one NVML cannot see).
struct DevFileHolder {
  int pid = 0;
  uint32_t gpu_index = 0;
  std::string user;
  std::string command;
};

std::vector<DevFileHolder> FindDevFileHolders(const Inventory& inventory,
                                              const std::vector<GpuProcessRow>& rows,
                                              const ProcFs& procfs) {
  std::map<uint32_t, uint32_t> index_of_minor;
  for (const Gpu& gpu : inventory.gpus) {
    if (gpu.minor_number) index_of_minor[*gpu.minor_number] = gpu.index;
  }
  std::set<std::pair<uint32_t, uint32_t>> listed;  // (gpu, pid)
  for (const GpuProcessRow& row : rows) listed.insert({row.gpu_index, row.process.pid});
  std::vector<DevFileHolder> holders;
  for (int pid : procfs.AllPids()) {
    for (uint32_t minor : procfs.OpenNvidiaDeviceMinors(pid)) {
      auto gpu = index_of_minor.find(minor);
      if (gpu == index_of_minor.end() || listed.contains({gpu->second, static_cast<uint32_t>(pid)}))
        continue;
      std::optional<uint32_t> uid = procfs.Uid(pid);
      holders.push_back(
          {pid, gpu->second, uid ? UserName(*uid) : "?", procfs.Cmdline(pid).value_or("?")});
    }
  }
  return holders;
}

std::string Elapsed(std::optional<uint64_t> seconds) {
  if (!seconds) return "-";
  uint64_t s = *seconds;
  if (s < 3600) return fmt::format("{}:{:02}", s / 60, s % 60);
  if (s < 86400) return fmt::format("{}:{:02}:{:02}", s / 3600, (s / 60) % 60, s % 60);
  return fmt::format("{}d{:02}h", s / 86400, (s / 3600) % 24);
}

Result<int> Ps(World& world, const PsOptions& options) {
  if (Status exists = world.RequireExistingStateDir(); !exists.ok()) return exists.error();
  Result<GpuSource*> gpus = world.Gpus();
  if (!gpus.ok()) return gpus.error();
  // --kill reports each card's used memory before and after; --devfiles
  // tells the cards' device files apart by their minor numbers.
  Result<Inventory> inventory =
      (*gpus)->Snapshot(gpu_facts::kProcesses | (options.devfiles ? gpu_facts::kMinorNumber : 0) |
                        (options.kill ? gpu_facts::kMemory : 0));
  if (!inventory.ok()) return inventory.error();
  LivenessFacts liveness = MakeLivenessFacts(*inventory, world.procfs());
  std::optional<std::vector<Lease>> leases;
  Result<LeaseStore*> store = world.Leases();
  Result<std::vector<Lease>> read =
      store.ok() ? (*store)->ReadLeases() : Result<std::vector<Lease>>(store.error());
  if (read.ok()) {
    leases = std::move(*read);
  } else if (options.kill) {
    // Without the leases, a process that took its own lease (gpupin.pin())
    // would look orphaned: nothing is ended then.
    return read.error().WithContext("ps --kill: cannot tell live jobs from leftovers");
  } else {
    world.Note("jobs not shown: " + read.error().message);
  }
  std::vector<GpuProcessRow> rows =
      DescribeGpuProcessRows(*inventory, leases, liveness, world.procfs());
  if (options.kill) return KillLeftovers(world, options.killing, *inventory, rows);
  const std::vector<uint32_t> unknown = GpusWithUnknownProcesses(*inventory);
  size_t invisible = 0;
  for (const GpuProcessRow& row : rows) invisible += row.visible ? 0 : 1;
  if (options.leftovers)
    std::erase_if(rows, [](const GpuProcessRow& row) { return !row.leftover_reason; });
  std::vector<DevFileHolder> holders;
  if (options.devfiles) holders = FindDevFileHolders(*inventory, rows, world.procfs());

  if (world.options().json) {
    nlohmann::ordered_json processes = nlohmann::ordered_json::array();
    for (const GpuProcessRow& row : rows) {
      processes.push_back({{"gpu_index", row.gpu_index},
                           {"mig_index", OrNull(row.mig_index)},
                           {"pid", row.process.pid},
                           {"visible", row.visible},
                           {"uid", OrNull(row.uid)},
                           {"user", row.visible ? nlohmann::ordered_json(row.user) : nullptr},
                           {"used_memory_bytes", OrNull(row.process.used_memory_bytes)},
                           {"elapsed_seconds", OrNull(row.elapsed_seconds)},
                           {"command", row.visible ? nlohmann::ordered_json(row.command) : nullptr},
                           {"container_id", OrNull(row.container_id)},
                           {"lease_id", OrNull(row.lease_id)},
                           {"leftover_reason", OrNull(row.leftover_reason)}});
    }
    nlohmann::ordered_json out = {{"schema_version", kJsonSchemaVersion},
                                  {"processes", processes},
                                  {"process_lists_unknown", unknown}};
    if (options.devfiles) {
      out["devfile_holders"] = nlohmann::ordered_json::array();
      for (const DevFileHolder& h : holders) {
        out["devfile_holders"].push_back(
            {{"gpu_index", h.gpu_index}, {"pid", h.pid}, {"user", h.user}, {"command", h.command}});
      }
    }
    std::printf("%s\n", JsonText(out).c_str());
    return 0;
  }
  Table table({{"GPU", Align::kRight},
               {"PID", Align::kRight},
               {"USER"},
               {"MEMORY", Align::kRight},
               {"ELAPSED", Align::kRight},
               {"JOB"},
               {"CONTAINER"},
               {options.leftovers ? "WHY LEFT OVER" : "COMMAND"},
               {options.leftovers ? "COMMAND" : ""}});
  for (const GpuProcessRow& row : rows) {
    std::string gpu = row.mig_index ? fmt::format("{}/{}", row.gpu_index, *row.mig_index)
                                    : std::to_string(row.gpu_index);
    std::string memory =
        row.process.used_memory_bytes ? FormatBytes(*row.process.used_memory_bytes) : "-";
    // The whole id, as `leases` shows it and `release` takes it: the leases
    // of one holder share its pid and start time.
    std::string job = row.lease_id.value_or("-");
    std::string container = row.container_id ? row.container_id->substr(0, 12) : "-";
    // The example servers' processes have made-up pids, not another namespace's.
    std::string command = row.visible            ? Printable(row.command)
                          : inventory->simulated ? "(simulated process)"
                                                 : "(not in this PID namespace)";
    if (options.leftovers) {
      table.AddRow({gpu, std::to_string(row.process.pid), Printable(row.user), memory,
                    Elapsed(row.elapsed_seconds), job, container, *row.leftover_reason, command});
    } else {
      table.AddRow({gpu, std::to_string(row.process.pid), row.visible ? Printable(row.user) : "?",
                    memory, Elapsed(row.elapsed_seconds), job, container, command, ""});
    }
  }
  if (!rows.empty()) std::fputs(table.Render().c_str(), stdout);
  // Processes NVML would not list are unknown, not absent.
  if (!unknown.empty()) {
    std::fputs(fmt::format("note: NVML does not list the processes of {}; what runs there is "
                           "unknown\n",
                           GpuList(unknown))
                   .c_str(),
               stdout);
  }
  if (rows.empty() && unknown.size() < inventory->gpus.size()) {
    const char* none = options.leftovers ? "no leftover GPU processes" : "no processes on any GPU";
    if (!unknown.empty())
      none = options.leftovers ? "no leftover GPU processes on the other GPUs"
                               : "no processes on the other GPUs";
    std::puts(none);
  }
  if (invisible > 0 && invisible == rows.size() && !options.leftovers && !inventory->simulated) {
    world.Note(fmt::format(
        "NVML reports {} process{} whose PIDs are not in this PID namespace (inside a container?): "
        "NVML gives "
        "host PIDs; run gpupin on the host, or the container with --pid=host, to see who they are",
        invisible, invisible == 1 ? "" : "es"));
  }
  if (options.devfiles) {
    std::puts(holders.empty() ? "\nno other process holds /dev/nvidia* open"
                              : "\nholding /dev/nvidia* open, not listed by NVML:");
    for (const DevFileHolder& h : holders) {
      std::printf("  GPU %u  pid %d  %s  %s\n", h.gpu_index, h.pid, Printable(h.user).c_str(),
                  Printable(h.command).c_str());
    }
  }
  return 0;
}

}  // namespace

CommandSpec PsCommand() {
  return {
      "ps", "every process on a GPU: user, memory, elapsed, command, container, gpupin job",
      [](CLI::App& app) {
        auto options = std::make_shared<PsOptions>();
        app.add_flag("--leftovers", options->leftovers,
                     "only processes holding GPU memory outside any live job (their "
                     "GPUPIN_LEASE_ID names an ended lease, or orphaned, stopped, zombie parent)");
        app.add_flag(
            "--devfiles", options->devfiles,
            "also list processes holding /dev/nvidia* open that NVML does not list (fuser's view)");
        CLI::Option* kill = app.add_flag(
            "--kill", options->kill,
            "with --leftovers: end your own leftover processes (SIGTERM, SIGKILL after --grace); "
            "never another user's, a live job's or gpupin's own; asks first on a terminal; exit 1 "
            "when one survives");
        kill->needs("--leftovers");
        app.add_option("--grace", options->killing.grace,
                       "with --kill: how long after SIGTERM to send SIGKILL (default 5s)")
            ->option_text("DURATION")
            ->needs(kill);
        app.add_flag("-y,--yes", options->killing.yes, "with --kill: do not ask")->needs(kill);
        app.add_flag("--dry-run", options->killing.dry_run,
                     "with --kill: show what it would end, end nothing")
            ->needs(kill);
        app.add_flag("--all-users", options->killing.all_users,
                     "with --kill, as root: other users' leftovers too")
            ->needs(kill);
        app.footer("Example: gpupin ps --leftovers --kill --dry-run");
        return [options](World& world) { return Ps(world, *options); };
      }};
}

}  // namespace gpupin
