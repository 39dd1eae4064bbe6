#include "core/policy.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <limits>
#include <set>
#include <string_view>
#include <tuple>

#include "core/gpu_list.h"
#include "core/printable.h"
#include "core/topology.h"
#include "core/units.h"

// Decisions this file makes beyond doc/policy.md (each one tested):
//
// - A process on a card does not by itself make it busy: --max-used and
//   --max-util decide, so a 300 MiB foreign process under the 1 GiB threshold
//   leaves the card free, and the verdict names the process. With --mine-free
//   the caller's own processes are subtracted from the memory in use, and the
//   utilization check is skipped when every process on the card is the
//   caller's (utilization cannot be attributed per process). Processes whose
//   owner is unknown (another PID namespace) count as foreign.
// - Except while it settles: a foreign compute process younger than
//   --settle (120 s) makes its card busy whatever it uses, since a job that
//   is still loading has not allocated its memory yet. Graphics-only
//   processes (Xorg) do not settle; a process of unknown age is judged by
//   what it uses.
// - Every live lease blocks an exclusive request, the caller's own included:
//   two `pick`s by one user at the same moment must get two cards.
// - A live reservation blocks every request, shared or not. A reservation
//   ends when a process that was not there appears on its cards, so a second
//   job starting beside it would end it early and its memory would no longer
//   be accounted for.
// - Shared accounting (--mem, bytes per GPU of the lease): each live shared
//   job counts max(its lease bytes, what its processes use on the card), and
//   everything else in use counts as it is, i.e. committed = used +
//   sum(max(0, lease bytes - job usage)). Using the card's own "used" rather
//   than a sum over processes counts memory NVML attributes to no process.
//   A job's processes are those /proc traces to its lease, and its holder.
// - --max-jobs is for shared requests; without --mem a job takes its cards
//   alone, so a value other than 1 is a usage error.
// - Waiting never helps when the request cannot be met by any state of the
//   cards: more GPUs than exist, than the caller's allocation, than --only and
//   --exclude leave, or than have the --mem asked for. That is kNoGpu (no
//   GPU can be had, as for any other size), and waiting cannot help. Lost,
//   MIG-enabled and PROHIBITED cards may come back, so they count as kNoGpu,
//   but a request that only they could complete is not worth a place in the
//   queue (ChoiceFailure::waiting_can_help; cli/acquire lets a waiter that
//   was once servable keep waiting).
// - For N>1 with --near, closeness comes before --order and --prefer, which
//   then rank within the closest class (see ClosestSet).
// - The chosen cards are returned in NVML (PCI) order, whatever ranked them:
//   cuda:0 is then the lowest-numbered card, as nvidia-smi lists them.
// - Whole-GPU selection only: a MIG-enabled GPU is passed over; choosing MIG
//   instances is not implemented.

namespace gpupin {
namespace {

constexpr size_t kMaxCommandChars = 48;
constexpr size_t kMaxIdChars = 64;

std::string FormatPercent(double percent) { return fmt::format("{:g}%", percent); }

bool StartsWithIgnoreCase(std::string_view text, std::string_view prefix) {
  if (prefix.size() > text.size()) return false;
  return std::equal(prefix.begin(), prefix.end(), text.begin(), [](char a, char b) {
    return std::tolower(static_cast<unsigned char>(a)) ==
           std::tolower(static_cast<unsigned char>(b));
  });
}

// An NVML index, or a prefix of a UUID with or without its "GPU-".
Result<size_t> ResolveGpuId(const std::vector<Gpu>& gpus, const std::string& id,
                            std::string_view option) {
  std::string shown = Printable(id, kMaxIdChars);
  if (id.empty()) {
    return MakeError(ExitCode::kUsage,
                     fmt::format("{}: empty GPU id; give an NVML index or a UUID prefix", option));
  }
  if (std::all_of(id.begin(), id.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    uint32_t index = 0;
    auto [end, ec] = std::from_chars(id.data(), id.data() + id.size(), index);
    for (size_t position = 0; ec == std::errc() && position < gpus.size(); ++position) {
      if (gpus[position].index == index) return position;
    }
    std::string known = gpus.empty() ? "no GPU was found"
                                     : fmt::format("NVML indices here run {} to {}",
                                                   gpus.front().index, gpus.back().index);
    return MakeError(ExitCode::kUsage,
                     fmt::format("{} {}: no GPU has that index ({})", option, shown, known));
  }
  std::vector<size_t> matches;
  for (size_t position = 0; position < gpus.size(); ++position) {
    std::string_view uuid = gpus[position].uuid;
    std::string_view bare = StartsWithIgnoreCase(uuid, "GPU-") ? uuid.substr(4) : uuid;
    if (StartsWithIgnoreCase(uuid, id) || StartsWithIgnoreCase(bare, id))
      matches.push_back(position);
  }
  if (matches.size() == 1) return matches.front();
  if (matches.empty() && StartsWithIgnoreCase(id, "MIG-")) {
    // Policy options name whole cards; a MIG instance is a part of one.
    for (const Gpu& gpu : gpus) {
      for (const MigDevice& mig : gpu.mig_devices) {
        if (!StartsWithIgnoreCase(mig.uuid, id)) continue;
        std::string message = fmt::format(
            "{} {}: a MIG instance of GPU {}; {} names whole cards: "
            "give {} or its UUID",
            option, shown, gpu.index, option, gpu.index);
        // Naming the card leads nowhere when it cannot be chosen whole.
        if (gpu.mig_enabled.value_or(false)) {
          message += fmt::format(
              ", though no card in MIG mode is chosen: a job uses this instance with "
              "CUDA_VISIBLE_DEVICES={}",
              Printable(mig.uuid));
        }
        return MakeError(ExitCode::kUsage, message);
      }
    }
    return MakeError(ExitCode::kUsage,
                     fmt::format("{} {}: a MIG instance's UUID; {} names whole cards by NVML "
                                 "index or GPU- UUID; see gpupin ls",
                                 option, shown, option));
  }
  if (matches.empty()) {
    // What else the id may have been meant as, since it is no UUID prefix.
    const bool digits_around_dash = id.find('-') != std::string_view::npos && id.find('-') > 0 &&
                                    id.find('-') + 1 < id.size() &&
                                    id.find_first_not_of("0123456789-") == std::string_view::npos;
    // "-1", as CUDA_VISIBLE_DEVICES=-1 hides every card.
    const bool negative = id.size() > 1 && id.front() == '-' &&
                          id.find_first_not_of("0123456789", 1) == std::string_view::npos;
    std::string meant =
        negative ? std::string("not an NVML index: they count from 0 (gpupin ls lists them)")
        : digits_around_dash
            ? fmt::format("{} takes no ranges: list the indices, e.g. 0,1,2", option)
        : StartsWithIgnoreCase(id, "cuda:")
            ? "cuda:N is CUDA's numbering, which CUDA_VISIBLE_DEVICES changes: give the NVML "
              "index (gpupin map cuda:N says which GPU it is)"
        : id.find(':') != std::string_view::npos
            ? "a PCI bus id? give the GPU's NVML index or UUID (gpupin ls lists both)"
            : "no GPU has a UUID that starts so; see gpupin ls";
    return MakeError(ExitCode::kUsage, fmt::format("{} {}: {}", option, shown, meant));
  }
  std::vector<std::string> names;
  names.reserve(matches.size());
  for (size_t position : matches) names.push_back(fmt::format("GPU {}", gpus[position].index));
  return MakeError(ExitCode::kUsage,
                   fmt::format("{} {}: ambiguous, matches {}; give more of the UUID", option, shown,
                               fmt::join(names, ", ")));
}

}  // namespace

std::set<size_t> ReservedGpuPositions(const std::vector<Gpu>& gpus,
                                      const std::vector<std::string>& reserved) {
  std::set<size_t> positions;
  for (const std::string& id : reserved) {
    if (auto position = ResolveGpuId(gpus, id, "reserved")) positions.insert(*position);
  }
  return positions;
}

std::vector<std::string> ReservedIdProblems(const std::vector<Gpu>& gpus,
                                            const std::vector<std::string>& reserved) {
  std::vector<std::string> problems;
  for (const std::string& id : reserved) {
    Result<size_t> position = ResolveGpuId(gpus, id, "reserved");
    if (!position.ok()) problems.push_back(position.error().message);
  }
  return problems;
}

namespace {

struct ResolvedIds {
  std::optional<std::set<size_t>> only;
  std::set<size_t> exclude;
  std::set<size_t> reserved;
  std::vector<size_t> order;  // positions, first listed first, no repeats
};

Result<ResolvedIds> ResolveRequestIds(const std::vector<Gpu>& gpus, const Request& request,
                                      const std::vector<std::string>& reserved) {
  ResolvedIds ids;
  ids.reserved = ReservedGpuPositions(gpus, reserved);
  if (!request.only.empty()) ids.only.emplace();
  for (const std::string& id : request.only) {
    auto position = ResolveGpuId(gpus, id, "--only");
    if (!position) return position.error();
    ids.only->insert(*position);
  }
  for (const std::string& id : request.exclude) {
    auto position = ResolveGpuId(gpus, id, "--exclude");
    if (!position) return position.error();
    ids.exclude.insert(*position);
  }
  for (const std::string& id : request.order) {
    auto position = ResolveGpuId(gpus, id, "--order");
    if (!position) return position.error();
    if (std::find(ids.order.begin(), ids.order.end(), *position) == ids.order.end()) {
      ids.order.push_back(*position);
    }
  }
  return ids;
}

// The request with its defaults filled in.
struct Limits {
  bool shared = false;
  uint64_t mem_bytes = 0;
  UsageLimit max_used;
  std::optional<double> max_util_percent;
  std::optional<int> max_jobs;  // shared only; exclusive requests are always alone
};

Result<Limits> CheckRequest(const Request& request) {
  if (request.count < 1) {
    return MakeError(ExitCode::kUsage,
                     fmt::format("invalid GPU count {}; ask for at least 1", request.count));
  }
  Limits limits;
  limits.shared = request.mem_bytes.has_value();
  if (limits.shared && *request.mem_bytes == 0) {
    return MakeError(ExitCode::kUsage, "--mem 0: give the memory the job needs, e.g. --mem 24G");
  }
  limits.mem_bytes = request.mem_bytes.value_or(0);
  if (request.max_jobs) {
    if (*request.max_jobs < 1) {
      return MakeError(ExitCode::kUsage,
                       fmt::format("invalid --max-jobs {}; give at least 1", *request.max_jobs));
    }
    if (!limits.shared && *request.max_jobs != 1) {
      return MakeError(
          ExitCode::kUsage,
          fmt::format("--max-jobs {} needs --mem: without it a job takes its cards alone",
                      *request.max_jobs));
    }
    if (limits.shared) limits.max_jobs = request.max_jobs;
  }
  if (request.max_used) {
    limits.max_used = *request.max_used;
  } else if (limits.shared) {
    limits.max_used.percent = kDefaultSharedMaxUsedPercent;
  } else {
    limits.max_used.bytes = kDefaultExclusiveMaxUsedBytes;
  }
  if (limits.max_used.percent &&
      !(*limits.max_used.percent >= 0 && *limits.max_used.percent <= 100)) {
    return MakeError(ExitCode::kUsage, "invalid --max-used percentage; give 0 to 100");
  }
  limits.max_util_percent = request.max_util_percent;
  if (!limits.max_util_percent && !limits.shared)
    limits.max_util_percent = kDefaultExclusiveMaxUtilPercent;
  if (limits.max_util_percent &&
      !(*limits.max_util_percent >= 0 && *limits.max_util_percent <= 100)) {
    return MakeError(ExitCode::kUsage, "invalid --max-util percentage; give 0 to 100");
  }
  return limits;
}

// Why a card can never serve this request, whatever runs on it.
enum class Excluded { kNo, kNotAllowed, kNotInOnly, kExcluded, kReserved, kTooSmall };

Excluded ExclusionOf(const PolicyInput& input, const ResolvedIds& ids, const Limits& limits,
                     size_t position) {
  const Gpu& gpu = input.gpus[position];
  if (input.allowed_gpu_indices &&
      std::find(input.allowed_gpu_indices->begin(), input.allowed_gpu_indices->end(), gpu.index) ==
          input.allowed_gpu_indices->end()) {
    return Excluded::kNotAllowed;
  }
  if (ids.only && !ids.only->contains(position)) return Excluded::kNotInOnly;
  if (ids.exclude.contains(position)) return Excluded::kExcluded;
  if (ids.reserved.contains(position) && !(ids.only && ids.only->contains(position)))
    return Excluded::kReserved;
  if (limits.shared && gpu.memory_total_bytes && *gpu.memory_total_bytes < limits.mem_bytes) {
    return Excluded::kTooSmall;
  }
  return Excluded::kNo;
}

// kNoGpu when no state of the cards could give `count` of them.
// "no GPU is", "only 1 is", "only 3 are": how many cards meet a condition,
// as the end of "asked for 4 GPUs but ...".
std::string OnlyCount(long count, std::string_view singular_verb, std::string_view plural_verb) {
  if (count == 0) return fmt::format("no GPU {}", singular_verb);
  if (count == 1) return fmt::format("only 1 {}", singular_verb);
  return fmt::format("only {} {}", count, plural_verb);
}

Status CheckCountIsPossible(const std::vector<Excluded>& exclusions, const Limits& limits,
                            int count, const PolicyInput& input) {
  const std::string& allowed_by = input.allowed_by;
  auto remaining_after = [&](Excluded last) {
    return std::count_if(exclusions.begin(), exclusions.end(),
                         [&](Excluded e) { return e == Excluded::kNo || e > last; });
  };
  size_t wanted = static_cast<size_t>(count);
  std::string asked = fmt::format("asked for {} GPU{}", count, count == 1 ? "" : "s");
  if (exclusions.size() < wanted) {
    return MakeError(ExitCode::kNoGpu,
                     fmt::format("{} but this machine has {}", asked, exclusions.size()));
  }
  if (const auto allowed = remaining_after(Excluded::kNotAllowed);
      static_cast<size_t>(allowed) < wanted) {
    return MakeError(ExitCode::kNoGpu, fmt::format("{} but {} in your allocation, {}", asked,
                                                   OnlyCount(allowed, "is", "are"), allowed_by));
  }
  auto any = [&](Excluded reason) {
    return std::find(exclusions.begin(), exclusions.end(), reason) != exclusions.end();
  };
  // Cards --only names may exist and be free, yet lie outside the allocation.
  const bool limited = any(Excluded::kNotAllowed);
  const auto left = remaining_after(Excluded::kExcluded);
  if (static_cast<size_t>(left) < wanted) {
    return MakeError(ExitCode::kNoGpu,
                     fmt::format("{} but --only/--exclude leave {}{}", asked, left,
                                 limited ? " within your allocation, " + allowed_by : ""));
  }
  if (static_cast<size_t>(remaining_after(Excluded::kReserved)) < wanted) {
    // The reservation is not the whole story when other limits left fewer
    // cards than the machine has: say which.
    const bool narrowed = any(Excluded::kNotInOnly) || any(Excluded::kExcluded);
    std::string among;
    if (limited && narrowed) {
      among = fmt::format(" among the {} that your allocation and --only/--exclude leave", left);
    } else if (limited) {
      among = fmt::format(" among the {} in your allocation", left);
    } else if (narrowed) {
      among = fmt::format(" among the {} that --only/--exclude leave", left);
    }
    const long unreserved = remaining_after(Excluded::kReserved);
    const std::string reserved =
        unreserved == 0 ? fmt::format("every GPU{} is reserved for interactive work", among)
                        : fmt::format("{} not reserved for interactive work{}",
                                      OnlyCount(unreserved, "is", "are"), among);
    return MakeError(ExitCode::kNoGpu,
                     fmt::format("{} but {} ({}); name reserved cards with --only", asked, reserved,
                                 input.reserved_by));
  }
  if (static_cast<size_t>(remaining_after(Excluded::kTooSmall)) < wanted) {
    return MakeError(ExitCode::kNoGpu,
                     fmt::format("{} with --mem {} but {} that much memory", asked,
                                 FormatBytes(limits.mem_bytes),
                                 OnlyCount(remaining_after(Excluded::kTooSmall), "has", "have")));
  }
  return Ok{};
}

// What runs on one card and which gpupin jobs hold it.
struct CardState {
  std::vector<const Lease*> leases;        // live leases naming the card, oldest first
  std::vector<uint64_t> job_usage;         // per lease: memory its processes use here
  std::vector<const GpuProcess*> mine;     // the caller's processes outside any job here
  std::vector<const GpuProcess*> foreign;  // everyone else's, and unknown owners
  uint64_t mine_bytes = 0;
};

CardState StateOf(const PolicyInput& input, const Gpu& gpu) {
  CardState state;
  for (const Lease& lease : input.live_leases) {
    if (lease.id == input.caller.job_lease_id) continue;
    if (std::find(lease.gpu_uuids.begin(), lease.gpu_uuids.end(), gpu.uuid) !=
        lease.gpu_uuids.end()) {
      state.leases.push_back(&lease);
    }
  }
  std::stable_sort(state.leases.begin(), state.leases.end(), [](const Lease* a, const Lease* b) {
    return a->created_unix_ms < b->created_unix_ms;
  });
  state.job_usage.assign(state.leases.size(), 0);
  for (const GpuProcess& process : gpu.processes) {
    auto owner = input.process_owners.find(process.pid);
    const ProcessOwner* known = owner == input.process_owners.end() ? nullptr : &owner->second;
    auto job = std::find_if(state.leases.begin(), state.leases.end(), [&](const Lease* lease) {
      return (known && known->lease_id == lease->id) ||
             (lease->holder.pid > 0 && static_cast<uint32_t>(lease->holder.pid) == process.pid);
    });
    uint64_t bytes = process.used_memory_bytes.value_or(0);
    if (job != state.leases.end()) {
      state.job_usage[job - state.leases.begin()] += bytes;
    } else if (known && known->uid == input.caller.uid) {
      state.mine.push_back(&process);
      state.mine_bytes += bytes;
    } else {
      state.foreign.push_back(&process);
    }
  }
  return state;
}

class Describer {
 public:
  explicit Describer(const PolicyInput& input) : input_(input), clock_(input.format_clock) {}

  // "alice (pid 4121, python train.py)"
  std::string Holder(const Lease& lease, bool with_command) const {
    std::string who =
        lease.user.empty() ? fmt::format("uid {}", lease.uid) : Printable(lease.user, kMaxIdChars);
    if (!with_command || lease.command.empty())
      return fmt::format("{} (pid {})", who, lease.holder.pid);
    return fmt::format("{} (pid {}, {})", who, lease.holder.pid,
                       Printable(lease.command, kMaxCommandChars));
  }

  std::string Since(const Lease& lease) const {
    return clock_(lease.created_unix_ms, input_.now_unix_ms);
  }
  std::string Until(const Lease& lease) const {
    return clock_(*lease.reservation_deadline_unix_ms, input_.now_unix_ms);
  }

  // "pid 777 (carol, python eval.py) uses 12G"
  std::string Process(const GpuProcess& process) const {
    auto owner = input_.process_owners.find(process.pid);
    std::string who = "owner unknown";
    if (owner != input_.process_owners.end() && owner->second.uid) {
      const ProcessOwner& known = owner->second;
      who = known.user.empty() ? fmt::format("uid {}", *known.uid)
                               : Printable(known.user, kMaxIdChars);
      if (!known.command.empty()) who += ", " + Printable(known.command, kMaxCommandChars);
    }
    std::string text = fmt::format("pid {} ({})", process.pid, who);
    if (process.used_memory_bytes) text += " uses " + FormatBytes(*process.used_memory_bytes);
    return text;
  }

  // "foreign process: pid 777 (...) uses 12G and 2 more", naming the largest.
  std::string Processes(const char* label, const std::vector<const GpuProcess*>& processes) const {
    auto largest = std::max_element(processes.begin(), processes.end(), [](auto* a, auto* b) {
      return a->used_memory_bytes.value_or(0) < b->used_memory_bytes.value_or(0);
    });
    std::string text = fmt::format("{}: {}", label, Process(**largest));
    if (processes.size() > 1) text += fmt::format(" and {} more", processes.size() - 1);
    return text;
  }

 private:
  const PolicyInput& input_;
  ClockFormatter clock_;
};

// The verdict on one card before ranking, with what ranking needs.
struct Assessment {
  bool eligible = false;
  std::string reason;
  std::string status;            // eligible cards: "78.2G free, 0% util" and notes
  uint64_t available_bytes = 0;  // free memory (exclusive) or room left (shared)
  std::optional<uint32_t> util_percent;
  bool over_limit = false;       // blocked by --max-used/--max-util
  bool over_memory = false;      // blocked by --mem not fitting
  bool mine_would_free = false;  // --mine-free would have made it eligible
  bool unusable = false;         // lost, MIG-enabled or PROHIBITED: no lease ending frees it
};

const char* ExclusionReason(Excluded excluded) {
  switch (excluded) {
    case Excluded::kNotAllowed:
      return "not in CUDA_VISIBLE_DEVICES";
    case Excluded::kNotInOnly:
      return "not in --only";
    case Excluded::kExcluded:
      return "excluded by --exclude";
    case Excluded::kReserved:
    case Excluded::kTooSmall:
    case Excluded::kNo:
      break;
  }
  return "";
}

const char* ComputeModeName(ComputeMode mode) {
  return mode == ComputeMode::kExclusiveThread ? "EXCLUSIVE_THREAD" : "EXCLUSIVE_PROCESS";
}

class CardJudge {
 public:
  CardJudge(const PolicyInput& input, const Limits& limits)
      : input_(input), limits_(limits), describe_(input) {}

  Assessment Judge(const Gpu& gpu, Excluded excluded) const {
    Assessment result;
    result.util_percent = gpu.utilization_gpu_percent;
    if (excluded == Excluded::kTooSmall) {
      result.reason =
          fmt::format("too small: {} total < {} (--mem)", FormatBytes(*gpu.memory_total_bytes),
                      FormatBytes(limits_.mem_bytes));
      return result;
    }
    if (excluded == Excluded::kReserved) {
      result.reason = fmt::format("reserved for interactive work ({}); name it with --only",
                                  input_.reserved_by);
      return result;
    }
    if (excluded != Excluded::kNo) {
      result.reason = ExclusionReason(excluded);
      return result;
    }
    result.unusable = true;
    if (!gpu.healthy()) {
      // Whole: its second half says what to do (reset it, reboot).
      result.reason = "unhealthy: " + Printable(*gpu.health_error);
      return result;
    }
    if (gpu.mig_enabled.value_or(false)) {
      // Advice the user can follow: no option of gpupin's takes an instance.
      result.reason =
          "MIG enabled: gpupin chooses whole GPUs only (a job runs on an instance with "
          "CUDA_VISIBLE_DEVICES set to its MIG UUID, which gpupin ls lists)";
      return result;
    }
    if (gpu.compute_mode == ComputeMode::kProhibited) {
      result.reason = "PROHIBITED compute mode: no process may use it";
      return result;
    }
    result.unusable = false;
    CardState state = StateOf(input_, gpu);
    if (std::optional<std::string> held = HeldByLease(state)) {
      result.reason = *held;
      return result;
    }
    if (std::optional<std::string> exclusive = ExclusiveModeTaken(gpu, state)) {
      result.reason = *exclusive;
      return result;
    }
    if (limits_.max_jobs && state.leases.size() >= static_cast<size_t>(*limits_.max_jobs)) {
      result.reason = fmt::format("full: {} gpupin job{}, --max-jobs {}", state.leases.size(),
                                  state.leases.size() == 1 ? "" : "s", *limits_.max_jobs);
      return result;
    }
    JudgeUsage(gpu, state, result);
    return result;
  }

 private:
  // Reservations block everyone; exclusive leases too; shared leases block
  // exclusive requests only.
  std::optional<std::string> HeldByLease(const CardState& state) const {
    for (const Lease* lease : state.leases) {
      if (lease->is_reservation() && lease->holder == input_.caller.shell &&
          lease->uid == input_.caller.uid) {
        // A job that started and ended between two looks leaves no trace:
        // the reservation holds until its TTL (a loop of short jobs).
        return fmt::format(
            "reserved for this same shell (pid {}) until {}; if the job it was for has ended: "
            "gpupin release {}",
            lease->holder.pid, describe_.Until(*lease), lease->id);
      }
      if (lease->is_reservation()) {
        return fmt::format("reserved by {} until {}", describe_.Holder(*lease, false),
                           describe_.Until(*lease));
      }
    }
    for (const Lease* lease : state.leases) {
      if (lease->exclusive()) {
        return fmt::format("leased by {} since {}", describe_.Holder(*lease, true),
                           describe_.Since(*lease));
      }
    }
    if (limits_.shared || state.leases.empty()) return std::nullopt;
    const Lease& first = *state.leases.front();
    std::string text =
        fmt::format("shared by {} since {}", describe_.Holder(first, true), describe_.Since(first));
    if (size_t more = state.leases.size() - 1; more > 0) {
      text += fmt::format(" and {} more job{}", more, more == 1 ? "" : "s");
    }
    return text;
  }

  // In an exclusive compute mode one process is all the card takes, and a
  // shared job that holds it may not have started its process yet.
  std::optional<std::string> ExclusiveModeTaken(const Gpu& gpu, const CardState& state) const {
    if (gpu.compute_mode != ComputeMode::kExclusiveProcess &&
        gpu.compute_mode != ComputeMode::kExclusiveThread) {
      return std::nullopt;
    }
    const char* mode = ComputeModeName(*gpu.compute_mode);
    if (!gpu.processes.empty()) {
      return fmt::format("{} mode and pid {} runs on it", mode, gpu.processes.front().pid);
    }
    if (!state.leases.empty()) return fmt::format("{} mode and a gpupin job holds it", mode);
    return std::nullopt;
  }

  // NVML answers memory and processes in separate calls: a process that
  // started between them is listed but not yet in "used". It is the job
  // that just ended a reservation, so the card must not look free: count
  // at least what the listed processes use.
  static std::optional<uint64_t> UsedAtLeastByProcesses(const Gpu& gpu) {
    if (!gpu.memory_used_bytes) return std::nullopt;
    uint64_t listed = 0;
    for (const GpuProcess& process : gpu.processes) listed += process.used_memory_bytes.value_or(0);
    return std::max(*gpu.memory_used_bytes, listed);
  }

  // The memory limit in bytes for this card; nullopt when a percentage meets
  // a card of unknown size.
  std::optional<uint64_t> MaxUsedBytes(const Gpu& gpu) const {
    if (limits_.max_used.bytes) return limits_.max_used.bytes;
    if (!gpu.memory_total_bytes || !limits_.max_used.percent) return std::nullopt;
    return static_cast<uint64_t>(static_cast<double>(*gpu.memory_total_bytes) *
                                 *limits_.max_used.percent / 100);
  }

  // "23.1G used > 1G", and "1025M used > 1024M" where both would read 1G.
  std::pair<std::string, std::string> UsedOverLimit(const Gpu& gpu, uint64_t used,
                                                    uint64_t limit) const {
    if (limits_.max_used.bytes) return FormatBytesApart(used, limit);
    return {FormatBytes(used), fmt::format("{} of {}", FormatPercent(*limits_.max_used.percent),
                                           FormatBytes(*gpu.memory_total_bytes))};
  }

  static std::string UtilText(const Gpu& gpu) {
    return gpu.utilization_gpu_percent ? fmt::format("{}% util", *gpu.utilization_gpu_percent)
                                       : "util unknown";
  }

  std::vector<std::string> ProcessNotes(const Gpu& gpu, const CardState& state) const {
    std::vector<std::string> notes;
    if (!state.foreign.empty())
      notes.push_back(describe_.Processes("foreign process", state.foreign));
    if (!state.mine.empty()) notes.push_back(describe_.Processes("your process", state.mine));
    if (!gpu.processes_known) notes.emplace_back("processes unknown");
    return notes;
  }

  void JudgeUsage(const Gpu& gpu, const CardState& state, Assessment& result) const {
    std::vector<std::string> notes = ProcessNotes(gpu, state);
    auto reject = [&](std::string why) {
      notes.insert(notes.begin(), std::move(why));
      result.reason = fmt::format("{}", fmt::join(notes, ", "));
    };
    auto accept = [&](std::string status) {
      notes.insert(notes.begin(), std::move(status));
      result.eligible = true;
      result.status = fmt::format("{}", fmt::join(notes, ", "));
      result.reason = "free: " + result.status;
    };
    uint64_t mine = input_.request.mine_free ? state.mine_bytes : 0;
    std::optional<uint64_t> used = UsedAtLeastByProcesses(gpu);
    if (used) used = *used - std::min(*used, mine);

    std::optional<uint64_t> limit = MaxUsedBytes(gpu);
    if (used && limit && *used > *limit) {
      result.over_limit = true;
      result.mine_would_free =
          !input_.request.mine_free && *used - std::min(*used, state.mine_bytes) <= *limit;
      auto [used_text, limit_text] = UsedOverLimit(gpu, *used, *limit);
      reject(fmt::format("busy: {} used{} > {} (--max-used)", used_text,
                         mine > 0 ? " by others" : "", limit_text));
      return;
    }
    // Utilization cannot be split by process: when every process on the card
    // is the caller's, --mine-free lets it pass.
    bool all_mine = input_.request.mine_free && gpu.processes_known && state.foreign.empty() &&
                    !state.mine.empty();
    if (limits_.max_util_percent && gpu.utilization_gpu_percent && !all_mine &&
        *gpu.utilization_gpu_percent > *limits_.max_util_percent) {
      result.over_limit = true;
      reject(fmt::format("busy: {}% util > {} (--max-util)", *gpu.utilization_gpu_percent,
                         FormatPercent(*limits_.max_util_percent)));
      return;
    }
    if (const GpuProcess* settling = Settling(state)) {
      reject(fmt::format("busy: pid {} started {}s ago and may still be allocating (--settle {}s)",
                         settling->pid, *input_.process_owners.at(settling->pid).age_ms / 1000,
                         input_.request.settle_ms / 1000));
      return;
    }
    if (limits_.shared) {
      JudgeFit(gpu, state, used, result, reject, accept);
      return;
    }
    std::optional<uint64_t> free_bytes = gpu.memory_free_bytes;
    if (!free_bytes && gpu.memory_total_bytes && gpu.memory_used_bytes) {
      free_bytes =
          *gpu.memory_total_bytes - std::min(*gpu.memory_total_bytes, *gpu.memory_used_bytes);
    }
    result.available_bytes = free_bytes.value_or(0);
    accept(fmt::format("{}, {}", free_bytes ? FormatBytes(*free_bytes) + " free" : "memory unknown",
                       UtilText(gpu)));
  }

  // The youngest foreign compute process still within --settle, if any.
  const GpuProcess* Settling(const CardState& state) const {
    const GpuProcess* youngest = nullptr;
    int64_t youngest_ms = input_.request.settle_ms;
    for (const GpuProcess* process : state.foreign) {
      if (!process->compute) continue;
      auto owner = input_.process_owners.find(process->pid);
      if (owner == input_.process_owners.end() || !owner->second.age_ms) continue;
      if (*owner->second.age_ms < youngest_ms) {
        youngest = process;
        youngest_ms = *owner->second.age_ms;
      }
    }
    return youngest;
  }

  template <class Reject, class Accept>
  void JudgeFit(const Gpu& gpu, const CardState& state, std::optional<uint64_t> used,
                Assessment& result, Reject& reject, Accept& accept) const {
    if (!used || !gpu.memory_total_bytes) {
      reject("memory unknown: cannot fit --mem");
      return;
    }
    uint64_t committed = *used;
    for (size_t i = 0; i < state.leases.size(); ++i) {
      uint64_t leased = state.leases[i]->shared_bytes.value_or(0);
      committed += leased - std::min(leased, state.job_usage[i]);
    }
    uint64_t total = *gpu.memory_total_bytes;
    uint64_t left = total - std::min(total, committed);
    if (limits_.mem_bytes > left) {
      result.over_memory = true;
      reject(fmt::format("full: {} in use or leased + {} asked > {} (--mem)",
                         FormatBytes(committed), FormatBytes(limits_.mem_bytes),
                         FormatBytes(total)));
      return;
    }
    result.available_bytes = left;
    std::string jobs = state.leases.empty() ? ""
                                            : fmt::format(" ({} shared job{})", state.leases.size(),
                                                          state.leases.size() == 1 ? "" : "s");
    accept(fmt::format("{} left of {}{}, {}", FormatBytes(left), FormatBytes(total), jobs,
                       UtilText(gpu)));
  }

  const PolicyInput& input_;
  const Limits& limits_;
  Describer describe_;
};

struct Candidate {
  size_t position = 0;
  uint32_t index = 0;
  size_t order_rank = 0;  // place in --order; unlisted cards after all listed
  uint64_t available_bytes = 0;
  uint32_t util_rank = 0;  // unknown utilization ranks after every known one
};

bool RanksBefore(const Candidate& a, const Candidate& b, Preference prefer) {
  if (a.order_rank != b.order_rank) return a.order_rank < b.order_rank;
  // ~bytes: more free memory sorts first.
  auto free_key = [](const Candidate& c) {
    return std::tuple(~c.available_bytes, c.util_rank, c.index);
  };
  auto util_key = [](const Candidate& c) {
    return std::tuple(c.util_rank, ~c.available_bytes, c.index);
  };
  switch (prefer) {
    case Preference::kFree:
      return free_key(a) < free_key(b);
    case Preference::kUtil:
      return util_key(a) < util_key(b);
    case Preference::kIndex:
      break;
  }
  return a.index < b.index;
}

// The closest set of `count` among `ranked` (best first), and how close it is.
//
// Finding the best set exactly is a clique search; instead, for each
// closeness class from the closest, every card in rank order seeds a set that
// takes the next-best cards compatible with all already in it. Among the
// complete sets of the closest class, the one whose weakest card ranks best
// wins (then its next weakest, and so on): a job spread over the cards runs
// at the pace of its smallest one, so 79G+79G beats 80G+10G. Board, switch
// and NUMA classes are equivalence classes, where this is exact; for NVLink
// meshes it may miss a set and fall back to the next class.
// O(classes * n^2 * count): well under a millisecond for 64 GPUs.
std::pair<std::vector<Candidate>, Closeness> ClosestSet(const std::vector<Candidate>& ranked,
                                                        size_t count, const Topology& topology) {
  for (int level = 0; level <= static_cast<int>(Closeness::kSystem); ++level) {
    auto closeness = static_cast<Closeness>(level);
    std::optional<std::vector<size_t>> best_ranks;  // of the best set so far, weakest first
    std::vector<Candidate> best;
    for (size_t seed = 0; seed < ranked.size(); ++seed) {
      std::vector<size_t> ranks = {seed};
      for (size_t next = 0; next < ranked.size() && ranks.size() < count; ++next) {
        if (next == seed) continue;
        bool close = std::all_of(ranks.begin(), ranks.end(), [&](size_t member) {
          return topology.Between(ranked[member].position, ranked[next].position) <= closeness;
        });
        if (close) ranks.push_back(next);
      }
      if (ranks.size() < count) continue;
      std::sort(ranks.begin(), ranks.end(), std::greater<>());
      if (best_ranks && *best_ranks <= ranks) continue;
      best_ranks = ranks;
      best.clear();
      for (size_t rank : ranks) best.push_back(ranked[rank]);
    }
    if (best_ranks) return {best, closeness};
  }
  return {{}, Closeness::kSystem};  // unreachable: every pair is within kSystem
}

const char* PreferenceReason(Preference prefer) {
  switch (prefer) {
    case Preference::kFree:
      return "ranked by free memory";
    case Preference::kUtil:
      return "ranked by utilization";
    case Preference::kIndex:
      break;
  }
  return "ranked by index";
}

Error NoGpuError(const PolicyInput& input, const std::vector<Excluded>& exclusions,
                 const std::vector<Assessment>& assessments, size_t eligible, size_t usable) {
  const std::vector<Gpu>& gpus = input.gpus;
  const Request& request = input.request;
  // Cards blocked for the same reason (one reservation over four cards)
  // share one entry, in the order of their first card.
  std::vector<std::pair<std::string, std::vector<uint32_t>>> blocked_by;
  bool over_limit = false, over_memory = false, mine_would_free = false;
  for (size_t position = 0; position < gpus.size(); ++position) {
    const Assessment& card = assessments[position];
    // Cards the request itself rules out are in --explain, not in this line.
    if (card.eligible || exclusions[position] != Excluded::kNo) continue;
    auto same = std::find_if(blocked_by.begin(), blocked_by.end(),
                             [&](const auto& entry) { return entry.first == card.reason; });
    if (same == blocked_by.end()) same = blocked_by.insert(same, {card.reason, {}});
    same->second.push_back(gpus[position].index);
    over_limit |= card.over_limit;
    over_memory |= card.over_memory;
    mine_would_free |= card.mine_would_free;
  }
  std::vector<std::string> blocked;
  blocked.reserve(blocked_by.size());
  for (const auto& [reason, indices] : blocked_by) {
    blocked.push_back(fmt::format("{} {}", GpuList(indices), reason));
  }
  std::string head = eligible == 0
                         ? "no GPU available"
                         : fmt::format("{} GPUs asked, only {} available", request.count, eligible);
  // Free cards outside the caller's allocation are not in the reasons: say
  // the search was limited, or "no GPU available" reads as "all are taken".
  if (std::find(exclusions.begin(), exclusions.end(), Excluded::kNotAllowed) != exclusions.end())
    head += " within " + input.allowed_by;
  const size_t count = static_cast<size_t>(request.count);
  // Which cards `usable` counts: a card the request leaves out may run jobs.
  auto left_out = [&](Excluded why) {
    return std::find(exclusions.begin(), exclusions.end(), why) != exclusions.end();
  };
  const char* among = left_out(Excluded::kNotInOnly) || left_out(Excluded::kExcluded)
                          ? " that --only/--exclude leave"
                      : left_out(Excluded::kReserved) ? " not reserved"
                                                      : " here";
  std::string hint =
      usable < count ? fmt::format("{}{} can run jobs at all, so --wait would wait for ever",
                                   usable == 0   ? "no GPU"
                                   : usable == 1 ? "only 1 GPU"
                                                 : fmt::format("only {} GPUs", usable),
                                   among)
      : request.waiting_declined ? "a --wait of 0 does not queue: give --wait or --wait=DURATION"
                                 : "use --wait to queue";
  if (over_limit) hint += ", or relax --max-used/--max-util";
  if (over_memory) hint += ", or ask for less --mem";
  if (mine_would_free) hint += ", or --mine-free to ignore your own processes";
  return MakeError(ExitCode::kNoGpu,
                   fmt::format("{}: {}; {}", head, fmt::join(blocked, "; "), hint));
}

}  // namespace

Result<Selection> ChooseGpus(const PolicyInput& input, ChoiceFailure* failure) {
  const Request& request = input.request;
  auto limits = CheckRequest(request);
  if (!limits) return limits.error();
  auto ids = ResolveRequestIds(input.gpus, request, input.reserved);
  if (!ids) return ids.error();

  std::vector<Excluded> exclusions;
  for (size_t position = 0; position < input.gpus.size(); ++position) {
    exclusions.push_back(ExclusionOf(input, *ids, *limits, position));
  }
  if (Status possible = CheckCountIsPossible(exclusions, *limits, request.count, input);
      !possible) {
    if (failure) failure->waiting_can_help = false;
    return possible.error();
  }

  CardJudge judge(input, *limits);
  std::vector<Assessment> assessments;
  std::vector<Candidate> ranked;
  for (size_t position = 0; position < input.gpus.size(); ++position) {
    const Gpu& gpu = input.gpus[position];
    assessments.push_back(judge.Judge(gpu, exclusions[position]));
    const Assessment& card = assessments.back();
    if (!card.eligible) continue;
    auto listed = std::find(ids->order.begin(), ids->order.end(), position);
    ranked.push_back({position, gpu.index, static_cast<size_t>(listed - ids->order.begin()),
                      card.available_bytes,
                      card.util_percent.value_or(std::numeric_limits<uint32_t>::max())});
  }

  std::vector<CardVerdict> verdicts;
  for (size_t position = 0; position < input.gpus.size(); ++position) {
    verdicts.push_back({input.gpus[position].index, assessments[position].eligible, false,
                        assessments[position].reason});
  }
  size_t count = static_cast<size_t>(request.count);
  if (ranked.size() < count) {
    size_t usable = 0;
    for (size_t position = 0; position < input.gpus.size(); ++position) {
      if (exclusions[position] == Excluded::kNo && !assessments[position].unusable) ++usable;
    }
    if (failure) *failure = {verdicts, usable >= count};
    return NoGpuError(input, exclusions, assessments, ranked.size(), usable);
  }

  std::sort(ranked.begin(), ranked.end(), [&](const Candidate& a, const Candidate& b) {
    return RanksBefore(a, b, request.prefer);
  });
  std::vector<Candidate> chosen(ranked.begin(), ranked.begin() + static_cast<long>(count));
  std::optional<Closeness> closeness;
  const Topology topology(input.gpus, input.topology);
  if (request.near && count > 1) {
    auto [set, level] = ClosestSet(ranked, count, topology);
    chosen = std::move(set);
    closeness = level;
  }
  std::sort(chosen.begin(), chosen.end(),
            [](const Candidate& a, const Candidate& b) { return a.index < b.index; });

  Selection selection;
  for (const Candidate& card : chosen) {
    selection.chosen_gpu_indices.push_back(card.index);
    CardVerdict& verdict = verdicts[card.position];
    verdict.chosen = true;
    verdict.reason =
        fmt::format("chosen: {}; {}", assessments[card.position].status,
                    card.order_rank < ids->order.size() ? "listed in --order"
                                                        : PreferenceReason(request.prefer));
    if (closeness && *closeness != Closeness::kSystem)
      verdict.reason += fmt::format("; set {}", ClosenessName(*closeness));
  }
  // An eligible card left out of a set: too far from the chosen cards, or
  // ranked below them (in its own set, the weakest card ranked worse).
  if (closeness && *closeness != Closeness::kSystem) {
    for (const Candidate& card : ranked) {
      CardVerdict& verdict = verdicts[card.position];
      if (verdict.chosen) continue;
      const bool close = std::all_of(chosen.begin(), chosen.end(), [&](const Candidate& member) {
        return topology.Between(member.position, card.position) <= *closeness;
      });
      verdict.reason += close ? "; ranked below the chosen cards"
                              : fmt::format("; not {} with the chosen cards, whose set ranks best",
                                            ClosenessName(*closeness));
    }
  }
  selection.verdicts = std::move(verdicts);
  return selection;
}

}  // namespace gpupin
