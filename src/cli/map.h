#pragma once

#include <string_view>

#include "cli/command.h"
#include "core/error.h"

namespace gpupin {

// gpupin map [cuda:N] [--env 'VAR=... VAR=...' | --pid N] [--probe]
CommandSpec MapCommand();

// "cuda:3" or "3" -> 3; anything else is a usage error naming it.
Result<int> ParseCudaOrdinal(std::string_view text);

}  // namespace gpupin
