// Walking up a process tree, on any source of parent pids (/proc, or a
// table in a test). Pure.
#pragma once

#include <functional>
#include <optional>

namespace gpupin {

// The parent pid of a process; nullopt when it is gone or unreadable.
using ParentOf = std::function<std::optional<int>(int pid)>;

// The nearest of `pid` and its ancestors for which `wanted` holds, or
// nullopt. The walk stops where a parent is unknown, at pid 0, and after
// 4096 steps: a fake or racing tree could contain a cycle.
std::optional<int> NearestAncestor(int pid, const ParentOf& parent_of,
                                   const std::function<bool(int pid)>& wanted);

}  // namespace gpupin
