#include "core/leftovers.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace gpupin {

std::vector<LeftoverProcess> MergeLeftovers(const std::vector<LeftoverProcess>& per_gpu) {
  std::vector<LeftoverProcess> merged;
  std::map<uint32_t, size_t> position;
  for (const LeftoverProcess& entry : per_gpu) {
    auto [at, added] = position.emplace(entry.pid, merged.size());
    if (added) {
      merged.push_back(entry);
      continue;
    }
    LeftoverProcess& process = merged[at->second];
    process.gpu_indices.insert(process.gpu_indices.end(), entry.gpu_indices.begin(),
                               entry.gpu_indices.end());
    if (entry.used_memory_bytes) {
      process.used_memory_bytes = process.used_memory_bytes.value_or(0) + *entry.used_memory_bytes;
    }
  }
  for (LeftoverProcess& process : merged) {
    std::sort(process.gpu_indices.begin(), process.gpu_indices.end());
    process.gpu_indices.erase(std::unique(process.gpu_indices.begin(), process.gpu_indices.end()),
                              process.gpu_indices.end());
  }
  return merged;
}

std::vector<KillDecision> DecideLeftoverKills(const std::vector<LeftoverProcess>& leftovers,
                                              const KillRules& rules) {
  std::vector<KillDecision> decisions;
  for (const LeftoverProcess& process : leftovers) {
    KillDecision decision{process, true, ""};
    if (rules.protected_pids.contains(process.pid)) {
      decision = {process, false, "gpupin runs in it"};
    } else if (!process.callers_own && !rules.all_users) {
      decision = {process, false,
                  fmt::format("{}'s, not yours (root ends it with --all-users)", process.user)};
    }
    decisions.push_back(std::move(decision));
  }
  return decisions;
}

}  // namespace gpupin
