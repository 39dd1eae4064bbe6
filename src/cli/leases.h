#pragma once

#include "cli/command.h"

namespace gpupin {

// gpupin leases [--all]
CommandSpec LeasesCommand();
// gpupin release [ID...]
CommandSpec ReleaseCommand();

}  // namespace gpupin
