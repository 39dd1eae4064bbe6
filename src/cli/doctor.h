#pragma once

#include "cli/command.h"

namespace gpupin {

// gpupin doctor [FILE.py...] [--probe]
CommandSpec DoctorCommand();

}  // namespace gpupin
