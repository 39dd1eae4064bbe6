#include "cli/gpu_processes.h"

#include <unistd.h>

#include <algorithm>
#include <map>
#include <set>

#include "cli/machine_state.h"
#include "core/doctor.h"
#include "core/gpu_process_walk.h"
#include "core/process_tree.h"

namespace gpupin {
namespace {

// The gpupin job a process was started by: GPUPIN_LEASE_ID in its
// environment (readable for our own processes, or as root).
std::optional<std::string> JobLeaseId(const ProcFs& procfs, int pid) {
  Result<std::map<std::string, std::string>> environment = procfs.Environ(pid);
  if (!environment.ok()) return std::nullopt;
  auto id = environment->find("GPUPIN_LEASE_ID");
  if (id == environment->end()) return std::nullopt;
  return id->second;
}

const Lease* HeldJob(int pid, const std::vector<Lease>& live_leases, const ParentOf& parent_of) {
  const Lease* job = nullptr;
  NearestAncestor(pid, parent_of, [&](int p) {
    for (const Lease& lease : live_leases) {
      if (!lease.container_id && lease.holder.pid == p) job = &lease;
    }
    return job != nullptr;
  });
  return job;
}

// The live reservation each process is the job of (started from the shell
// that picked, which may have exited since), by pid.
using ReservationsByJob = std::map<int, const Lease*>;

ReservationsByJob ReservationJobsOf(const std::vector<Lease>& live_leases,
                                    const LivenessFacts& liveness) {
  ReservationsByJob jobs;
  for (const Lease& lease : live_leases) {
    if (!lease.is_reservation()) continue;
    for (uint32_t job : ReservationJobs(lease, liveness))
      jobs.emplace(static_cast<int>(job), &lease);
  }
  return jobs;
}

void Describe(GpuProcessRow& row, const std::optional<std::vector<Lease>>& live_leases,
              const ReservationsByJob& reservation_jobs, const ProcFs& procfs,
              std::optional<uint64_t> uptime_ticks) {
  int pid = static_cast<int>(row.process.pid);
  std::optional<ProcessStat> stat = procfs.Stat(pid);
  if (!stat) return;
  row.visible = true;
  row.uid = procfs.Uid(pid);
  row.user = row.uid ? UserName(*row.uid) : "?";
  row.command = procfs.Cmdline(pid).value_or("?");
  row.container_id = procfs.ContainerId(pid);
  row.start_time_ticks = stat->start_time_ticks;
  row.stopped = stat->state == 'T' || stat->state == 't';
  long ticks_per_second = sysconf(_SC_CLK_TCK);
  if (uptime_ticks && *uptime_ticks >= stat->start_time_ticks && ticks_per_second > 0) {
    row.elapsed_seconds =
        (*uptime_ticks - stat->start_time_ticks) / static_cast<uint64_t>(ticks_per_second);
  }
  // The variable counts only under its lease's holder: copied into another
  // process, it would credit that process to someone else's job.
  const std::optional<std::string> claimed = JobLeaseId(procfs, pid);
  const ParentOf parent_of = [&procfs](int child) { return procfs.ParentOf(child); };
  if (claimed && !live_leases) return;  // a job's, perhaps: cannot tell
  const Lease* job = claimed ? JobOfProcess(pid, claimed, *live_leases, parent_of) : nullptr;
  // A process that took its lease for itself (gpupin.pin() in Python, env
  // --for) set GPUPIN_LEASE_ID after it started, which /proc does not show:
  // it, and what it starts, run in the job its nearest lease holder holds.
  if (!claimed && live_leases) job = HeldJob(pid, *live_leases, parent_of);
  if (auto reservation = reservation_jobs.find(pid); !job && reservation != reservation_jobs.end())
    job = reservation->second;
  if (job) {
    // A live job's process is not left over, even stopped (Ctrl-Z) or
    // orphaned (its gpupin killed: the job keeps its card to its end).
    row.lease_id = job->id;
    return;
  }
  // Its job's lease has ended, whether or not its file is still there.
  const bool job_gone = claimed && std::none_of(live_leases->begin(), live_leases->end(),
                                                [&](const Lease& l) { return l.id == *claimed; });
  std::optional<ProcessStat> parent = procfs.Stat(stat->ppid);
  row.leftover_reason = LeftoverReason(job_gone, stat->state, stat->ppid,
                                       parent ? std::optional<char>(parent->state) : std::nullopt);
}

}  // namespace

std::vector<GpuProcessRow> DescribeGpuProcessRows(const Inventory& inventory,
                                                  const std::optional<std::vector<Lease>>& leases,
                                                  const LivenessFacts& liveness,
                                                  const ProcFs& procfs) {
  std::vector<GpuProcessRow> rows;
  std::optional<uint64_t> uptime = procfs.UptimeTicks();
  std::optional<std::vector<Lease>> live_leases;
  if (leases) {
    live_leases.emplace();
    for (const Lease& lease : *leases) {
      if (EvaluateLease(lease, liveness) == LeaseState::kLive) live_leases->push_back(lease);
    }
  }
  const ReservationsByJob reservation_jobs =
      live_leases ? ReservationJobsOf(*live_leases, liveness) : ReservationsByJob{};
  for (const Gpu& gpu : inventory.gpus) {
    std::set<uint32_t> seen;
    auto add = [&](const GpuProcess& process, std::optional<uint32_t> mig_index) {
      if (!seen.insert(process.pid).second) return;
      GpuProcessRow row;
      row.gpu_index = gpu.index;
      row.mig_index = mig_index;
      row.process = process;
      Describe(row, live_leases, reservation_jobs, procfs, uptime);
      rows.push_back(std::move(row));
    };
    ForEachGpuProcess(gpu, [&](const GpuProcess& process, const MigDevice* mig) {
      add(process, mig ? std::optional<uint32_t>(mig->index) : std::nullopt);
    });
  }
  return rows;
}

std::vector<LeftoverProcess> LeftoversOf(const std::vector<GpuProcessRow>& rows,
                                         uint32_t caller_uid) {
  std::vector<LeftoverProcess> per_gpu;
  for (const GpuProcessRow& row : rows) {
    if (!row.leftover_reason) continue;
    per_gpu.push_back({{row.gpu_index},
                       row.process.pid,
                       row.user,
                       row.command,
                       row.process.used_memory_bytes,
                       *row.leftover_reason,
                       row.uid && *row.uid == caller_uid,
                       row.stopped});
  }
  return MergeLeftovers(per_gpu);
}

}  // namespace gpupin
