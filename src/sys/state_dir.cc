#include "sys/state_dir.h"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <tuple>

#include "sys/procfs.h"
#include "sys/read_to_end.h"
#include "sys/timed_flock.h"

namespace gpupin {
namespace {

constexpr mode_t kSharedDirMode = 01777;
constexpr mode_t kFileMode = 0644;

Error SystemError(const std::string& what) {
  return MakeError(ExitCode::kError, fmt::format("{}: {}", what, std::strerror(errno)));
}

std::string Who(uint32_t uid) { return fmt::format("{} (uid {})", UserName(uid), uid); }

// Group- or world-writable without the sticky bit means anyone with write
// access can rename or delete any file, so nothing in it can be trusted.
std::optional<Error> UnsafeDirectory(const struct stat& st, const std::string& path) {
  if (!S_ISDIR(st.st_mode)) {
    return MakeError(ExitCode::kError, fmt::format("state directory {} is not a directory; remove "
                                                   "it or choose another with --state-dir",
                                                   path));
  }
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0 && (st.st_mode & S_ISVTX) == 0) {
    return MakeError(ExitCode::kError,
                     fmt::format("state directory {} is writable by others without the sticky "
                                 "bit (mode {:04o}), so anyone could replace its files; {}",
                                 path, st.st_mode & 07777,
                                 // chmod follows a link another user could put in its place.
                                 st.st_uid == geteuid()
                                     ? fmt::format("run 'chmod 1777 {}' or choose another with "
                                                   "--state-dir",
                                                   path)
                                     : fmt::format("it is {}'s: choose another with --state-dir",
                                                   Who(st.st_uid))));
  }
  return std::nullopt;
}

std::string JoinPath(const std::string& dir, const std::string& name) {
  return dir.ends_with('/') ? dir + name : dir + "/" + name;
}

// A part of the state directory (leases/, queue/, lock) is trusted only when
// it belongs to root or to the directory's owner (who can remove anything in
// the directory anyway) and has the mode gpupin gives it. Its owner can
// remove every file in a directory part; the lock's owner can replace it,
// and two processes locking two different files exclude nobody.
std::optional<Error> UntrustedPart(const struct stat& st, const std::string& path,
                                   uint32_t dir_owner, mode_t mode) {
  const std::string what = S_ISDIR(mode) ? "directory" : "lock file";
  const bool wrong_type = (st.st_mode & S_IFMT) != (mode & S_IFMT);
  const bool wrong_owner = st.st_uid != 0 && st.st_uid != dir_owner;
  const bool wrong_mode = (st.st_mode & 07777) != (mode & 07777);
  if (!wrong_type && !wrong_owner && !wrong_mode) return std::nullopt;
  const bool other_name = S_ISREG(st.st_mode) && st.st_nlink > 1;
  std::string problem;
  if (wrong_type) {
    problem = fmt::format("is not a {}", S_ISDIR(mode) ? "directory" : "regular file");
  } else if (wrong_owner) {
    problem = fmt::format(
        "belongs to {}, not to root or the state directory's owner {}, so {} could remove or "
        "replace what others put there",
        Who(st.st_uid), Who(dir_owner), UserName(st.st_uid));
  } else {
    problem = fmt::format("has mode {:04o}, not {:04o}{}", st.st_mode & 07777, mode & 07777,
                          other_name ? ", and another name elsewhere (a hard link)" : "");
  }
  // chmod follows a link and rm does not: a part is changed in place only by
  // the one user who owns both it and the directory, where nobody else can
  // swap it for a link to a file of theirs.
  std::string fix;
  if (dir_owner != 0 && dir_owner != geteuid()) {
    fix =
        fmt::format("the state directory is {}'s: choose another with --state-dir", Who(dir_owner));
  } else if (!wrong_type && !wrong_owner && !other_name && st.st_uid == dir_owner) {
    fix = fmt::format("as {}, run 'chmod {:04o} {}'", Who(st.st_uid), mode & 07777, path);
  } else {
    fix = fmt::format("remove it ('{} {}', as root{}) and gpupin makes it anew",
                      S_ISDIR(st.st_mode) ? "rm -r" : "rm", path,
                      dir_owner == 0 ? "" : " or " + Who(dir_owner));
  }
  return MakeError(ExitCode::kError, fmt::format("state {} {} {}; {}", what, path, problem, fix));
}

Error MissingPart(const std::string& path, uint32_t dir_owner) {
  return MakeError(ExitCode::kError,
                   fmt::format("state directory part {} is missing, and only root or the "
                               "directory's owner {} may create it (anyone else's would be "
                               "refused); run any gpupin command once as one of them (sudo "
                               "gpupin leases), or systemd-tmpfiles --create",
                               path, Who(dir_owner)));
}

Status WriteAll(int fd, std::string_view text) {
  while (!text.empty()) {
    ssize_t n = write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return SystemError("write");
    text.remove_prefix(static_cast<size_t>(n));
  }
  return Ok{};
}

}  // namespace

std::string RandomHex(size_t bytes) {
  std::string raw(bytes, '\0');
  size_t filled = 0;
  while (filled < bytes) {
    ssize_t n = getrandom(raw.data() + filled, bytes - filled, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    filled += static_cast<size_t>(n);
  }
  std::string hex;
  for (char c : raw) hex += fmt::format("{:02x}", static_cast<unsigned char>(c));
  return hex;
}

std::string ChooseStateDirPath(const std::optional<std::string>& explicit_path,
                               const StateDirDefaults& defaults) {
  if (explicit_path && !explicit_path->empty()) return *explicit_path;
  if (access(defaults.run_dir.c_str(), W_OK | X_OK) == 0) return defaults.run_dir;
  return defaults.tmp_dir;
}

Result<StateDir> StateDir::Open(const std::string& path) {
  // "link/" would make the kernel follow the symlink despite O_NOFOLLOW.
  std::string trimmed = path;
  while (trimmed.size() > 1 && trimmed.ends_with('/')) trimmed.pop_back();
  return OpenAt(AT_FDCWD, trimmed, path, true);
}

bool StateDir::MayCreateParts() const { return geteuid() == 0 || geteuid() == owner_uid_; }

Result<StateDir> StateDir::Subdir(const std::string& name) const {
  std::string path = JoinPath(path_, name);
  Result<StateDir> dir = OpenAt(fd(), name, path, MayCreateParts());
  if (!dir) return dir;
  struct stat st {};
  if (fstat(dir->fd(), &st) != 0) return SystemError(fmt::format("cannot stat {}", path));
  // Ours with another mode (an older gpupin, a umask): ours to repair.
  if (st.st_uid == geteuid() && (st.st_mode & 07777) != kSharedDirMode &&
      fchmod(dir->fd(), kSharedDirMode) == 0) {
    st.st_mode = (st.st_mode & ~mode_t{07777}) | kSharedDirMode;
  }
  if (std::optional<Error> untrusted =
          UntrustedPart(st, path, owner_uid_, S_IFDIR | kSharedDirMode))
    return *untrusted;
  return dir;
}

Result<StateDir> StateDir::OpenAt(int parent_fd, const std::string& name, std::string path,
                                  bool may_create) {
  bool created = may_create && mkdirat(parent_fd, name.c_str(), kSharedDirMode) == 0;
  struct stat existing {};
  if (!may_create && fstatat(parent_fd, name.c_str(), &existing, AT_SYMLINK_NOFOLLOW) != 0 &&
      errno == ENOENT) {
    struct stat parent {};
    if (fstat(parent_fd, &parent) != 0) return SystemError(fmt::format("cannot stat {}", path));
    return MissingPart(path, parent.st_uid);
  }
  if (may_create && !created && errno != EEXIST) {
    return MakeError(ExitCode::kError,
                     fmt::format("cannot create state directory {}: {}; choose another with "
                                 "--state-dir",
                                 path, std::strerror(errno)));
  }
  UniqueFd fd(openat(parent_fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid()) {
    // O_DIRECTORY|O_NOFOLLOW on a symlink fails with ENOTDIR, not ELOOP.
    struct stat link {};
    if (errno == ELOOP || (fstatat(parent_fd, name.c_str(), &link, AT_SYMLINK_NOFOLLOW) == 0 &&
                           S_ISLNK(link.st_mode))) {
      return MakeError(ExitCode::kError,
                       fmt::format("state directory {} is a symbolic link; refusing to follow it "
                                   "(it could point anywhere); remove it or choose another with "
                                   "--state-dir",
                                   path));
    }
    if (errno == ENOTDIR) {
      return MakeError(ExitCode::kError,
                       fmt::format("state directory {} is not a directory; remove it or choose "
                                   "another with --state-dir",
                                   path));
    }
    return SystemError(fmt::format("cannot open state directory {}", path));
  }
  struct stat st {};
  if (fstat(fd.get(), &st) != 0) return SystemError(fmt::format("cannot stat {}", path));
  // mkdir's mode went through the umask; give the directory the mode it must
  // have before anyone else can see the narrower one matter.
  if (created && st.st_uid == geteuid() && (st.st_mode & 07777) != kSharedDirMode) {
    if (fchmod(fd.get(), kSharedDirMode) != 0) {
      return SystemError(fmt::format("cannot chmod 1777 {}", path));
    }
    st.st_mode = (st.st_mode & ~mode_t{07777}) | kSharedDirMode;
  }
  if (std::optional<Error> unsafe = UnsafeDirectory(st, path)) return *unsafe;
  return StateDir(std::move(path), std::move(fd), st.st_uid, (st.st_mode & S_IWOTH) != 0);
}

Result<FileRead> StateDir::ReadFile(const std::string& name, size_t max_bytes) const {
  // O_NONBLOCK: opening a planted FIFO must not wait for a writer.
  UniqueFd fd(
      openat(this->fd(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
  if (!fd.valid()) {
    if (errno == ELOOP) return MakeError(ExitCode::kError, "is a symbolic link (not followed)");
    return SystemError("cannot open");
  }
  struct stat st {};
  if (fstat(fd.get(), &st) != 0) return SystemError("cannot stat");
  if (!S_ISREG(st.st_mode)) return MakeError(ExitCode::kError, "is not a regular file");
  if (static_cast<uint64_t>(st.st_size) > max_bytes) {
    return MakeError(ExitCode::kError,
                     fmt::format("is {} bytes, more than the {} allowed", st.st_size, max_bytes));
  }
  Result<std::string> text = ReadToEnd(fd.get(), static_cast<size_t>(st.st_size), max_bytes);
  if (!text.ok()) return MakeError(ExitCode::kError, "cannot read: " + text.error().message);
  return FileRead{std::move(text.value()), FileInfoOf(st),
                  static_cast<uint32_t>(st.st_mode & 07777)};
}

Status StateDir::WriteFileAtomic(const std::string& name, std::string_view text) const {
  std::string temp = fmt::format(".{}.{}.{}", name, getpid(), RandomHex(6));
  UniqueFd fd(openat(this->fd(), temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                     kFileMode));
  if (!fd.valid()) return SystemError(fmt::format("cannot create a file in {}", path_));
  Status written =
      fchmod(fd.get(), kFileMode) == 0 ? WriteAll(fd.get(), text) : Status(SystemError("chmod"));
  fd.Reset();
  if (written.ok() && renameat(this->fd(), temp.c_str(), this->fd(), name.c_str()) != 0) {
    written = errno == EPERM || errno == EACCES
                  ? Status(MakeError(ExitCode::kError,
                                     fmt::format("cannot replace {}: it belongs to another user",
                                                 JoinPath(path_, name))))
                  : Status(SystemError(fmt::format("cannot rename into {}", path_)));
  }
  if (!written.ok()) {
    unlinkat(this->fd(), temp.c_str(), 0);
    return written.error().WithContext(fmt::format("writing {}", JoinPath(path_, name)));
  }
  return Ok{};
}

Status StateDir::Remove(const std::string& name) const {
  if (unlinkat(fd(), name.c_str(), 0) == 0 || errno == ENOENT) return Ok{};
  if (errno == EPERM || errno == EACCES) {
    return MakeError(ExitCode::kError, fmt::format("cannot remove {}: it belongs to another user",
                                                   JoinPath(path_, name)));
  }
  return SystemError(fmt::format("cannot remove {}", JoinPath(path_, name)));
}

Status StateDir::NotifyWatchers(const std::string& name) const {
  UniqueFd file(
      openat(fd(), name.c_str(), O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
  if (file.valid()) return Ok{};
  return SystemError(fmt::format("cannot notify the watchers of {}", JoinPath(path_, name)));
}

int64_t ChangeTimeNsOf(const struct stat& st) {
  return int64_t{st.st_ctim.tv_sec} * 1'000'000'000 + st.st_ctim.tv_nsec;
}

FileInfo FileInfoOf(const struct stat& st) {
  return FileInfo{
      st.st_uid,           ChangeTimeNsOf(st),
      S_ISDIR(st.st_mode), st.st_ino,
      st.st_size,          int64_t{st.st_mtim.tv_sec} * 1'000'000'000 + st.st_mtim.tv_nsec};
}

bool SameVersion(const FileInfo& a, const FileInfo& b) {
  return std::tie(a.owner_uid, a.change_time_ns, a.directory, a.inode, a.size, a.modify_time_ns) ==
         std::tie(b.owner_uid, b.change_time_ns, b.directory, b.inode, b.size, b.modify_time_ns);
}

Result<int64_t> StateDir::ChangeTimeNs(const std::string& name) const {
  Result<FileInfo> info = Info(name);
  if (!info) return info.error();
  return info->change_time_ns;
}

Result<FileInfo> StateDir::Info(const std::string& name) const {
  struct stat st {};
  if (fstatat(fd(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
    return SystemError(fmt::format("cannot stat {}", JoinPath(path_, name)));
  return FileInfoOf(st);
}

Status StateDir::ForEachName(const std::function<bool(const char* name)>& each) const {
  int copy = openat(fd(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (copy < 0) return SystemError(fmt::format("cannot list {}", path_));
  std::unique_ptr<DIR, int (*)(DIR*)> dir(fdopendir(copy), closedir);
  if (!dir) {
    close(copy);
    return SystemError(fmt::format("cannot list {}", path_));
  }
  // readdir says the end and a failure alike (NULL), errno apart: a
  // listing cut short must not pass for the whole folder.
  errno = 0;
  while (dirent* entry = readdir(dir.get())) {
    const std::string_view name = entry->d_name;
    if (name != "." && name != ".." && !each(entry->d_name)) return Ok{};
    errno = 0;
  }
  if (errno != 0) return SystemError(fmt::format("cannot list {}", path_));
  return Ok{};
}

Error StateDir::Flooded(const std::vector<std::string>& names) const {
  std::map<uint32_t, size_t> per_owner;
  for (const std::string& name : names) {
    if (Result<FileInfo> info = Info(name); info.ok()) ++per_owner[info->owner_uid];
  }
  auto most = std::max_element(per_owner.begin(), per_owner.end(),
                               [](const auto& a, const auto& b) { return a.second < b.second; });
  const std::string whose = most == per_owner.end()
                                ? ""
                                : fmt::format(", {} of the first {} owned by {}", most->second,
                                              names.size(), Who(most->first));
  const std::string fix =
      most == per_owner.end()
          ? fmt::format("have its extra names removed from {}", path_)
          : fmt::format("have root remove them: find {} -user {} -delete", path_, most->first);
  Error flooded = MakeError(
      ExitCode::kError, fmt::format("state directory part {} holds more than {} names{}: more than "
                                    "gpupin ever writes there, so someone flooded it, and gpupin "
                                    "reads no further rather than miss a lease; {}",
                                    path_, names.size(), whose, fix));
  flooded.passing = true;
  return flooded;
}

Result<std::vector<std::string>> StateDir::List(size_t most) const {
  // Hidden names count too: temp files are as many as the writers that
  // died mid-write, and a flood may hide its names.
  std::vector<std::string> names;
  bool flooded = false;
  Status listed = ForEachName([&](const char* name) {
    flooded = names.size() == most;
    if (!flooded) names.emplace_back(name);
    return !flooded;
  });
  if (!listed.ok()) return listed.error();
  if (flooded) return Flooded(names);
  std::erase_if(names, [](const std::string& name) { return name.starts_with('.'); });
  return names;
}

Result<bool> StateDir::HasNames() const {
  bool found = false;
  Status listed = ForEachName([&](const char* name) {
    found = name[0] != '.';
    return !found;
  });
  if (!listed.ok()) return listed.error();
  return found;
}

Result<LockAttempt> StateDir::Lock(const std::string& name,
                                   std::chrono::milliseconds timeout) const {
  const std::string lock_path = JoinPath(path_, name);
  const int flags = O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC;
  const bool may_create = MayCreateParts();
  UniqueFd fd;
  if (may_create) fd.Reset(openat(this->fd(), name.c_str(), O_RDWR | O_CREAT | flags, kFileMode));
  // Another user's lock file: we may not write it (and protected_regular
  // forbids O_CREAT on it), but a read-only descriptor can hold a flock.
  if (!fd.valid() && (!may_create || errno == EACCES || errno == EPERM)) {
    fd.Reset(openat(this->fd(), name.c_str(), O_RDONLY | flags));
  }
  if (!fd.valid()) {
    if (errno == ELOOP) {
      return MakeError(ExitCode::kError,
                       fmt::format("lock file {} is a symbolic link; refusing to follow it; "
                                   "remove it",
                                   lock_path));
    }
    if (errno == ENOENT) return MissingPart(lock_path, owner_uid_);
    return SystemError(fmt::format("cannot open lock file {}", lock_path));
  }
  struct stat st {};
  if (fstat(fd.get(), &st) != 0) return SystemError(fmt::format("cannot stat {}", lock_path));
  // Others must be able to open it whatever our umask was. Only a file with
  // no other name: a hard link planted here to a file of ours elsewhere
  // keeps its mode (and, unless it is already 0644, is refused below).
  if (S_ISREG(st.st_mode) && st.st_uid == geteuid() && st.st_nlink == 1 &&
      (st.st_mode & 07777) != kFileMode && fchmod(fd.get(), kFileMode) == 0) {
    st.st_mode = (st.st_mode & ~mode_t{07777}) | kFileMode;
  }
  if (std::optional<Error> untrusted =
          UntrustedPart(st, lock_path, owner_uid_, S_IFREG | kFileMode))
    return *untrusted;
  LockAttempt attempt;
  attempt.device = st.st_dev;
  attempt.inode = st.st_ino;
  switch (LockExclusiveWithin(fd.get(), timeout)) {
    case FlockOutcome::kLocked:
      attempt.lock.emplace(std::move(fd));
      return attempt;
    case FlockOutcome::kTimedOut:
      return attempt;
    case FlockOutcome::kFailed:
      break;
  }
  return SystemError(fmt::format("cannot lock {}", lock_path));
}

}  // namespace gpupin
