#include "cli/launch.h"

#include <fmt/format.h>
#include <unistd.h>

#include "cli/config_files.h"
#include "cli/machine_state.h"
#include "core/printable.h"
#include "core/selection_output.h"
#include "core/units.h"
#include "out/gpu_table.h"
#include "out/inventory_json.h"
#include "out/json_value.h"
#include "out/table.h"
#include "sys/mps.h"

namespace gpupin {

Result<AcquireRequest> MakeAcquireRequest(const World& world, const PolicyFlags& flags,
                                          bool wait_given) {
  Result<Request> request = ToRequest(flags);
  if (!request.ok()) return request.error();
  AcquireRequest acquire;
  acquire.request = std::move(*request);
  // A default --max-jobs (a file's) is for shared requests; typed without
  // --mem it is refused as a mistake (core/policy).
  if (!acquire.request.mem_bytes && flags.max_jobs_option &&
      !TypedOnCommandLine(*flags.max_jobs_option, world.config().command_line))
    acquire.request.max_jobs.reset();
  // An --order typed on the command line beats a near that only a config
  // file gave: the command line wins.
  const std::vector<std::string>& typed = world.config().command_line;
  if (!acquire.request.order.empty() && flags.order_option && flags.near_option &&
      TypedOnCommandLine(*flags.order_option, typed) &&
      !TypedOnCommandLine(*flags.near_option, typed))
    acquire.request.near = false;
  acquire.wait = wait_given;
  if (flags.wait && !flags.wait->empty()) {
    Result<int64_t> wait_ms = ParseDurationMs(*flags.wait);
    if (!wait_ms.ok()) return wait_ms.error().OfOption("--wait");
    acquire.wait_ms = *wait_ms;
    // Waiting at most no time is not waiting: no place in the queue to
    // take and give up at once (a script's computed timeout, Python's
    // timeout=0).
    if (*wait_ms == 0) {
      acquire.wait = false;
      acquire.request.waiting_declined = true;
    }
  }
  Result<int64_t> poll_ms = ParseDurationMs(flags.poll);
  if (!poll_ms.ok()) return poll_ms.error().OfOption("--poll");
  if (*poll_ms < 10) return OptionError("--poll", "at least 10ms");
  acquire.poll_ms = *poll_ms;
  return acquire;
}

Result<int64_t> ParseReservationTtlMs(const std::string& text) {
  Result<int64_t> ttl = ParseDurationMs(text);
  if (!ttl.ok()) return ttl.error().OfOption("--ttl");
  if (*ttl <= 0) {
    return OptionError("--ttl", "must be longer than 0; a reservation of no time holds nothing");
  }
  return ttl;
}

Result<ProcessIdentity> IdentifyProcess(const World& world, int pid) {
  std::optional<uint64_t> start = LiveProcessStartTime(world.procfs(), pid);
  if (!start)
    return MakeError(ExitCode::kUsage, fmt::format("no running process with pid {}", pid));
  // Others would take a lease of ours held by another user's process for a
  // forgery, and count it dead (RecordProcessAlive).
  const uint32_t uid = static_cast<uint32_t>(getuid());
  std::optional<uint32_t> runs_as = world.procfs().Uid(pid);
  if (uid != 0 && runs_as && *runs_as != uid) {
    return MakeError(ExitCode::kUsage,
                     fmt::format("pid {} runs as another user; a lease can only follow a "
                                 "process of your own",
                                 pid));
  }
  // A lease held by init or a kernel thread would never end. Kernel
  // threads are kthreadd (pid 2) and its children.
  std::optional<ProcessStat> stat = world.procfs().Stat(pid);
  if (pid == 1 || pid == 2 || (stat && stat->ppid == 2)) {
    return MakeError(ExitCode::kUsage,
                     fmt::format("pid {} is {}, which never ends, and so would the lease; give the "
                                 "shell or job that will use the GPUs",
                                 pid, pid == 1 ? "init" : "a kernel thread"));
  }
  return ProcessIdentity{pid, *start};
}

Result<ProcessIdentity> IdentifyReservationHolder(World& world, std::optional<int> given) {
  if (given) {
    Result<ProcessIdentity> holder = IdentifyProcess(world, *given);
    if (!holder.ok()) return holder.error().OfOption("--for");
    return holder;
  }
  int pid = ReservationHolder(world.procfs(), getpid(), getppid());
  std::string command = world.procfs().Cmdline(pid).value_or("?");
  Result<ProcessIdentity> holder = IdentifyProcess(world, pid);
  if (!holder.ok()) {
    return holder.error().WithContext(fmt::format(
        "the reservation would follow the process that runs gpupin ({})", Printable(command, 80)));
  }
  world.Verbose(fmt::format("the reservation follows pid {} ({}): it ends when that process does",
                            pid, Printable(command, 80)));
  return holder;
}

std::optional<ProcessIdentity> CallingShell(const World& world) {
  const int pid = ReservationHolder(world.procfs(), getpid(), getppid());
  std::optional<uint64_t> start = LiveProcessStartTime(world.procfs(), pid);
  if (!start) return std::nullopt;
  return ProcessIdentity{pid, *start};
}

EnvChanges EnvironmentFor(const Acquired& acquired, bool uuids) {
  JobEnvRequest job;
  job.cuda_visible_devices =
      ChildVisibleDevices(acquired.selection.chosen_gpu_indices, acquired.inventory.gpus, uuids);
  job.shared_bytes = acquired.lease.shared_bytes;
  job.device_count = static_cast<int>(acquired.selection.chosen_gpu_indices.size());
  job.mps_running = acquired.lease.shared_bytes && MpsRunning();
  job.lease_id = acquired.lease.id;
  std::map<std::string, std::string> current;
  std::vector<std::string> names = {"CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"};
  for (const auto& setting : SharedCardSettings()) names.push_back(setting.first);
  for (const std::string& name : names) {
    if (const char* value = std::getenv(name.c_str())) current[name] = value;
  }
  return JobEnvironment(job, current);
}

std::string DescribeChosen(const Acquired& acquired) {
  std::string text;
  for (uint32_t index : acquired.selection.chosen_gpu_indices) {
    const Gpu& gpu = acquired.inventory.gpus[index];
    if (!text.empty()) text += ", ";
    text += fmt::format("GPU {} ({}, {})", index, gpu.name,
                        ShortUuid(gpu.uuid, acquired.inventory.gpus));
  }
  return text;
}

std::string RenderVerdicts(const std::vector<CardVerdict>& verdicts) {
  Table table({{"GPU", Align::kRight}, {"VERDICT"}, {"WHY"}});
  for (const CardVerdict& verdict : verdicts) {
    const char* word = verdict.chosen ? "chosen" : verdict.eligible ? "eligible" : "passed";
    table.AddRow({std::to_string(verdict.gpu_index), word, verdict.reason});
  }
  return table.Render();
}

nlohmann::ordered_json VerdictsToJson(const std::vector<CardVerdict>& verdicts) {
  nlohmann::ordered_json explained = nlohmann::ordered_json::array();
  for (const CardVerdict& verdict : verdicts) {
    explained.push_back({{"gpu_index", verdict.gpu_index},
                         {"eligible", verdict.eligible},
                         {"chosen", verdict.chosen},
                         {"reason", verdict.reason}});
  }
  return explained;
}

nlohmann::ordered_json AcquiredToJson(const Acquired& acquired) {
  nlohmann::ordered_json gpus = nlohmann::ordered_json::array();
  for (uint32_t index : acquired.selection.chosen_gpu_indices) {
    const Gpu& gpu = acquired.inventory.gpus[index];
    gpus.push_back({{"index", index},
                    {"uuid", gpu.uuid},
                    {"name", gpu.name},
                    {"pci_bus_id", gpu.pci_bus_id},
                    {"memory", {{"total_bytes", OrNull(gpu.memory_total_bytes)}}}});
  }
  const nlohmann::ordered_json explained = VerdictsToJson(acquired.selection.verdicts);
  const Lease& lease = acquired.lease;
  return {{"schema_version", kJsonSchemaVersion},
          {"lease_id", lease.id},
          {"gpus", gpus},
          {"shared_bytes", OrNull(lease.shared_bytes)},
          {"reservation_deadline_unix_ms", OrNull(lease.reservation_deadline_unix_ms)},
          {"verdicts", explained}};
}

}  // namespace gpupin
