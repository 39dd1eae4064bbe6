#include "core/process_tree.h"

namespace gpupin {

std::optional<int> NearestAncestor(int pid, const ParentOf& parent_of,
                                   const std::function<bool(int pid)>& wanted) {
  std::optional<int> at = pid;
  for (int steps = 0; steps < 4096 && at && *at > 0; ++steps) {
    if (wanted(*at)) return at;
    std::optional<int> parent = parent_of(*at);
    at = parent == at ? std::nullopt : parent;
  }
  return std::nullopt;
}

}  // namespace gpupin
