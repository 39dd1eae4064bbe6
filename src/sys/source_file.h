// Reads a file the user names for checking (doctor's Python files) or the
// admin's config: only a regular file, only up to a size, and never blocking
// on a FIFO or device.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "core/error.h"

namespace gpupin {

inline constexpr size_t kMaxSourceFileBytes = size_t{4} * 1024 * 1024;

// The whole text of `path`. Fails (ExitCode::kUsage, naming the path and
// why) when it is missing, unreadable, not a regular file (a directory, a
// FIFO, a device; a symlink to a regular file is fine) or larger than
// `max_bytes`.
Result<std::string> ReadSourceFile(const std::string& path, size_t max_bytes = kMaxSourceFileBytes);

enum class FileTrust {
  // A user's own defaults: a file that is neither the caller's nor root's
  // (root's writable by no one else), or lies where the caller cannot look
  // (HOME left pointing at another user's home by sudo or setpriv), counts
  // as none.
  kCallersOwn,
  // A file whose word binds everyone (the admin's /etc/gpupin/config.toml):
  // only root may write it or its folder, or anyone could change the rules.
  kRootOnly,
};

// The whole text of a config file, or nullopt when there is none. Fails
// (ExitCode::kError, naming the file and the fix) unless it is a regular
// file of at most `max_bytes` that `trust` accepts. A file that exists but
// counts as none (kCallersOwn: another user's, or unreadable) says why in
// `*ignored`.
Result<std::optional<std::string>> ReadConfigText(const std::string& path, size_t max_bytes,
                                                  FileTrust trust, std::string* ignored = nullptr);

}  // namespace gpupin
