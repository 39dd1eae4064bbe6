// The house rules an admin writes once for a shared server
// (/etc/gpupin/config.toml, [limits]): per-user and per-job caps, cards kept
// for interactive work, and the queue's order. Pure values: the config layer
// (cli) reads and checks the file, the queue decision (core) applies them.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/lease.h"

namespace gpupin {

enum class QueueOrder { kFair, kFifo };

// Caps that may differ per user or per group ([limits.users.NAME],
// [limits.groups.NAME]); absent: no limit.
struct Caps {
  std::optional<int> max_gpus_per_user;
  std::optional<int> max_gpus_per_job;
  friend bool operator==(const Caps&, const Caps&) = default;
};

// Where a rule was written, for messages that name it:
// "max_gpus_per_user = 2 in /etc/gpupin/config.toml:4".
struct RuleSource {
  std::string file;
  int line = 0;
  friend bool operator==(const RuleSource&, const RuleSource&) = default;
};

struct HouseRules {
  Caps caps;                               // for everyone, root included
  std::map<std::string, Caps> user_caps;   // by user name; wins over groups
  std::map<std::string, Caps> group_caps;  // by group name
  // Cards no request takes unless it names them with --only: NVML indices or
  // UUID prefixes, as --only takes them.
  std::vector<std::string> reserved;
  QueueOrder queue = QueueOrder::kFair;
  // The admin file the rules came from; empty when there is none.
  std::string file;
  // The line of each rule written in `file`, by its key: "queue",
  // "max_gpus_per_user", "users.alice.max_gpus_per_job",
  // "groups.interns.max_gpus_per_user", "reserved".
  std::map<std::string, int> lines;
  friend bool operator==(const HouseRules&, const HouseRules&) = default;
};

// One cap as it applies to one user, and the rule that set it.
struct AppliedCap {
  std::optional<int> limit;  // nullopt: no limit
  // The rule's key in HouseRules::lines ("max_gpus_per_user",
  // "groups.interns.max_gpus_per_user"); empty when no rule sets it.
  std::string rule;
};

enum class CapKind { kPerUser, kPerJob };

// The cap of `kind` for `user`, a member of `groups`: the user's own entry,
// else the strictest entry among their groups, else the one for everyone.
AppliedCap CapFor(const HouseRules& rules, CapKind kind, const std::string& user,
                  const std::vector<std::string>& groups);

// Whether any rule caps the cards of a user (for everyone, a user or a group).
bool AnyPerUserCap(const HouseRules& rules);

// "max_gpus_per_user = 2 in /etc/gpupin/config.toml:4", for messages.
std::string DescribeCap(const HouseRules& rules, const AppliedCap& cap);

// "reserved = [\"3\"] in /etc/gpupin/config.toml", as messages name the rule.
std::string DescribeReserved(const HouseRules& rules);

// The admin file the rules came from, as messages name it ("the admin
// config" for rules given without one).
std::string RulesFileName(const HouseRules& rules);

// Cards each user holds now: the distinct cards of that user's live leases
// and reservations together (a shared lease counts its card).
std::map<uint32_t, int> CardsHeldByUser(const std::vector<Lease>& live_leases);

}  // namespace gpupin
