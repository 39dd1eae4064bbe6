// Every process on a GPU, with what /proc and the lease store say about it:
// the rows of `gpupin ps` and the leftovers `doctor` reports.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/gpu.h"
#include "core/lease.h"
#include "core/leftovers.h"
#include "sys/procfs.h"

namespace gpupin {

struct GpuProcessRow {
  uint32_t gpu_index = 0;
  std::optional<uint32_t> mig_index;
  GpuProcess process;
  // False when the PID is not in our /proc (another PID namespace: NVML
  // reports host PIDs); the fields below are then unknown.
  bool visible = false;
  std::optional<uint32_t> uid;
  std::string user;
  std::string command;
  std::optional<uint64_t> elapsed_seconds;
  uint64_t start_time_ticks = 0;  // with the pid, names the process (a pid is reused)
  bool stopped = false;           // state T or t
  std::optional<std::string> container_id;
  std::optional<std::string> lease_id;         // the live gpupin job it belongs to
  std::optional<std::string> leftover_reason;  // see LeftoverReason in core/doctor.h
};

// One row per process and GPU (MIG instances included), in GPU order.
// `leases` are all lease records (live or not); nullopt when they could not
// be read. A process belongs to a job when it runs under the holder of the
// live lease its GPUPIN_LEASE_ID names, and is then never a leftover; one
// whose GPUPIN_LEASE_ID names no live lease (its holder died, its file is
// gone) is, but only when the leases are known: unread, every job would
// look gone.
std::vector<GpuProcessRow> DescribeGpuProcessRows(const Inventory& inventory,
                                                  const std::optional<std::vector<Lease>>& leases,
                                                  const LivenessFacts& liveness,
                                                  const ProcFs& procfs);

// The rows that are left over, one entry per process (MergeLeftovers);
// callers_own compares with `caller_uid`.
std::vector<LeftoverProcess> LeftoversOf(const std::vector<GpuProcessRow>& rows,
                                         uint32_t caller_uid);

}  // namespace gpupin
