#include "sys/source_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "sys/unique_fd.h"

namespace gpupin {
namespace {

Error CannotRead(const std::string& path, const std::string& why) {
  return MakeError(ExitCode::kUsage, fmt::format("cannot check {}: {}", path, why));
}

}  // namespace

Result<std::string> ReadSourceFile(const std::string& path, size_t max_bytes) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer; the fstat below
  // then refuses it.
  UniqueFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
  if (!fd.valid()) return CannotRead(path, std::strerror(errno));
  struct stat info {};
  if (fstat(fd.get(), &info) != 0) return CannotRead(path, std::strerror(errno));
  if (!S_ISREG(info.st_mode)) return CannotRead(path, "not a regular file");
  if (static_cast<uint64_t>(info.st_size) > max_bytes) {
    return CannotRead(path, fmt::format("larger than {} MiB; is it really a Python file?",
                                        max_bytes / (size_t{1024} * 1024)));
  }
  std::string text;
  char buffer[65536];
  while (true) {
    ssize_t n = read(fd.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return CannotRead(path, std::strerror(errno));
    if (n == 0) break;
    text.append(buffer, static_cast<size_t>(n));
    // The file may grow after fstat: the limit holds for what is read.
    if (text.size() > max_bytes) return CannotRead(path, "grew past the size limit while read");
  }
  return text;
}

}  // namespace gpupin
