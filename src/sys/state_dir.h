// The shared state directory (doc/state-dir.md): one directory that every
// user of the machine writes leases and queue tickets into, so every name in
// it is hostile input. A StateDir holds an O_NOFOLLOW directory descriptor
// and does everything relative to it, never following a symlink at any name
// it opens, creates, renames or removes.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "sys/unique_fd.h"

namespace gpupin {

struct StateDirDefaults {
  std::string run_dir = "/run/gpupin";
  std::string tmp_dir = "/tmp/gpupin";
};

// The directory to use: `explicit_path` (--state-dir, else GPUPIN_STATE_DIR,
// resolved by the caller) when given; else run_dir where it exists and this
// user may write it; else tmp_dir.
std::string ChooseStateDirPath(const std::optional<std::string>& explicit_path,
                               const StateDirDefaults& defaults = {});

// A file's contents and the uid that owns it (for forgery checks).
struct FileRead {
  std::string text;
  uint32_t owner_uid = 0;
};

// An exclusive flock held until destruction.
class FileLock {
 public:
  explicit FileLock(UniqueFd fd) : fd_(std::move(fd)) {}

 private:
  UniqueFd fd_;
};

class StateDir {
 public:
  // Opens `path`, creating it with mode 1777 (as /tmp: everyone adds files,
  // only owners remove them) when missing. Fails with a message when it is
  // a symlink, not a directory, or writable by others without the sticky bit.
  static Result<StateDir> Open(const std::string& path);

  // Opens (creating, mode 1777) the subdirectory `name`, with Open's checks.
  Result<StateDir> Subdir(const std::string& name) const;

  // Reads a regular file of at most `max_bytes`. Fails (the caller skips the
  // file) on a symlink, a FIFO or other non-regular file, or a larger file.
  Result<FileRead> ReadFile(const std::string& name, size_t max_bytes) const;

  // Replaces `name` with `text` atomically (a hidden temp file renamed over
  // it), mode 0644 whatever the umask. A symlink at `name` is replaced, never
  // followed. Fails when `name` belongs to another user (sticky directory).
  Status WriteFileAtomic(const std::string& name, std::string_view text) const;

  // Removes `name`; already gone is success. Fails with a message when the
  // file belongs to another user (sticky directory).
  Status Remove(const std::string& name) const;

  // Opens `name` for writing and closes it unchanged, which inotify reports
  // to whoever watches the file (IN_CLOSE_WRITE). Its times, and so its
  // change time, stay as they were. Only our own files: another user's
  // cannot be opened for writing. A symlink is not followed.
  Status NotifyWatchers(const std::string& name) const;

  // When `name`'s inode last changed (st_ctime), in nanoseconds since the
  // epoch. Set by the kernel: its owner can move it forward (any change),
  // never back. A symlink is not followed.
  Result<int64_t> ChangeTimeNs(const std::string& name) const;

  // Names in the directory, without hidden ones (temp files start with '.').
  Result<std::vector<std::string>> List() const;

  // Takes an exclusive flock on the file `name`, creating it (0644) when
  // missing; another user's lock file is opened read-only, which flock allows.
  // Waits while another process holds it: holders are gpupin processes in a
  // critical section of milliseconds, so `timeout` is only reached when
  // something is wrong (a stopped process, a hostile flock), and then says so.
  Result<FileLock> Lock(const std::string& name, std::chrono::milliseconds timeout) const;

  const std::string& path() const { return path_; }
  int fd() const { return fd_.get(); }
  // The directory's owner: not necessarily root or us (the first user to run
  // gpupin creates /tmp/gpupin); that owner can remove anyone's files.
  uint32_t owner_uid() const { return owner_uid_; }

 private:
  StateDir(std::string path, UniqueFd fd, uint32_t owner_uid)
      : path_(std::move(path)), fd_(std::move(fd)), owner_uid_(owner_uid) {}
  static Result<StateDir> OpenAt(int parent_fd, const std::string& name, std::string path);

  std::string path_;
  UniqueFd fd_;
  uint32_t owner_uid_ = 0;
};

// A random suffix for unique names: `bytes` random bytes as hex.
std::string RandomHex(size_t bytes);

}  // namespace gpupin
