#include "cli/pick.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>

#include "cli/launch.h"
#include "cli/machine_state.h"
#include "core/selection_output.h"
#include "core/time_format.h"
#include "core/units.h"
#include "out/inventory_json.h"
#include "out/json_value.h"
#include "sys/environment.h"

namespace gpupin {
namespace {

struct PickOptions {
  PolicyFlags policy;
  std::string ttl = "60s";
  bool explain = false;
};

Result<int> Pick(World& world, const PickOptions& options, bool wait_given) {
  Result<AcquireRequest> request = MakeAcquireRequest(world, options.policy, wait_given);
  if (!request.ok()) return request.error();
  Result<int64_t> ttl = ParseReservationTtlMs(options.ttl);
  if (!ttl.ok()) return ttl.error();
  // The reservation belongs to the shell that runs `$(gpupin pick)`, not
  // to the command substitution's short-lived copy of it nor to a `timeout`
  // or `sh -c` that only runs gpupin: it ends when that shell ends, when the
  // job's process appears, or at the TTL.
  Result<ProcessIdentity> holder = IdentifyReservationHolder(world, std::nullopt);
  if (!holder.ok()) return holder.error();
  request->holder = *holder;
  request->shell = *holder;
  request->command = "pick (reserved for the next job)";
  request->reservation_ttl_ms = *ttl;
  std::vector<CardVerdict> verdicts;
  Result<Acquired> acquired = AcquireGpus(world, *request, &verdicts);
  if (!acquired.ok()) {
    // When nothing could be chosen the verdicts matter most: with --json
    // they come with the reason as one line of JSON on stderr, before the
    // error line, as run's events do. Stdout stays empty, so that
    // `ids=$(gpupin --json pick)` captures nothing on failure. A request no
    // card could ever meet (more cards than the machine or the allocation
    // has) has no verdicts, but a script still reads why.
    if (world.options().json && (!verdicts.empty() || acquired.error().code == ExitCode::kNoGpu)) {
      const nlohmann::ordered_json out = {{"schema_version", kJsonSchemaVersion},
                                          {"error", acquired.error().message},
                                          {"exit_code", static_cast<int>(acquired.error().code)},
                                          {"verdicts", VerdictsToJson(verdicts)}};
      std::fprintf(stderr, "%s\n", JsonText(out, -1).c_str());
    } else if (options.explain && !verdicts.empty()) {
      std::fputs(RenderVerdicts(verdicts).c_str(), stderr);
    }
    return acquired.error();
  }
  std::optional<std::string> order;
  if (const char* value = std::getenv("CUDA_DEVICE_ORDER")) order = value;
  DeviceIds ids = PickIds(acquired->selection.chosen_gpu_indices, acquired->inventory.gpus,
                          options.policy.uuid, order);
  if (world.options().json) {
    nlohmann::ordered_json out = AcquiredToJson(*acquired);
    out["ids"] = ids.value;
    out["note"] = OrNull(ids.note);
    std::printf("%s\n", JsonText(out).c_str());
    return 0;
  }
  if (options.explain) std::fputs(RenderVerdicts(verdicts).c_str(), stderr);
  if (ids.note) world.Note(*ids.note);
  world.Verbose(fmt::format("reserved {} for {}s (lease {})", DescribeChosen(*acquired),
                            *ttl / 1000, acquired->lease.id));
  std::printf("%s\n", ids.value.c_str());
  // Printed to a terminal, the ids are read rather than used, and the cards
  // stay held for this shell: its next `gpupin run` finds them taken.
  if (world.terminal().stdout_is_tty()) {
    world.Note(
        fmt::format("{} reserved for this shell (pid {}) until {}, or for the job it starts next; "
                    "gpupin release {} frees it",
                    DescribeChosen(*acquired), holder->pid,
                    FormatLocalClock(*acquired->lease.reservation_deadline_unix_ms, NowUnixMs()),
                    acquired->lease.id));
  }
  return 0;
}

}  // namespace

CommandSpec PickCommand() {
  return {"pick", "choose GPUs, reserve them for the next job, and print their ids",
          [](CLI::App& app) {
            auto options = std::make_shared<PickOptions>();
            AddPolicyOptions(app, options->policy);
            app.add_option("--ttl", options->ttl,
                           "hold the reservation at most this long, more than 0 (default 60s)")
                ->option_text("DURATION");
            app.add_flag("--explain", options->explain,
                         "say for every card why it was taken or passed over (stderr)");
            app.footer(
                "Example: CUDA_VISIBLE_DEVICES=$(gpupin pick) python train.py\n"
                "The reservation follows the shell that will start the job, past $(...) and\n"
                "wrappers such as timeout, sudo or sh -c (-v names it). A job that starts and\n"
                "ends before any gpupin looks leaves no trace: for a loop of short jobs, use\n"
                "gpupin run --wait -- JOB.");
            return [options, &app](World& world) {
              return Pick(world, *options, app.count("--wait") > 0);
            };
          }};
}

}  // namespace gpupin
