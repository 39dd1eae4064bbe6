#pragma once

#include "cli/command.h"

namespace gpupin {

// gpupin ls [--watch [SECONDS]]
CommandSpec LsCommand();

}  // namespace gpupin
