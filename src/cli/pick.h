#pragma once

#include "cli/command.h"

namespace gpupin {

// gpupin pick [policy] [--ttl DURATION] [--explain]
CommandSpec PickCommand();

}  // namespace gpupin
