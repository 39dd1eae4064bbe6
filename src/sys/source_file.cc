#include "sys/source_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "sys/procfs.h"
#include "sys/read_to_end.h"
#include "sys/unique_fd.h"

namespace gpupin {
namespace {

Error CannotRead(const std::string& path, const std::string& why) {
  return MakeError(ExitCode::kUsage, fmt::format("cannot check {}: {}", path, why));
}

// O_NONBLOCK: opening a FIFO must not wait for a writer; the caller's fstat
// then refuses it.
int OpenToRead(const std::string& path) {
  return open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
}

// Why `info` (the admin file or its folder) cannot be trusted; empty if it can.
std::string Untrusted(const struct stat& info) {
  if (info.st_uid != 0) return "is not owned by root";
  if ((info.st_mode & (S_IWGRP | S_IWOTH)) != 0) return "is writable by group or others";
  return "";
}

}  // namespace

Result<std::string> ReadSourceFile(const std::string& path, size_t max_bytes) {
  if (path.empty()) return MakeError(ExitCode::kUsage, "an empty file name; give a Python file");
  UniqueFd fd(OpenToRead(path));
  if (!fd.valid()) return CannotRead(path, std::strerror(errno));
  struct stat info {};
  if (fstat(fd.get(), &info) != 0) return CannotRead(path, std::strerror(errno));
  if (!S_ISREG(info.st_mode)) return CannotRead(path, "not a regular file");
  if (static_cast<uint64_t>(info.st_size) > max_bytes) {
    return CannotRead(path, fmt::format("larger than {} MiB; is it really a Python file?",
                                        max_bytes / (size_t{1024} * 1024)));
  }
  Result<std::string> text = ReadToEnd(fd.get(), static_cast<size_t>(info.st_size), max_bytes);
  if (!text.ok()) return CannotRead(path, text.error().message);
  return text;
}

Result<std::optional<std::string>> ReadConfigText(const std::string& path, size_t max_bytes,
                                                  FileTrust trust, std::string* ignored) {
  auto refuse = [&](const std::string& why) {
    return MakeError(ExitCode::kError, fmt::format("{}: {}", path, why));
  };
  UniqueFd fd(OpenToRead(path));
  if (!fd.valid()) {
    // ENOTDIR: a part of the path is a file (HOME=/dev/null): no such file.
    if (errno == ENOENT || errno == ENOTDIR) return std::optional<std::string>();
    if (trust == FileTrust::kCallersOwn && errno == EACCES) {
      if (ignored) *ignored = "you cannot read it";
      return std::optional<std::string>();
    }
    return refuse(fmt::format("cannot read it: {}", std::strerror(errno)));
  }
  struct stat info {};
  if (fstat(fd.get(), &info) != 0) return refuse(std::strerror(errno));
  if (!S_ISREG(info.st_mode)) return refuse("not a regular file");
  // Root's, unwritable by others, is as good as the caller's own (made
  // with `sudo vim ~/.config/gpupin/config.toml`): root could change it
  // anyway.
  if (trust == FileTrust::kCallersOwn && info.st_uid != geteuid() && !Untrusted(info).empty()) {
    if (ignored) {
      *ignored = info.st_uid == 0
                     ? "root's, but writable by group or others"
                     : fmt::format("it belongs to {}, not to you", UserName(info.st_uid));
    }
    return std::optional<std::string>();
  }
  const std::string fix = fmt::format(
      "; its rules bind every user, so only root may write it: chown root {} && chmod go-w {}",
      path, path);
  if (std::string why = Untrusted(info); trust == FileTrust::kRootOnly && !why.empty())
    return refuse(why + fix);
  // Whoever may write the folder may put another file in its place.
  std::string folder = std::filesystem::path(path).parent_path().string();
  struct stat folder_info {};
  if (trust == FileTrust::kRootOnly &&
      stat(folder.empty() ? "." : folder.c_str(), &folder_info) == 0) {
    if (std::string why = Untrusted(folder_info); !why.empty()) {
      return refuse(fmt::format(
          "its folder {} {}; its rules bind every user, so only root may write there: chown "
          "root {} && chmod go-w {}",
          folder, why, folder, folder));
    }
  }
  if (static_cast<uint64_t>(info.st_size) > max_bytes)
    return refuse(fmt::format("larger than {} KiB; not a gpupin config file", max_bytes / 1024));
  Result<std::string> text = ReadToEnd(fd.get(), static_cast<size_t>(info.st_size), max_bytes);
  if (!text.ok()) return refuse(text.error().message);
  return std::optional<std::string>(std::move(*text));
}

}  // namespace gpupin
