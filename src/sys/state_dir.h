// The shared state directory (doc/state-dir.md): one directory that every
// user of the machine writes leases and queue tickets into, so every name in
// it is hostile input. A StateDir holds an O_NOFOLLOW directory descriptor
// and does everything relative to it, never following a symlink at any name
// it opens, creates, renames or removes.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
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

// A file's contents, the uid that owns it (for forgery checks) and its
// permission bits (who else may have written it).
// `st`'s st_ctime, in nanoseconds since the epoch.
int64_t ChangeTimeNsOf(const struct stat& st);

// What one stat says of a file: its owner, its place in the queue (the
// change time), and which version of the file it is.
struct FileInfo {
  uint32_t owner_uid = 0;
  int64_t change_time_ns = 0;  // st_ctime, in nanoseconds since the epoch
  bool directory = false;      // which no file can be renamed over
  uint64_t inode = 0;
  int64_t size = 0;
  int64_t modify_time_ns = 0;  // st_mtime, in nanoseconds since the epoch
};

FileInfo FileInfoOf(const struct stat& st);

// Whether two stats show the same version of a file: the same inode, not
// written to, renamed over, chmod-ed or chown-ed in between (each changes
// the change time or the inode; two writes of the same size within one
// tick of a coarse file-system clock may not, which only the file's owner
// can do, to its own file).
bool SameVersion(const FileInfo& a, const FileInfo& b);

struct FileRead {
  std::string text;
  FileInfo info;      // from the descriptor the text was read through
  uint32_t mode = 0;  // st_mode & 07777
};

// An exclusive flock held until destruction.
class FileLock {
 public:
  explicit FileLock(UniqueFd fd) : fd_(std::move(fd)) {}

 private:
  UniqueFd fd_;
};

// StateDir::Lock's answer.
struct LockAttempt {
  std::optional<FileLock> lock;  // nullopt: another process held it throughout
  // The lock file's, to find its holder in /proc/locks.
  uint64_t device = 0;
  uint64_t inode = 0;
};

// The most names a reader goes through in one folder of the state
// directory: 64 times what gpupin writes for one user (kMaxRecordsPerUser),
// so that more can only be a flood. Refused at once: read in full, millions
// of names cost every command seconds and hundreds of MiB under the state
// lock; read in part, a lease could be missed and its card taken.
inline constexpr size_t kMostNames = 65536;

class StateDir {
 public:
  // Opens `path`, creating it with mode 1777 (as /tmp: everyone adds files,
  // only owners remove them) when missing. Fails with a message when it is
  // a symlink, not a directory, or writable by others without the sticky bit.
  static Result<StateDir> Open(const std::string& path);

  // Opens the subdirectory `name` (leases/, queue/), creating it with mode
  // 1777 when this user may: root or this directory's owner. It is trusted
  // only when it belongs to one of them and has mode 1777: anyone else who
  // owned it could remove every file in it, and anyone who may create it
  // first could own it. Otherwise fails with a line naming the path, its
  // owner and the fix.
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
  // `name`'s owner and change time, without following a symlink.
  Result<FileInfo> Info(const std::string& name) const;

  // Names in the directory, without hidden ones (temp files start with '.').
  // Fails, naming the user who owns most of them, when it holds more than
  // `most` names, hidden ones included.
  Result<std::vector<std::string>> List(size_t most = kMostNames) const;
  // Whether it holds a name that is not hidden; read only up to the first.
  Result<bool> HasNames() const;
  // Calls `each` with every name, hidden ones too, but . and .., until it
  // returns false; keeps none of them, so a flood of names costs only their
  // reading.
  Status ForEachName(const std::function<bool(const char* name)>& each) const;

  // Takes an exclusive flock on the file `name`, creating it (0644) when
  // missing and this user may (as for Subdir); another user's lock file is
  // opened read-only, which flock allows. The file is trusted as Subdir's
  // are: a regular file of root or this directory's owner, mode 0644.
  // Waits while another process holds it, at most `timeout`: holders are
  // gpupin processes in a critical section of milliseconds, so a timeout
  // means something is wrong (a stopped process, a hostile flock).
  Result<LockAttempt> Lock(const std::string& name, std::chrono::milliseconds timeout) const;

  const std::string& path() const { return path_; }
  int fd() const { return fd_.get(); }
  // Whether users other than its owner may add files (mode 1777).
  bool shared() const { return shared_; }
  // The directory's owner: not necessarily root or us (the first user to run
  // gpupin creates /tmp/gpupin); that owner can remove anyone's files.
  uint32_t owner_uid() const { return owner_uid_; }

 private:
  StateDir(std::string path, UniqueFd fd, uint32_t owner_uid, bool shared)
      : path_(std::move(path)), fd_(std::move(fd)), owner_uid_(owner_uid), shared_(shared) {}
  static Result<StateDir> OpenAt(int parent_fd, const std::string& name, std::string path,
                                 bool may_create);
  // The error for a folder of more names than `names`, the first of them,
  // naming the user who owns most of those.
  Error Flooded(const std::vector<std::string>& names) const;
  // Whether this user may create parts (leases/, queue/, lock) here.
  bool MayCreateParts() const;

  std::string path_;
  UniqueFd fd_;
  uint32_t owner_uid_ = 0;
  bool shared_ = false;
};

// A random suffix for unique names: `bytes` random bytes as hex.
std::string RandomHex(size_t bytes);

}  // namespace gpupin
