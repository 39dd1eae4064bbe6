#include "cli/leftover_kill.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <map>
#include <set>

#include "core/gpu_facts.h"
#include "core/gpu_list.h"
#include "core/gpu_process_walk.h"
#include "core/leftovers.h"
#include "core/printable.h"
#include "core/units.h"
#include "out/inventory_json.h"
#include "out/json_value.h"
#include "sys/process_ender.h"

namespace gpupin {
namespace {

// gpupin and every process above it: ending one would end gpupin's caller.
std::set<uint32_t> GpupinAndItsCallers(const ProcFs& procfs) {
  std::set<uint32_t> pids;
  std::optional<int> pid = getpid();
  while (pid && *pid > 1 && pids.insert(static_cast<uint32_t>(*pid)).second) {
    pid = procfs.ParentOf(*pid);
  }
  return pids;
}

std::string Memory(std::optional<uint64_t> bytes) { return bytes ? FormatBytes(*bytes) : "?"; }

std::string Describe(const LeftoverProcess& p) {
  return fmt::format("pid {} ({}, {}) on GPU {}, {} used, {}", p.pid, Printable(p.user),
                     Printable(p.command, 60), fmt::join(p.gpu_indices, ","),
                     Memory(p.used_memory_bytes), p.reason);
}

// On a terminal, the user's yes; elsewhere there is nobody to ask.
Result<bool> Confirmed(size_t count) {
  if (!isatty(STDIN_FILENO)) {
    return MakeError(ExitCode::kUsage,
                     "ps --kill: no terminal to confirm on; add --yes to end them without "
                     "asking (--dry-run shows what it would do)");
  }
  std::fflush(stdout);  // the list the question is about comes first
  std::fprintf(stderr, "End %zu process%s? [y/N] ", count, count == 1 ? "" : "es");
  std::fflush(stderr);
  char answer[16] = {};
  if (!std::fgets(answer, sizeof answer, stdin)) return false;
  return answer[0] == 'y' || answer[0] == 'Y';
}

// A GPU's used memory; nullopt where NVML did not say or the GPU is not there.
std::optional<uint64_t> UsedOn(const Inventory& inventory, uint32_t index) {
  for (const Gpu& gpu : inventory.gpus) {
    if (gpu.index == index) return gpu.memory_used_bytes;
  }
  return std::nullopt;
}

std::set<uint32_t> ListedPids(const Inventory& inventory) {
  std::set<uint32_t> pids;
  for (const Gpu& gpu : inventory.gpus) {
    ForEachGpuProcess(gpu, [&](const GpuProcess& p, const MigDevice*) { pids.insert(p.pid); });
  }
  return pids;
}

}  // namespace

Result<int> KillLeftovers(World& world, const KillOptions& options, const Inventory& before,
                          const std::vector<GpuProcessRow>& rows) {
  Result<int64_t> grace_ms = ParseDurationMs(options.grace);
  if (!grace_ms.ok()) return grace_ms.error().OfOption("--grace");
  if (options.all_users && getuid() != 0) {
    return MakeError(ExitCode::kUsage, "--all-users: only root may end other users' processes");
  }
  std::vector<KillDecision> decisions = DecideLeftoverKills(
      LeftoversOf(rows, static_cast<uint32_t>(getuid())),
      {.all_users = options.all_users, .protected_pids = GpupinAndItsCallers(world.procfs())});
  std::map<uint32_t, uint64_t> start_of;
  for (const GpuProcessRow& row : rows) start_of[row.process.pid] = row.start_time_ticks;
  std::vector<const KillDecision*> to_end;
  for (const KillDecision& d : decisions) {
    if (d.end) to_end.push_back(&d);
  }
  const bool json = world.options().json;
  // A GPU whose processes NVML would not list may hold leftovers that
  // nothing here can see, let alone end.
  const std::vector<uint32_t> unknown = GpusWithUnknownProcesses(before);
  if (!json) {
    if (!unknown.empty()) {
      std::printf(
          "note: NVML does not list the processes of %s; leftovers there are unknown "
          "and none is ended\n",
          GpuList(unknown).c_str());
    }
    if (to_end.empty()) {
      std::puts(unknown.empty() ? "no leftover GPU process of yours to end"
                                : "no leftover GPU process of yours to end on the other GPUs");
    }
    for (const KillDecision& d : decisions) {
      std::printf("%s %s%s\n", d.end ? (options.dry_run ? "would end" : "to end:") : "leaving",
                  Describe(d.process).c_str(), d.end ? "" : (": " + d.why_not).c_str());
    }
  }
  std::vector<EndOutcome> outcomes;
  std::optional<Inventory> after;
  if (!to_end.empty() && !options.dry_run) {
    if (!options.yes) {
      Result<bool> yes = Confirmed(to_end.size());
      if (!yes.ok()) return yes.error();
      if (!*yes) {
        world.Note("nothing ended");
        return 1;
      }
    }
    std::vector<EndTarget> targets;
    targets.reserve(to_end.size());
    for (const KillDecision* d : to_end) {
      targets.push_back({static_cast<int>(d->process.pid), start_of[d->process.pid]});
    }
    outcomes = EndProcesses(world.procfs(), targets, *grace_ms);
    // What the driver says now, not what the processes held: the memory is
    // free only when NVML no longer counts it.
    Result<GpuSource*> gpus = world.Gpus();
    Result<Inventory> snapshot = gpus.ok()
                                     ? (*gpus)->Snapshot(gpu_facts::kMemory | gpu_facts::kProcesses)
                                     : Result<Inventory>(gpus.error());
    if (snapshot.ok()) {
      after = std::move(*snapshot);
    } else {
      world.Note("could not read the GPUs again: " + snapshot.error().message);
    }
  }
  const std::set<uint32_t> still_listed = after ? ListedPids(*after) : std::set<uint32_t>{};
  auto freed = [&](const LeftoverProcess& p) -> std::optional<uint64_t> {
    if (!after || still_listed.contains(p.pid)) return std::nullopt;
    return p.used_memory_bytes;
  };
  bool all_gone = true;
  for (EndOutcome outcome : outcomes) all_gone = all_gone && EndedOrGone(outcome);
  std::set<uint32_t> touched_gpus;
  for (const KillDecision* d : to_end) {
    touched_gpus.insert(d->process.gpu_indices.begin(), d->process.gpu_indices.end());
  }

  if (json) {
    nlohmann::ordered_json processes = nlohmann::ordered_json::array();
    size_t ended = 0;
    for (const KillDecision& d : decisions) {
      nlohmann::ordered_json outcome = nullptr;
      nlohmann::ordered_json freed_bytes = nullptr;
      if (d.end && !outcomes.empty()) {
        outcome = EndOutcomeName(outcomes[ended++]);
        freed_bytes = OrNull(freed(d.process));
      }
      processes.push_back(
          {{"pid", d.process.pid},
           {"user", d.process.user},
           {"command", d.process.command},
           {"gpu_indices", d.process.gpu_indices},
           {"used_memory_bytes", OrNull(d.process.used_memory_bytes)},
           {"leftover_reason", d.process.reason},
           {"stopped", d.process.stopped},
           {"action", d.end ? "end" : "leave"},
           {"why_not", d.end ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(d.why_not)},
           {"outcome", outcome},
           {"freed_bytes", freed_bytes}});
    }
    nlohmann::ordered_json gpus = nlohmann::ordered_json::array();
    for (uint32_t index : touched_gpus) {
      gpus.push_back({{"index", index},
                      {"used_bytes_before", OrNull(UsedOn(before, index))},
                      {"used_bytes_after", after ? OrNull(UsedOn(*after, index)) : nullptr}});
    }
    nlohmann::ordered_json out = {{"schema_version", kJsonSchemaVersion},
                                  {"dry_run", options.dry_run},
                                  {"processes", processes},
                                  {"gpus", gpus},
                                  {"process_lists_unknown", unknown}};
    std::printf("%s\n", JsonText(out).c_str());
    return all_gone ? 0 : 1;
  }
  for (size_t i = 0; i < outcomes.size(); ++i) {
    const LeftoverProcess& p = to_end[i]->process;
    std::optional<uint64_t> bytes = freed(p);
    std::string freed_text = !EndedOrGone(outcomes[i]) ? ""
                             : bytes ? fmt::format(": {} freed on GPU {}", FormatBytes(*bytes),
                                                   fmt::join(p.gpu_indices, ","))
                             : after && still_listed.contains(p.pid) ? ": NVML still lists it"
                                                                     : "";
    switch (outcomes[i]) {
      case EndOutcome::kTerminated:
        std::printf("ended pid %u by SIGTERM%s\n", p.pid, freed_text.c_str());
        break;
      case EndOutcome::kKilled:
        std::printf("killed pid %u by SIGKILL after --grace %s%s\n", p.pid, options.grace.c_str(),
                    freed_text.c_str());
        break;
      case EndOutcome::kAlreadyGone:
        std::printf("pid %u had already exited%s\n", p.pid, freed_text.c_str());
        break;
      case EndOutcome::kSurvived:
        std::printf("pid %u survived SIGKILL (uninterruptible sleep in the driver?)\n", p.pid);
        break;
      case EndOutcome::kNotPermitted:
        std::printf("pid %u: not permitted to signal it\n", p.pid);
        break;
    }
  }
  if (after) {
    std::vector<std::string> now;
    now.reserve(touched_gpus.size());
    for (uint32_t index : touched_gpus) {
      now.push_back(fmt::format("GPU {} {} (was {})", index, Memory(UsedOn(*after, index)),
                                Memory(UsedOn(before, index))));
    }
    if (!now.empty())
      std::printf("GPU memory used now: %s\n", fmt::format("{}", fmt::join(now, ", ")).c_str());
  }
  return all_gone ? 0 : 1;
}

}  // namespace gpupin
