#include "core/house_rules.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>

namespace gpupin {
namespace {

std::optional<int> Get(const Caps& caps, CapKind kind) {
  return kind == CapKind::kPerUser ? caps.max_gpus_per_user : caps.max_gpus_per_job;
}

std::string KeyOf(CapKind kind) {
  return kind == CapKind::kPerUser ? "max_gpus_per_user" : "max_gpus_per_job";
}

}  // namespace

AppliedCap CapFor(const HouseRules& rules, CapKind kind, const std::string& user,
                  const std::vector<std::string>& groups) {
  if (auto own = rules.user_caps.find(user); own != rules.user_caps.end()) {
    if (std::optional<int> limit = Get(own->second, kind))
      return {limit, fmt::format("users.{}.{}", user, KeyOf(kind))};
  }
  AppliedCap strictest;
  for (const std::string& group : groups) {
    auto entry = rules.group_caps.find(group);
    if (entry == rules.group_caps.end()) continue;
    std::optional<int> limit = Get(entry->second, kind);
    if (limit && (!strictest.limit || *limit < *strictest.limit))
      strictest = {limit, fmt::format("groups.{}.{}", group, KeyOf(kind))};
  }
  if (strictest.limit) return strictest;
  if (std::optional<int> limit = Get(rules.caps, kind)) return {limit, KeyOf(kind)};
  return {};
}

bool AnyPerUserCap(const HouseRules& rules) {
  auto capped = [](const auto& entry) { return entry.second.max_gpus_per_user.has_value(); };
  return rules.caps.max_gpus_per_user.has_value() ||
         std::any_of(rules.user_caps.begin(), rules.user_caps.end(), capped) ||
         std::any_of(rules.group_caps.begin(), rules.group_caps.end(), capped);
}

std::string DescribeReserved(const HouseRules& rules) {
  return fmt::format("reserved = [\"{}\"] in {}", fmt::join(rules.reserved, "\", \""),
                     RulesFileName(rules));
}

std::string RulesFileName(const HouseRules& rules) {
  return rules.file.empty() ? "the admin config" : rules.file;
}

std::string DescribeCap(const HouseRules& rules, const AppliedCap& cap) {
  if (!cap.limit) return "no limit";
  // The key as written: a per-user or per-group entry's last word, in its
  // section.
  std::string key = cap.rule.substr(cap.rule.rfind('.') + 1);
  auto line = rules.lines.find(cap.rule);
  std::string where =
      line == rules.lines.end() ? rules.file : fmt::format("{}:{}", rules.file, line->second);
  std::string section =
      cap.rule.find('.') == std::string::npos
          ? ""
          : fmt::format(" of [limits.{}]", cap.rule.substr(0, cap.rule.rfind('.')));
  return fmt::format("{} = {}{} in {}", key, *cap.limit, section, where);
}

std::map<uint32_t, int> CardsHeldByUser(const std::vector<Lease>& live_leases) {
  std::map<uint32_t, std::set<std::string>> cards;
  for (const Lease& lease : live_leases)
    cards[lease.uid].insert(lease.gpu_uuids.begin(), lease.gpu_uuids.end());
  std::map<uint32_t, int> held;
  for (const auto& [uid, uuids] : cards) held[uid] = static_cast<int>(uuids.size());
  return held;
}

}  // namespace gpupin
