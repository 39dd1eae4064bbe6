#pragma once

#include "cli/command.h"

namespace gpupin {

// gpupin slurm gres
CommandSpec SlurmCommand();

}  // namespace gpupin
