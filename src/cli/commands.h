// The table of gpupin's commands and the parsing of a command line into one
// of them. main only builds the world and calls Dispatch.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "cli/command.h"

namespace gpupin {

const std::vector<CommandSpec>& AllCommands();

// The closest command name to a mistyped one, or "" when nothing is close.
std::string SuggestCommand(std::string_view typed, const std::vector<std::string>& names);

// Parses argv, runs the chosen command, prints any error once, and returns
// the process exit status. `admin_config` is the admin's file
// (/etc/gpupin/config.toml in every installed gpupin; doc/config.md).
int Dispatch(int argc, char** argv, const std::string& admin_config);

}  // namespace gpupin
