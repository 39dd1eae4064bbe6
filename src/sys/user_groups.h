// The groups a user belongs to, for per-group house rules
// ([limits.groups.NAME] in the admin's config).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/house_rules.h"

namespace gpupin {

// Names of the groups `uid` belongs to (its primary group first), from the
// password and group databases; empty for a uid with no password entry.
std::vector<std::string> UserGroups(uint32_t uid);

// UserGroups(uid) where `rules` cap some group, else none: listing a user's
// groups loads every NSS module of the group database (a sixth of what a
// pick costs), for rules that could not use them.
std::vector<std::string> GroupsTheRulesCap(const HouseRules& rules, uint32_t uid);

// The caps `rules` set for user `uid`, as that user and a member of their
// groups.
Caps CapsOfUser(const HouseRules& rules, uint32_t uid);

}  // namespace gpupin
