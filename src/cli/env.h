#pragma once

#include "cli/command.h"

namespace gpupin {

// gpupin env [policy] [--shell bash|zsh|fish] [--for PID] [--ttl DURATION]
CommandSpec EnvCommand();

}  // namespace gpupin
