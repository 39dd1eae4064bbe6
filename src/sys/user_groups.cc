#include "sys/user_groups.h"

#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include <algorithm>

#include "sys/procfs.h"

namespace gpupin {

std::vector<std::string> UserGroups(uint32_t uid) {
  long suggested = sysconf(_SC_GETPW_R_SIZE_MAX);
  std::vector<char> buffer(suggested > 0 ? static_cast<size_t>(suggested) : 16384);
  passwd entry{};
  passwd* found = nullptr;
  if (getpwuid_r(uid, &entry, buffer.data(), buffer.size(), &found) != 0 || found == nullptr ||
      found->pw_name == nullptr) {
    return {};
  }
  std::vector<gid_t> gids(64);
  int count = static_cast<int>(gids.size());
  while (getgrouplist(found->pw_name, found->pw_gid, gids.data(), &count) < 0 &&
         gids.size() < 65536) {
    gids.resize(std::max<size_t>(static_cast<size_t>(count), gids.size() * 2));
    count = static_cast<int>(gids.size());
  }
  std::vector<std::string> names;
  for (int i = 0; i < count && i < static_cast<int>(gids.size()); ++i) {
    std::vector<char> group_buffer(16384);
    group group_entry{};
    group* group_found = nullptr;
    if (getgrgid_r(gids[static_cast<size_t>(i)], &group_entry, group_buffer.data(),
                   group_buffer.size(), &group_found) == 0 &&
        group_found && group_found->gr_name) {
      names.emplace_back(group_found->gr_name);
    }
  }
  return names;
}

std::vector<std::string> GroupsTheRulesCap(const HouseRules& rules, uint32_t uid) {
  if (rules.group_caps.empty()) return {};
  return UserGroups(uid);
}

Caps CapsOfUser(const HouseRules& rules, uint32_t uid) {
  const std::string name = UserName(uid);
  const std::vector<std::string> groups = GroupsTheRulesCap(rules, uid);
  return {CapFor(rules, CapKind::kPerUser, name, groups).limit,
          CapFor(rules, CapKind::kPerJob, name, groups).limit};
}

}  // namespace gpupin
