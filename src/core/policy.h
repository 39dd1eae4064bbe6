// The selection policy (doc/policy.md): which GPUs a
// request gets, and for every card why it was taken or passed over. Pure:
// devices, leases, process owners and the caller arrive as values.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/gpu.h"
#include "core/lease.h"
#include "core/time_format.h"

namespace gpupin {

// --max-used accepts a size or a percentage of the card's memory.
struct UsageLimit {
  std::optional<uint64_t> bytes;
  std::optional<double> percent;
};

// What a card may use and still be free, unless the request says.
constexpr uint64_t kDefaultExclusiveMaxUsedBytes = uint64_t{1} << 30;
constexpr double kDefaultSharedMaxUsedPercent = 80;
constexpr double kDefaultExclusiveMaxUtilPercent = 10;

enum class Preference { kFree, kUtil, kIndex };

struct Request {
  int count = 1;
  std::optional<uint64_t> mem_bytes;       // present: a shared request
  std::optional<UsageLimit> max_used;      // default: exclusive 1 GiB, shared 80 %
  std::optional<double> max_util_percent;  // default: exclusive 10 %, shared none
  std::vector<std::string> only;           // NVML indices or UUID prefixes
  std::vector<std::string> exclude;        // NVML indices or UUID prefixes
  std::vector<std::string> order;          // preference order of cards
  Preference prefer = Preference::kFree;
  bool near = true;
  bool mine_free = false;
  std::optional<int> max_jobs;  // default: exclusive 1, shared unlimited
  // A foreign compute process younger than this makes its card busy
  // whatever it uses: it is probably still allocating. 0: never.
  int64_t settle_ms = 120'000;
  // --wait=0 was given: the advice on a refusal says how to wait instead.
  bool waiting_declined = false;
};

// Who runs a process seen on a GPU (from /proc), for --mine-free, for the
// job's own processes, and for naming blockers.
struct ProcessOwner {
  std::optional<uint32_t> uid;  // nullopt: not visible from here (other PID namespace)
  std::string user;
  std::string command;
  std::optional<std::string> lease_id;  // the gpupin job it descends from
  std::optional<int64_t> age_ms;        // how long it has run; nullopt: unknown
};

struct Caller {
  uint32_t uid = 0;
  std::string user;
  // The lease of the gpupin job the caller runs in (`gpupin run` inside a
  // job, or after `eval "$(gpupin env)"`): its cards are the caller's own,
  // so that lease never blocks it. Set only once the lease's holder is
  // known to be the caller's ancestor.
  std::optional<std::string> job_lease_id;
  // The calling shell (the process a pick would follow). A reservation it
  // already holds is named as its own, since only its user can tell whether
  // that reservation's job has come and gone.
  std::optional<ProcessIdentity> shell;
};

struct PolicyInput {
  std::vector<Gpu> gpus;
  std::vector<std::vector<std::optional<TopologyLevel>>> topology;  // as in Inventory
  std::vector<Lease> live_leases;                   // already filtered by EvaluateLease
  std::map<uint32_t, ProcessOwner> process_owners;  // by PID
  Caller caller;
  // NVML indices the caller may use (its CUDA_VISIBLE_DEVICES or Slurm
  // allocation); nullopt: all.
  std::optional<std::vector<uint32_t>> allowed_gpu_indices;
  // Where allowed_gpu_indices comes from, as the no-GPU error names it:
  // "CUDA_VISIBLE_DEVICES=2,3".
  std::string allowed_by = "CUDA_VISIBLE_DEVICES";
  Request request;
  // Cards the admin keeps for interactive work (HouseRules::reserved, NVML
  // indices or UUID prefixes; one that names no card here is ignored): never
  // chosen unless --only names them. `reserved_by` is the rule, as reasons
  // name it.
  std::vector<std::string> reserved;
  std::string reserved_by = "reserved in the admin config";
  // How "since 14:05" is written in reasons, on the day of now_unix_ms
  // ("since Dec 3 14:05" on another day). Tests pass FormatUtcClock.
  ClockFormatter format_clock = FormatLocalClock;
  int64_t now_unix_ms = 0;
};

struct CardVerdict {
  uint32_t gpu_index = 0;
  bool eligible = false;
  bool chosen = false;
  // One line: "free: 79.1G free, 0% util", "busy: 23.1G used > 1G (--max-used)",
  // "leased by alice (pid 4121, python train.py) since 14:05",
  // "chosen: 79.1G free, 0% util; ranked by free memory".
  std::string reason;
};

struct Selection {
  std::vector<uint32_t> chosen_gpu_indices;  // in the order the job should see them
  std::vector<CardVerdict> verdicts;         // one per GPU, in NVML order
};

// What a failed choice still tells.
struct ChoiceFailure {
  std::vector<CardVerdict> verdicts;  // one per GPU, in NVML order
  // False when fewer cards than asked can run jobs at all (lost, in reset,
  // MIG-enabled, PROHIBITED): no lease ending would free enough, so a
  // --wait would hold the queue's head for ever.
  bool waiting_can_help = true;
};

// Validates the request (ExitCode::kUsage for contradictions such as a
// count of 0 or an id in --only that names no GPU). When fewer than
// request.count cards are eligible, returns ExitCode::kNoGpu with one line
// naming what blocked each card; the verdicts are still useful for
// --explain, so they come back through the out-parameter when it is given,
// with whether waiting could help.
// A count that no state of the cards could meet (more than exist, than the
// caller's allocation, than --only/--exclude leave, or than have --mem) is
// kNoGpu too, with waiting_can_help false: waiting would never help.
// The chosen cards come in NVML order; the rules and their reasons are at the
// top of policy.cc.
Result<Selection> ChooseGpus(const PolicyInput& input, ChoiceFailure* failure = nullptr);

// The positions in `gpus` of the cards the admin reserved (NVML indices or
// UUID prefixes); an id that names no card here is ignored.
std::set<size_t> ReservedGpuPositions(const std::vector<Gpu>& gpus,
                                      const std::vector<std::string>& reserved);

// Why each id of the admin's `reserved` that names no single card here (an
// index past the last card, a UUID prefix of no card or of two) reserves
// nothing: "reserved 9: no GPU has that index (NVML indices here run 0 to
// 3)". Empty when every id names a card.
std::vector<std::string> ReservedIdProblems(const std::vector<Gpu>& gpus,
                                            const std::vector<std::string>& reserved);

}  // namespace gpupin
