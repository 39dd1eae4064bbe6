// The process environment, read in one place so that everything else takes
// plain values (core/ never calls getenv).
#pragma once

#include <map>
#include <string>

#include "core/cuda_visible.h"

namespace gpupin {

// Every variable of this process's environment, NAME to value.
std::map<std::string, std::string> ProcessEnvironment();

// The visibility variables of this process, as getenv finds them.
VisibilityEnv VisibilityEnvFromProcess();

}  // namespace gpupin
