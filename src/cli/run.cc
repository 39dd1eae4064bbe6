#include "cli/run.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>
#include <thread>

#include "cli/launch.h"
#include "cli/machine_state.h"
#include "core/gpu_use.h"
#include "core/printable.h"
#include "core/units.h"
#include "out/json_value.h"
#include "sys/interrupt.h"
#include "sys/process_ender.h"
#include "sys/spawn.h"

namespace gpupin {
namespace {

struct RunOptions {
  PolicyFlags policy;
  std::optional<std::string> verify;
  bool stop_on_mismatch = false;
};

// How long a job found on the wrong card gets between SIGTERM and SIGKILL.
constexpr int64_t kStopGraceMs = 5000;

// The job's processes on GPUs (the child and everything it started), by
// GPU index.
std::map<uint32_t, std::set<uint32_t>> JobGpuUse(const Inventory& inventory, const ProcFs& procfs,
                                                 int child_pid) {
  std::map<uint32_t, std::set<uint32_t>> use;
  for (const GpuUse& found : FindGpuUses(inventory, Resolution{}, [&](uint32_t pid) {
         return procfs.DescendsFrom(static_cast<int>(pid), child_pid);
       })) {
    use[found.gpu_index].insert(found.pid);
  }
  return use;
}

// --verify: waits (up to the timeout) until the job's processes appear on
// a GPU, then says whether they run on the chosen cards and on no other.
// Returns the verdict line; the child keeps running meanwhile.
// What --verify found: `outcome` for scripts ("verified", "mismatch",
// "not_verified"), `text` for people.
struct Verdict {
  const char* outcome;
  std::string text;
  std::set<uint32_t> gpu_pids;  // the job's processes seen on GPUs
};

Verdict Verify(World& world, const Acquired& acquired, const PendingChild& child,
               int64_t timeout_ms) {
  constexpr const char* kNotVerified = "not_verified";
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  std::set<uint32_t> chosen(acquired.selection.chosen_gpu_indices.begin(),
                            acquired.selection.chosen_gpu_indices.end());
  // Everything seen in the whole window, not the first look with a process:
  // a job may start on its card and put a process on another a moment later.
  std::map<uint32_t, uint32_t> seen;  // card index: one pid of the job there
  std::set<uint32_t> gpu_pids;
  auto where = [&] {
    std::string text;
    for (const auto& [index, pid] : seen)
      text += fmt::format("{}GPU {} (pid {})", text.empty() ? "" : ", ", index, pid);
    return text;
  };
  bool ended = false;
  while (!ended && std::chrono::steady_clock::now() < deadline) {
    ended = child.Ended();  // before the look, so that the look sees its last state
    Result<GpuSource*> gpus = world.Gpus();
    if (!gpus.ok()) return {kNotVerified, "not verified: " + gpus.error().message, {}};
    Result<Inventory> inventory = (*gpus)->Snapshot(gpu_facts::kProcesses);
    if (!inventory.ok()) return {kNotVerified, "not verified: " + inventory.error().message, {}};
    for (const auto& [index, pids] : JobGpuUse(*inventory, world.procfs(), child.pid())) {
      seen.try_emplace(index, *pids.begin());
      gpu_pids.insert(pids.begin(), pids.end());
    }
    if (std::any_of(seen.begin(), seen.end(),
                    [&](const auto& card) { return !chosen.contains(card.first); })) {
      return {"mismatch",
              fmt::format("MISMATCH: the job runs on {}; it was given {}", where(),
                          DescribeChosen(acquired)),
              gpu_pids};
    }
    if (!ended) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (seen.empty() && ended)
    return {kNotVerified, "not verified: the command ended before it used a GPU", {}};
  if (seen.empty()) {
    return {kNotVerified,
            fmt::format("not verified: no process of the job appeared on any GPU within {}ms",
                        timeout_ms),
            {}};
  }
  std::vector<std::string> unused;
  for (uint32_t index : chosen) {
    if (!seen.contains(index)) unused.push_back(fmt::format("GPU {}", index));
  }
  const std::string watched =
      ended ? "watched until it ended" : fmt::format("watched {}ms", timeout_ms);
  if (unused.empty()) {
    return {"verified",
            fmt::format("verified: the job runs on {}, as chosen, and on no other GPU ({})",
                        where(), watched),
            {}};
  }
  return {
      "verified",
      fmt::format("verified: the job runs on {} and on no GPU it was not given ({}); {}, "
                  "given to it, {} not used",
                  where(), watched, fmt::join(unused, ", "), unused.size() == 1 ? "was" : "were"),
      {}};
}

Result<int> Run(World& world, const RunOptions& options, bool wait_given, bool verify_given) {
  const std::vector<std::string>& command = world.command_args();
  if (command.empty())
    return MakeError(ExitCode::kUsage,
                     "no command given; write it after --, e.g. gpupin run -- python train.py");
  // `gpupin run -- "$CMD"` with CMD unset: nothing could run, so nothing is chosen.
  if (command.front().empty())
    return MakeError(ExitCode::kUsage, "the command is an empty word; is a variable unset?");
  // A mistyped command fails before anything is chosen or waited for.
  if (Status found = FindCommand(command.front()); !found.ok()) return found.error();
  Result<AcquireRequest> request = MakeAcquireRequest(world, options.policy, wait_given);
  if (!request.ok()) return request.error();
  int64_t verify_ms = 10'000;
  if (options.verify && !options.verify->empty()) {
    Result<int64_t> parsed = ParseDurationMs(*options.verify);
    if (!parsed.ok()) return parsed.error().OfOption("--verify");
    // No time to appear in would report every job as not seen.
    if (*parsed <= 0)
      return OptionError("--verify", "must be longer than 0; a job needs time to appear");
    verify_ms = *parsed;
  }
  // NVML is opened by AcquireGpus when it first needs to look at the GPUs:
  // a job that queues behind others does not pay for it (the real nvmlInit
  // takes tens of milliseconds) until it is next in line. The simulated
  // server's scenario must be in the environment the child inherits.
  if (Status exported = world.ExportSimulatedServer(); !exported.ok()) return exported.error();
  Result<PendingChild> child = CreatePendingChild();
  if (!child.ok()) return child.error();
  request->holder = child->identity();
  request->shell = CallingShell(world);
  request->command = LeaseCommand(command);
  Result<Acquired> acquired = AcquireGpus(world, *request);
  if (!acquired.ok()) {
    // The command's process, killed while gpupin waited, ends the wait:
    // said as how it ended (run dies by its signal), not as the wait's end.
    // Unless gpupin was stopped itself: a terminal's Ctrl-C reaches both.
    std::optional<Error> gone = child->EndedBeforeStart();
    if (gone && acquired.error().signal == 0) return *gone;
    return acquired.error();
  }

  EnvChanges env = EnvironmentFor(*acquired, options.policy.uuid);
  // The command's process, killed while gpupin waited, holds a dead lease:
  // no start to announce (Start says how it ended).
  const bool announced = !child->Ended();
  if (announced && world.options().json) {
    nlohmann::ordered_json event = AcquiredToJson(*acquired);
    event["event"] = "start";
    event["cuda_visible_devices"] = *env.at("CUDA_VISIBLE_DEVICES");
    std::fprintf(stderr, "%s\n", JsonText(event, -1).c_str());
  } else if (announced) {
    world.Note(fmt::format("running on {} as CUDA_VISIBLE_DEVICES={}", DescribeChosen(*acquired),
                           *env.at("CUDA_VISIBLE_DEVICES")));
  }
  // The lease ends with its holder, the command's process; removing the
  // file at once wakes waiters through inotify without waiting for anyone's
  // liveness check. Only that: with the lock held by someone else (a
  // stopped gpupin, a hostile `flock`), the next reader finds the lease
  // dead, and the command's end is not held back for the lock's 10 s.
  auto end_lease = [&] {
    Result<LeaseStore*> store = world.Leases();
    if (!store.ok()) return;
    Status removed = (*store)->Transact(
        [&](LeaseTransaction& txn) { return txn.RemoveLease(acquired->lease.id); },
        std::chrono::milliseconds(500));
    if (!removed.ok())
      world.Verbose("the ended lease's file is left to the next gpupin: " +
                    removed.error().message);
  };
  const auto started_at = std::chrono::steady_clock::now();
  // The last JSON event: how the command ended, and after how long.
  auto report_end = [&](int status) {
    if (!world.options().json) return;
    const int signal = child->KilledBy();
    const char* name = signal ? sigabbrev_np(signal) : nullptr;
    nlohmann::ordered_json event = {
        {"event", "end"},
        {"lease_id", acquired->lease.id},
        {"exit_status", status},
        {"signal", signal == 0 ? nlohmann::ordered_json(nullptr)
                               : nlohmann::ordered_json(name ? fmt::format("SIG{}", name)
                                                             : std::to_string(signal))},
        {"duration_ms", std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::steady_clock::now() - started_at)
                            .count()}};
    std::fprintf(stderr, "%s\n", JsonText(event, -1).c_str());
  };
  Status started = child->Start(command, env);
  if (!started.ok()) {
    end_lease();
    // Killed while we waited: we die by the same signal, as if it had run.
    if (started.error().signal) return started.error();
    std::fprintf(stderr, "gpupin: %s: %s\n", started.error().message.c_str(),
                 Printable(command.front()).c_str());
    // A start event has one end, even for a command that never ran.
    if (announced) report_end(127);
    return 127;
  }
  if (verify_given || options.stop_on_mismatch) {
    Verdict verdict = Verify(world, *acquired, *child, verify_ms);
    const bool stop = options.stop_on_mismatch && !verdict.gpu_pids.empty();
    if (world.options().json) {
      nlohmann::ordered_json event = {{"event", "verify"},
                                      {"outcome", verdict.outcome},
                                      {"verdict", verdict.text},
                                      {"stopped", stop}};
      std::fprintf(stderr, "%s\n", JsonText(event, -1).c_str());
    } else {
      std::fprintf(stderr, "gpupin: %s\n", verdict.text.c_str());
    }
    if (stop) {
      // The command and its processes on GPUs, which may have left its tree.
      std::vector<EndTarget> targets = {{child->pid(), child->identity().start_time_ticks}};
      for (uint32_t pid : verdict.gpu_pids) {
        std::optional<uint64_t> start = LiveProcessStartTime(world.procfs(), static_cast<int>(pid));
        if (start && static_cast<int>(pid) != child->pid())
          targets.push_back({static_cast<int>(pid), *start});
      }
      EndProcesses(world.procfs(), targets, kStopGraceMs);
      const int stopped = child->Wait();
      end_lease();
      report_end(stopped);
      return MakeError(ExitCode::kError,
                       "stopped the job (--stop-on-mismatch): it ran on a GPU it was not given; "
                       "set CUDA_VISIBLE_DEVICES before CUDA initialises (gpupin doctor FILE.py "
                       "finds where)");
    }
  }
  const int status = child->Wait();
  end_lease();
  report_end(status);
  // A command killed by a signal: gpupin dies by it too, as if it were the
  // command, so that a shell loop around it stops at Ctrl-C (bash goes on
  // after a child that merely exited 130). Not by one that dumps core.
  if (const int signal = child->KilledBy(); signal && EndsWithoutCore(signal))
    return DieBySignal(signal);
  return status;
}

}  // namespace

CommandSpec RunCommand() {
  return {"run",
          "run a command on GPUs chosen by the policy, holding a lease for its life; "
          "INT, TERM, HUP, QUIT, USR1, USR2 and ALRM are passed on to it",
          [](CLI::App& app) {
            auto options = std::make_shared<RunOptions>();
            AddPolicyOptions(app, options->policy);
            app.add_option("--verify", options->verify,
                           "check that the command's processes appear on the chosen GPUs only, "
                           "watching for TIMEOUT (more than 0; default 10s) or until it ends")
                ->expected(0, 1)
                ->option_text("[=TIMEOUT]");
            app.add_flag("--stop-on-mismatch", options->stop_on_mismatch,
                         "verify, and end a job found on a GPU it was not given (SIGTERM, SIGKILL "
                         "after 5s); gpupin then exits 1");
            app.footer(
                "The command gets GPUPIN_LEASE_ID; a gpupin it starts is served from this job's\n"
                "GPUs without queuing.\n"
                "Example: gpupin run -n 2 --wait -- python train.py");
            return [options, &app](World& world) {
              return Run(world, *options, app.count("--wait") > 0, app.count("--verify") > 0);
            };
          },
          /*runs_command=*/true,
          /*reads_every_command=*/false,
          /*usage_tail=*/"-- COMMAND [ARGS...]"};
}

}  // namespace gpupin
