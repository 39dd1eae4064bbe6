#include "cli/env.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <limits>

#include "cli/launch.h"
#include "cli/number_checks.h"
#include "core/units.h"
#include "out/json_value.h"

namespace gpupin {
namespace {

struct EnvOptions {
  PolicyFlags policy;
  std::string shell = "bash";
  std::optional<int> for_pid;
  std::optional<std::string> ttl;
};

// Single quotes protect everything in sh and fish alike, except the quote
// itself, written as '\'' (sh) or \' inside the quotes (fish).
std::string Quote(const std::string& value, bool fish) {
  std::string quoted = "'";
  for (char c : value) {
    if (c == '\'') {
      quoted += fish ? "\\'" : "'\\''";
    } else if (c == '\\' && fish) {
      quoted += "\\\\";
    } else {
      quoted += c;
    }
  }
  return quoted + "'";
}

Result<int> Env(World& world, const EnvOptions& options, bool wait_given) {
  Result<AcquireRequest> request = MakeAcquireRequest(world, options.policy, wait_given);
  if (!request.ok()) return request.error();
  if (options.ttl) {
    Result<int64_t> ttl = ParseReservationTtlMs(*options.ttl);
    if (!ttl.ok()) return ttl.error();
    request->reservation_ttl_ms = *ttl;
  }
  Result<ProcessIdentity> holder = IdentifyReservationHolder(world, options.for_pid);
  if (!holder.ok()) return holder.error();
  request->holder = *holder;
  request->shell = *holder;
  // A process that leases for itself (--for, as gpupin.pin() does) is named
  // by its own command line: `leases` and a refusal then say what holds the card.
  std::optional<std::string> holder_command =
      options.for_pid ? world.procfs().Cmdline(holder->pid) : std::nullopt;
  request->command = holder_command.value_or(fmt::format("{} {}", kShellLeaseCommand, holder->pid));
  Result<Acquired> acquired = AcquireGpus(world, *request);
  if (!acquired.ok()) return acquired.error();
  EnvChanges env = EnvironmentFor(*acquired, options.policy.uuid);
  if (world.options().json) {
    nlohmann::ordered_json out = AcquiredToJson(*acquired);
    nlohmann::ordered_json variables = nlohmann::ordered_json::object();
    for (const auto& [name, value] : env) variables[name] = OrNull(value);
    out["env"] = variables;
    std::printf("%s\n", JsonText(out).c_str());
    return 0;
  }
  bool fish = options.shell == "fish";
  for (const auto& [name, value] : env) {
    if (!value) continue;
    if (fish) {
      std::printf("set -gx %s %s;\n", name.c_str(), Quote(*value, true).c_str());
    } else {
      std::printf("export %s=%s\n", name.c_str(), Quote(*value, false).c_str());
    }
  }
  world.Note(fmt::format("{} held while pid {} lives{}", DescribeChosen(*acquired), holder->pid,
                         options.ttl ? " (or until the TTL, and while its job runs)" : ""));
  // Printed to a terminal, the lines set nothing, yet the cards stay held
  // for the shell's life.
  if (world.terminal().stdout_is_tty()) {
    world.Note(
        fmt::format("these lines set nothing when printed here: run eval \"$(gpupin env ...)\" "
                    "instead, and end this lease with gpupin release {}",
                    acquired->lease.id));
  }
  return 0;
}

}  // namespace

CommandSpec EnvCommand() {
  return {
      "env", "choose GPUs and print export lines for eval \"$(gpupin env)\"", [](CLI::App& app) {
        auto options = std::make_shared<EnvOptions>();
        AddPolicyOptions(app, options->policy);
        app.add_option("--shell", options->shell, "syntax of the lines (default bash)")
            ->check(CLI::IsMember({"bash", "zsh", "sh", "fish"}))
            ->option_text("bash|zsh|sh|fish");
        app.add_option("--for", options->for_pid,
                       "hold the GPUs while this process lives (default: the shell)")
            ->check(WholeNumber(1, std::numeric_limits<pid_t>::max()))
            ->option_text("PID");
        app.add_option("--ttl", options->ttl,
                       "instead, reserve as pick does: until DURATION (more than 0) passes, and "
                       "while the job "
                       "started on them runs")
            ->option_text("DURATION");
        app.footer("Example: eval \"$(gpupin env --mem 20G)\"");
        return [options, &app](World& world) {
          // A [defaults] ttl is the length of pick's reservations: it must
          // not turn the lease of every eval "$(gpupin env)" into one. Typed,
          // or under [env] in a --config file, it is asked for.
          if (world.config().applied.contains("--ttl")) options->ttl.reset();
          return Env(world, *options, app.count("--wait") > 0);
        };
      }};
}

}  // namespace gpupin
