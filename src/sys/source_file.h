// Reads a file the user names for checking (doctor's Python files): only a
// regular file, only up to a size, and never blocking on a FIFO or device.
#pragma once

#include <cstddef>
#include <string>

#include "core/error.h"

namespace gpupin {

inline constexpr size_t kMaxSourceFileBytes = size_t{4} * 1024 * 1024;

// The whole text of `path`. Fails (ExitCode::kUsage, naming the path and
// why) when it is missing, unreadable, not a regular file (a directory, a
// FIFO, a device; a symlink to a regular file is fine) or larger than
// `max_bytes`.
Result<std::string> ReadSourceFile(const std::string& path, size_t max_bytes = kMaxSourceFileBytes);

}  // namespace gpupin
