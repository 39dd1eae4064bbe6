#pragma once

#include "cli/command.h"

namespace gpupin {

// gpupin ps [--leftovers] [--devfiles]
CommandSpec PsCommand();

}  // namespace gpupin
