// The groups a user belongs to, for per-group house rules
// ([limits.groups.NAME] in the admin's config).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gpupin {

// Names of the groups `uid` belongs to (its primary group first), from the
// password and group databases; empty for a uid with no password entry.
std::vector<std::string> UserGroups(uint32_t uid);

}  // namespace gpupin
