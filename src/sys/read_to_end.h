// Reads an open file to its end under a size limit.
#pragma once

#include <cstddef>
#include <string>

#include "core/error.h"

namespace gpupin {

// The rest of `fd`, at most `max_bytes` of it. `expected_bytes` (the size
// fstat gave) sizes the buffer: a file may grow while it is read, but a small
// file under a large limit costs only its own size, not the limit's (zeroing
// a 64 KiB buffer for a 1 KiB record paged in 16 pages at every read).
// Fails (ExitCode::kError, with a message that says only why) on a read
// error or when the file holds more than `max_bytes`.
Result<std::string> ReadToEnd(int fd, size_t expected_bytes, size_t max_bytes);

}  // namespace gpupin
