#include "cli/machine_state.h"

#include <unistd.h>

#include <chrono>
#include <memory>

#include "core/gpu_process_walk.h"

namespace gpupin {

int64_t NowUnixMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

LivenessFacts MakeLivenessFacts(const Inventory& inventory, const ProcFs& procfs) {
  LivenessFacts facts;
  facts.now_unix_ms = NowUnixMs();
  // One read of each process's stat for all the questions of one decision.
  auto stats = std::make_shared<const ProcFs>(procfs.RememberingStats());
  facts.process_start_time = [stats](int pid) { return LiveProcessStartTime(*stats, pid); };
  facts.process_hidden = [stats](int pid) { return stats->Hidden(pid); };
  facts.process_uid = [&procfs](int pid) { return procfs.Uid(pid); };
  facts.parent_of = [stats](int pid) { return stats->ParentOf(pid); };
  facts.session_of = [stats](int pid) -> std::optional<int> {
    std::optional<ProcessStat> stat = stats->Stat(pid);
    if (!stat) return std::nullopt;
    return stat->session;
  };
  facts.start_stack_of = [stats](int pid) -> std::optional<uint64_t> {
    std::optional<ProcessStat> stat = stats->Stat(pid);
    if (!stat || stat->start_stack == 0) return std::nullopt;
    return stat->start_stack;
  };
  facts.runs_gpupin = [stats](int pid) {
    // The name as the kernel keeps it: gpupin's, or this program's own
    // (started through a link or a copy of another name, it still counts
    // the tickets of the others, and those of its own name).
    static const std::optional<ProcessStat> self = stats->Stat(getpid());
    std::optional<ProcessStat> other = stats->Stat(pid);
    // Another user's waiter behind hidepid: its name cannot be read.
    if (!other) return stats->Hidden(pid);
    return other->comm == "gpupin" || (self && other->comm == self->comm);
  };
  facts.process_stopped = [stats](int pid) { return ProcessStopped(*stats, pid); };
  facts.process_command = [&procfs](int pid) -> std::optional<std::string> {
    std::optional<std::vector<std::string>> argv = procfs.Argv(pid);
    if (!argv) return std::nullopt;
    return LeaseCommand(*argv);
  };
  for (const Gpu& gpu : inventory.gpus) {
    if (!gpu.healthy() || !gpu.processes_known) continue;
    std::vector<uint32_t>& pids = facts.gpu_pids[gpu.uuid];
    for (const GpuProcess& process : gpu.processes) pids.push_back(process.pid);
  }
  return facts;
}

StoppedCheck MakeStoppedCheck(const ProcFs& procfs) {
  return [&procfs](int pid) { return ProcessStopped(procfs, pid); };
}

GpuProcessFacts DescribeGpuProcesses(const Inventory& inventory, const ProcFs& procfs) {
  GpuProcessFacts facts;
  const std::optional<uint64_t> uptime_ticks = procfs.UptimeTicks();
  const long ticks_per_second = sysconf(_SC_CLK_TCK);
  for (const Gpu& gpu : inventory.gpus) {
    ForEachGpuProcess(gpu, [&](const GpuProcess& process, const MigDevice*) {
      if (facts.owners.contains(process.pid)) return;
      int pid = static_cast<int>(process.pid);
      std::optional<uint64_t> start = LiveProcessStartTime(procfs, pid);
      if (!start) {
        facts.unwatchable = true;
        return;
      }
      facts.watchable.push_back({pid, *start});
      ProcessOwner owner;
      owner.uid = procfs.Uid(pid);
      if (owner.uid) owner.user = UserName(*owner.uid);
      owner.command = procfs.Cmdline(pid).value_or("");
      if (uptime_ticks && *uptime_ticks >= *start && ticks_per_second > 0) {
        owner.age_ms = static_cast<int64_t>((*uptime_ticks - *start) * 1000 /
                                            static_cast<uint64_t>(ticks_per_second));
      }
      facts.owners[process.pid] = std::move(owner);
    });
  }
  return facts;
}

void AttributeToLeases(GpuProcessFacts& facts, const std::vector<Lease>& live_leases,
                       const ParentOf& parent_of) {
  std::map<int, const Lease*> by_holder;
  for (const Lease& lease : live_leases) {
    if (lease.holder.pid > 0) by_holder.emplace(lease.holder.pid, &lease);
  }
  for (auto& [gpu_pid, owner] : facts.owners) {
    owner.lease_id.reset();
    std::optional<int> holder = NearestAncestor(static_cast<int>(gpu_pid), parent_of,
                                                [&](int pid) { return by_holder.contains(pid); });
    if (holder) owner.lease_id = by_holder.at(*holder)->id;
  }
}

const Lease* JobOfProcess(int pid, const std::optional<std::string>& claimed,
                          const std::vector<Lease>& live_leases, const ParentOf& parent_of) {
  if (!claimed) return nullptr;
  auto lease = std::find_if(live_leases.begin(), live_leases.end(),
                            [&](const Lease& l) { return l.id == *claimed; });
  if (lease == live_leases.end() || lease->container_id || lease->holder.pid <= 0) return nullptr;
  const int holder = lease->holder.pid;
  if (!NearestAncestor(pid, parent_of, [holder](int p) { return p == holder; })) return nullptr;
  return &*lease;
}

}  // namespace gpupin
