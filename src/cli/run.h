#pragma once

#include "cli/command.h"

namespace gpupin {

// gpupin run [policy] [--verify[=TIMEOUT]] -- CMD...
CommandSpec RunCommand();

}  // namespace gpupin
