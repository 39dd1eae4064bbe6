#pragma once

#include "cli/command.h"

namespace gpupin {

// gpupin docker [policy] [--print] -- ARGS...
CommandSpec DockerCommand();

}  // namespace gpupin
