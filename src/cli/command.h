// The shape of every command: it declares its options on its CLI11
// subcommand and returns the function that runs it, so main stays a table.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string_view>

#include "cli/world.h"
#include "core/error.h"

namespace gpupin {

// Runs the command; the value is the process exit status.
using CommandRunner = std::function<Result<int>(World&)>;

struct CommandSpec {
  std::string_view name;
  std::string_view summary;
  std::function<CommandRunner(CLI::App& subcommand)> setup;
  // Takes a command of the user's after "--" (run, docker). For the others
  // "--" only ends the options, so `release -- ID` releases ID.
  bool runs_command = false;
  // Reads every other command's options (config, completion): all are
  // built before it, not only the command that runs.
  bool reads_every_command = false;
  // What the usage line of --help shows after [OPTIONS] ("-- COMMAND
  // [ARGS...]" for run); empty for most.
  std::string_view usage_tail = "";
};

}  // namespace gpupin
