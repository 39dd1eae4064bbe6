#include "sys/read_to_end.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace gpupin {

Result<std::string> ReadToEnd(int fd, size_t expected_bytes, size_t max_bytes) {
  // One byte beyond what is expected, so that an unchanged file ends within
  // the first buffer and a longer one shows itself.
  std::string text(std::min(expected_bytes, max_bytes) + 1, '\0');
  size_t filled = 0;
  while (true) {
    if (filled == text.size()) {
      if (filled > max_bytes)
        return MakeError(ExitCode::kError,
                         fmt::format("grew past the {} bytes allowed while read", max_bytes));
      text.resize(std::min(text.size() * 2, max_bytes + 1));
    }
    ssize_t n = read(fd, text.data() + filled, text.size() - filled);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return MakeError(ExitCode::kError, std::strerror(errno));
    if (n == 0) break;
    filled += static_cast<size_t>(n);
  }
  text.resize(filled);
  return text;
}

}  // namespace gpupin
