// One consistent picture for decisions and listings: the GPUs, the leases
// that still hold, and who runs each GPU process. Built from the world by
// the commands that choose (pick/run/env/docker) and those that show (ls,
// leases).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "core/gpu.h"
#include "core/lease.h"
#include "core/policy.h"
#include "core/process_tree.h"
#include "sys/lease_store.h"
#include "sys/procfs.h"

namespace gpupin {

int64_t NowUnixMs();

// The facts EvaluateLease needs, from the inventory and /proc.
LivenessFacts MakeLivenessFacts(const Inventory& inventory, const ProcFs& procfs);

// Which queue tickets are passed over (TicketStopped), from /proc.
StoppedCheck MakeStoppedCheck(const ProcFs& procfs);

struct GpuProcessFacts {
  std::map<uint32_t, ProcessOwner> owners;  // every GPU pid visible in /proc
  // Every GPU process in our /proc, for waking on its exit: a foreign one
  // frees its card, and so may a job's (a reservation's job, or a process
  // that outlives its lease holder).
  std::vector<ProcessIdentity> watchable;
  // Some GPU process is not in our /proc (another PID namespace, a static
  // simulated process): its exit cannot be watched, only polled.
  bool unwatchable = false;
};

// Reads /proc for every GPU process of the snapshot: the costly part of a
// choice, done before taking the state lock, where every gpupin waits.
GpuProcessFacts DescribeGpuProcesses(const Inventory& inventory, const ProcFs& procfs);

// Marks each process that is, or descends from, a live lease's holder as the
// job of the nearest such holder (ProcessOwner::lease_id). `parent_of` is
// asked only while walking up from a process that holds no lease itself: a
// job run by gpupin is usually its holder, so under the state lock this
// reads /proc only for foreign processes and a job's children.
void AttributeToLeases(GpuProcessFacts& facts, const std::vector<Lease>& live_leases,
                       const ParentOf& parent_of);

// The lease of the gpupin job a process runs in, from the GPUPIN_LEASE_ID
// it inherited (`claimed`): the live lease of that id whose holder is the
// process or its ancestor (a job's process that execs gpupin is the holder). A variable copied from
// elsewhere, or naming a lease whose holder is not up the caller's tree, or a container's, names
// nothing: it would let anyone pass over another job's lease.
// Points into `live_leases`; null when the process runs in no job.
const Lease* JobOfProcess(int pid, const std::optional<std::string>& claimed,
                          const std::vector<Lease>& live_leases, const ParentOf& parent_of);

}  // namespace gpupin
