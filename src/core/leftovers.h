// Leftover GPU processes: one entry per process however many GPUs it holds
// memory on, and which of them `gpupin ps --leftovers --kill` may end. Pure:
// cli/ gathers the processes from NVML and /proc; sys/process_ender ends them.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace gpupin {

// A process that holds GPU memory although the job it belonged to is gone
// (its gpupin lease holder died, or its parent is init or a zombie), or that
// is stopped.
struct LeftoverProcess {
  std::vector<uint32_t> gpu_indices;  // ascending, each once
  uint32_t pid = 0;
  std::string user;
  std::string command;
  std::optional<uint64_t> used_memory_bytes;  // over all its GPUs; nullopt when none is known
  std::string reason;        // "its gpupin lease has ended", "orphaned", "parent is a zombie"
  bool callers_own = false;  // runs as the caller's uid
  bool stopped = false;      // state T: acts on SIGTERM only once continued
};

// Folds `per_gpu` (one entry per process and GPU, as NVML lists them) into
// one entry per process, in the order each pid first appears: its GPUs
// joined, its memory summed (known when known on any GPU).
std::vector<LeftoverProcess> MergeLeftovers(const std::vector<LeftoverProcess>& per_gpu);

struct KillRules {
  bool all_users = false;  // root's --all-users: other users' leftovers too
  // gpupin itself and the processes it runs under: never ended.
  std::set<uint32_t> protected_pids;
};

struct KillDecision {
  LeftoverProcess process;
  bool end = false;
  std::string why_not;  // set when !end
};

// Which leftovers to end: the caller's own, unless protected; another
// user's only with all_users. A live job's processes are never leftovers
// (cli/gpu_processes) and so never come here.
std::vector<KillDecision> DecideLeftoverKills(const std::vector<LeftoverProcess>& leftovers,
                                              const KillRules& rules);

}  // namespace gpupin
