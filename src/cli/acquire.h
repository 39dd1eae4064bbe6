// Choosing GPUs and recording the lease as one step under the state lock,
// and waiting in the FIFO queue when nothing fits (doc/state-dir.md).
// Shared by pick, run, env and docker.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cli/world.h"
#include "core/lease.h"
#include "core/policy.h"

namespace gpupin {

struct AcquireRequest {
  Request request;
  bool wait = false;
  std::optional<int64_t> wait_ms;  // with wait: nullopt waits without limit
  int64_t poll_ms = 2000;
  ProcessIdentity holder;  // who the lease lives as long as
  // The caller's shell, whose reservations (pick's) are the caller's own:
  // one that blocks the request is named so, with how to release it.
  std::optional<ProcessIdentity> shell;
  std::string command;                        // shown to other users
  std::optional<int64_t> reservation_ttl_ms;  // pick/env: a reservation
};

struct Acquired {
  Lease lease;
  Inventory inventory;  // as seen when choosing
  Selection selection;
};

// On failure without --wait: ExitCode::kNoGpu naming what blocked each
// card; `verdicts` (when given) then holds the per-card reasons.
Result<Acquired> AcquireGpus(World& world, const AcquireRequest& request,
                             std::vector<CardVerdict>* verdicts = nullptr);

}  // namespace gpupin
