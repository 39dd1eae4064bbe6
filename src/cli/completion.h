// `gpupin completion bash|zsh|fish` prints the shell completion script,
// read off the command table each time, so it completes every command and
// option there is; `completion --list gpus|leases` gives the ids it offers.
#pragma once

#include <CLI/CLI.hpp>
#include <vector>

#include "cli/command.h"
#include "out/completion_script.h"

namespace gpupin {

CommandSpec CompletionCommand();

// The command line of `app` and its commands as the completion scripts see
// it. What an option takes comes from its value text in --help: `IDS` GPU
// ids, `LEASE-ID` lease ids, `FILE`/`PATH` files, `DIR` directories, and
// `a|b|c` or a set `{a,b,c}` a choice. `runs_command` lists the commands
// that take a command line after "--".
std::vector<CompletableCommand> DescribeCommandLine(const CLI::App& app,
                                                    const std::vector<std::string>& runs_command);

}  // namespace gpupin
