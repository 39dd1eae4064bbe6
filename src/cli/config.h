#pragma once

#include "cli/command.h"

namespace gpupin {

// gpupin config: every setting in effect, where it came from, and the
// caller's holdings against their cap.
CommandSpec ConfigCommand();

}  // namespace gpupin
