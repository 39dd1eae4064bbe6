#include "sys/state_dir.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "sys/procfs.h"
#include "testing/processes.h"
#include "testing/temp_dir.h"

namespace gpupin {
namespace {

using testing::kNobody;
using testing::RunInChild;
using testing::TempDir;
using namespace std::chrono_literals;

mode_t ModeOf(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(lstat(path.c_str(), &st), 0) << path;
  return st.st_mode;
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void ExpectErrorContains(const Status& status, const std::string& text) {
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.error().message.find(text), std::string::npos) << status.error().message;
  EXPECT_EQ(status.error().message.find('\n'), std::string::npos);
}

template <class T>
Status AsStatus(const Result<T>& result) {
  if (result.ok()) return Ok{};
  return result.error();
}

class UmaskGuard {
 public:
  explicit UmaskGuard(mode_t mask) : old_(umask(mask)) {}
  ~UmaskGuard() { umask(old_); }

 private:
  mode_t old_;
};

TEST(StateDir, CreatesStickyWorldWritableDirectoriesWhateverTheUmask) {
  TempDir tmp;
  UmaskGuard guard(077);
  Result<StateDir> dir = StateDir::Open(tmp / "state");
  ASSERT_TRUE(dir.ok()) << dir.error().message;
  EXPECT_EQ(ModeOf(tmp / "state") & 07777, 01777u);
  Result<StateDir> sub = dir->Subdir("leases");
  ASSERT_TRUE(sub.ok()) << sub.error().message;
  EXPECT_EQ(ModeOf(tmp / "state/leases") & 07777, 01777u);
  EXPECT_EQ(sub->path(), tmp / "state/leases");
  // Opening again finds the same directory and changes nothing.
  ASSERT_TRUE(StateDir::Open(tmp / "state").ok());
}

TEST(StateDir, RefusesASymlinkedStateDirectory) {
  TempDir tmp;
  ASSERT_EQ(mkdir((tmp / "real").c_str(), 01777), 0);
  ASSERT_EQ(symlink((tmp / "real").c_str(), (tmp / "link").c_str()), 0);
  ExpectErrorContains(AsStatus(StateDir::Open(tmp / "link")), "is a symbolic link");
  ExpectErrorContains(AsStatus(StateDir::Open(tmp / "link/")), "is a symbolic link");
  ASSERT_TRUE(StateDir::Open(tmp / "real").ok());
  ASSERT_EQ(symlink((tmp / "real").c_str(), (tmp / "real/leases").c_str()), 0);
  ExpectErrorContains(AsStatus(StateDir::Open(tmp / "real")->Subdir("leases")),
                      "is a symbolic link");
}

TEST(StateDir, RefusesWritableByOthersWithoutStickyBit) {
  TempDir tmp;
  for (mode_t mode : {0777, 0770, 0772}) {
    // Not `"d" + std::to_string(mode)`: GCC 12 at -O3 reports a false -Wrestrict on it.
    std::string path = tmp / fmt::format("d{}", mode);
    ASSERT_EQ(mkdir(path.c_str(), 0700), 0);
    ASSERT_EQ(chmod(path.c_str(), mode), 0);
    ExpectErrorContains(AsStatus(StateDir::Open(path)), "without the sticky bit");
    EXPECT_EQ(ModeOf(path) & 07777, mode) << "left as it was";
  }
  std::string own = tmp / "private";
  ASSERT_EQ(mkdir(own.c_str(), 0755), 0);
  EXPECT_TRUE(StateDir::Open(own).ok());
}

TEST(StateDir, RefusesANonDirectory) {
  TempDir tmp;
  tmp.Write("file", "x");
  ExpectErrorContains(AsStatus(StateDir::Open(tmp / "file")), "not a directory");
  ExpectErrorContains(AsStatus(StateDir::Open(tmp / "missing/deeper")), "cannot create");
}

TEST(StateDir, AcceptsAStickyDirectoryCreatedByAnotherUser) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to chown";
  TempDir tmp;
  ASSERT_EQ(mkdir((tmp / "state").c_str(), 0700), 0);
  ASSERT_EQ(chown((tmp / "state").c_str(), kNobody, kNobody), 0);
  ASSERT_EQ(chmod((tmp / "state").c_str(), 01777), 0);
  Result<StateDir> dir = StateDir::Open(tmp / "state");
  ASSERT_TRUE(dir.ok()) << dir.error().message;
  EXPECT_EQ(dir->owner_uid(), kNobody);
}

TEST(StateDir, ChoosesExplicitThenRunThenTmp) {
  TempDir tmp;
  StateDirDefaults defaults{tmp / "run", tmp / "tmp"};
  EXPECT_EQ(ChooseStateDirPath(std::string("/x"), defaults), "/x");
  EXPECT_EQ(ChooseStateDirPath(std::nullopt, defaults), tmp / "tmp");
  ASSERT_EQ(mkdir((tmp / "run").c_str(), 0755), 0);
  EXPECT_EQ(ChooseStateDirPath(std::string(""), defaults), tmp / "run");
  if (geteuid() == 0) return;  // root may write anything
  ASSERT_EQ(chmod((tmp / "run").c_str(), 0555), 0);
  EXPECT_EQ(ChooseStateDirPath(std::nullopt, defaults), tmp / "tmp");
}

TEST(StateDir, WritesAtomicallyWithMode0644) {
  TempDir tmp;
  UmaskGuard guard(0);
  Result<StateDir> dir = StateDir::Open(tmp / "s");
  ASSERT_TRUE(dir.ok());
  ASSERT_TRUE(dir->WriteFileAtomic("a.json", "one").ok());
  ASSERT_TRUE(dir->WriteFileAtomic("a.json", "two").ok());
  EXPECT_EQ(Slurp(tmp / "s/a.json"), "two");
  EXPECT_EQ(ModeOf(tmp / "s/a.json") & 07777, 0644u);
  // No temp file is left behind, hidden or not.
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(tmp / "s"), {}), 1);
  Result<std::vector<std::string>> names = dir->List();
  ASSERT_TRUE(names.ok());
  EXPECT_EQ(*names, std::vector<std::string>{"a.json"});
}

TEST(StateDir, ListsUpToTheMostNamesAndRefusesAFloodNamingItsOwner) {
  TempDir tmp;
  Result<StateDir> dir = StateDir::Open(tmp / "s");
  ASSERT_TRUE(dir.ok());
  Result<bool> has = dir->HasNames();
  ASSERT_TRUE(has.ok());
  EXPECT_FALSE(*has);
  // Hidden names count towards the limit, though List leaves them out.
  auto create = [&](const std::string& name) {
    int fd = openat(dir->fd(), name.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
    ASSERT_GE(fd, 0) << name;
    close(fd);
  };
  create(".hidden");
  has = dir->HasNames();
  ASSERT_TRUE(has.ok());
  EXPECT_FALSE(*has);
  constexpr size_t kMost = 8;
  for (size_t i = 1; i < kMost; ++i) create(fmt::format("{:06}.json", i));
  Result<std::vector<std::string>> names = dir->List(kMost);
  ASSERT_TRUE(names.ok()) << names.error().message;
  EXPECT_EQ(names->size(), kMost - 1);
  has = dir->HasNames();
  ASSERT_TRUE(has.ok());
  EXPECT_TRUE(*has);

  create("one-too-many.json");
  names = dir->List(kMost);
  ASSERT_FALSE(names.ok());
  const std::string& message = names.error().message;
  EXPECT_NE(message.find(fmt::format("{} holds more than {} names", tmp / "s", kMost)),
            std::string::npos)
      << message;
  EXPECT_NE(message.find(fmt::format("owned by {} (uid {})", UserName(geteuid()), geteuid())),
            std::string::npos)
      << message;
  EXPECT_NE(message.find(fmt::format("find {} -user {} -delete", tmp / "s", geteuid())),
            std::string::npos)
      << message;
  EXPECT_EQ(message.find('\n'), std::string::npos);
}

TEST(StateDir, ReplacesAPlantedSymlinkWithoutFollowingIt) {
  TempDir tmp;
  tmp.Write("victim", "precious");
  Result<StateDir> dir = StateDir::Open(tmp / "s");
  ASSERT_TRUE(dir.ok());
  ASSERT_EQ(symlink((tmp / "victim").c_str(), (tmp / "s/a.json").c_str()), 0);
  ExpectErrorContains(AsStatus(dir->ReadFile("a.json", 100)), "symbolic link");
  ASSERT_TRUE(dir->WriteFileAtomic("a.json", "mine").ok());
  EXPECT_EQ(Slurp(tmp / "victim"), "precious");
  EXPECT_TRUE(S_ISREG(ModeOf(tmp / "s/a.json")));
  ASSERT_EQ(symlink((tmp / "victim").c_str(), (tmp / "s/b.json").c_str()), 0);
  ASSERT_TRUE(dir->Remove("b.json").ok());
  EXPECT_EQ(Slurp(tmp / "victim"), "precious");
}

TEST(StateDir, ReadsOnlySmallRegularFiles) {
  TempDir tmp;
  Result<StateDir> dir = StateDir::Open(tmp / "s");
  ASSERT_TRUE(dir.ok());
  tmp.Write("s/ok", "hello");
  Result<FileRead> ok = dir->ReadFile("ok", 5);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->text, "hello");
  EXPECT_EQ(ok->info.owner_uid, geteuid());
  tmp.Write("s/big", std::string(10 << 20, 'x'));
  ExpectErrorContains(AsStatus(dir->ReadFile("big", 64 << 10)), "more than");
  ASSERT_EQ(mkfifo((tmp / "s/fifo").c_str(), 0644), 0);  // would block a plain open
  ExpectErrorContains(AsStatus(dir->ReadFile("fifo", 100)), "not a regular file");
  ASSERT_EQ(mkdir((tmp / "s/dir").c_str(), 0755), 0);
  ExpectErrorContains(AsStatus(dir->ReadFile("dir", 100)), "not a regular file");
  EXPECT_FALSE(dir->ReadFile("missing", 100).ok());
}

TEST(StateDir, RemoveOfAMissingFileSucceeds) {
  TempDir tmp;
  Result<StateDir> dir = StateDir::Open(tmp / "s");
  ASSERT_TRUE(dir.ok());
  EXPECT_TRUE(dir->Remove("nothing").ok());
}

TEST(StateDir, OthersFilesCannotBeRemovedOrReplacedInTheStickyDirectory) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to act as another user";
  TempDir tmp;
  Result<StateDir> dir = StateDir::Open(tmp / "s");
  ASSERT_TRUE(dir.ok());
  ASSERT_TRUE(dir->WriteFileAtomic("root.json", "root's").ok());
  int code = RunInChild(
      [&] {
        Status removed = dir->Remove("root.json");
        Status replaced = dir->WriteFileAtomic("root.json", "nobody's");
        bool ok = !removed.ok() &&
                  removed.error().message.find("belongs to another user") != std::string::npos &&
                  !replaced.ok() &&
                  replaced.error().message.find("belongs to another user") != std::string::npos &&
                  dir->WriteFileAtomic("nobody.json", "x").ok();
        return ok ? 0 : 1;
      },
      kNobody);
  EXPECT_EQ(code, 0);
  EXPECT_EQ(Slurp(tmp / "s/root.json"), "root's");
  struct stat st {};
  ASSERT_EQ(stat((tmp / "s/nobody.json").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, kNobody);
  // No temp file of the failed replacement is left.
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(tmp / "s"), {}), 2);
}

TEST(StateDir, LockExcludesAndTimesOutWithAMessage) {
  TempDir tmp;
  Result<StateDir> dir = StateDir::Open(tmp / "s");
  ASSERT_TRUE(dir.ok());
  Result<LockAttempt> first = dir->Lock("lock", 1s);
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_TRUE(first->lock.has_value());
  auto start = std::chrono::steady_clock::now();
  Result<LockAttempt> second = dir->Lock("lock", 100ms);
  EXPECT_GE(std::chrono::steady_clock::now() - start, 100ms);
  ASSERT_TRUE(second.ok()) << second.error().message;
  EXPECT_FALSE(second->lock.has_value()) << "held by the first";
  struct stat st {};
  ASSERT_EQ(stat((tmp / "s/lock").c_str(), &st), 0);
  EXPECT_EQ(second->inode, st.st_ino);
  EXPECT_EQ(second->device, st.st_dev);
}

TEST(StateDir, LockIsReleasedWhenTheHolderIsKilled) {
  TempDir tmp;
  Result<StateDir> dir = StateDir::Open(tmp / "s");
  ASSERT_TRUE(dir.ok());
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  pid_t holder = fork();
  if (holder == 0) {
    Result<LockAttempt> lock = dir->Lock("lock", 1s);
    (void)!write(ready[1], "x", 1);
    pause();
    _exit(0);
  }
  char byte;
  ASSERT_EQ(read(ready[0], &byte, 1), 1);
  EXPECT_FALSE(dir->Lock("lock", 20ms)->lock.has_value());
  kill(holder, SIGKILL);
  waitpid(holder, nullptr, 0);
  EXPECT_TRUE(dir->Lock("lock", 1s)->lock.has_value());
  close(ready[0]);
  close(ready[1]);
}

TEST(StateDir, LockRefusesASymlinkAndNonRegularFiles) {
  TempDir tmp;
  tmp.Write("victim", "precious");
  Result<StateDir> dir = StateDir::Open(tmp / "s");
  ASSERT_TRUE(dir.ok());
  ASSERT_EQ(symlink((tmp / "victim").c_str(), (tmp / "s/lock").c_str()), 0);
  ExpectErrorContains(AsStatus(dir->Lock("lock", 100ms)), "symbolic link");
  ASSERT_EQ(mkfifo((tmp / "s/fifo").c_str(), 0666), 0);
  ExpectErrorContains(AsStatus(dir->Lock("fifo", 100ms)), "not a regular file");
  EXPECT_EQ(Slurp(tmp / "victim"), "precious");
}

// The owner of a shared state directory links a file of ours from
// elsewhere as its lock file: gpupin refuses it and leaves its mode alone.
TEST(StateDir, AHardLinkPlantedAsTheLockFileKeepsItsMode) {
  TempDir tmp;
  tmp.Write("ours", "#!/bin/sh\n");
  ASSERT_EQ(chmod((tmp / "ours").c_str(), 0777), 0);
  Result<StateDir> dir = StateDir::Open(tmp / "s");
  ASSERT_TRUE(dir.ok());
  ASSERT_EQ(link((tmp / "ours").c_str(), (tmp / "s/lock").c_str()), 0);
  EXPECT_FALSE(dir->Lock("lock", 100ms).ok());
  EXPECT_EQ(ModeOf(tmp / "ours") & 07777, 0777u);
  // The fix removes the name, which leaves the file it links to alone; a
  // chmod would change that file.
  const std::string path = tmp / "s/lock";
  ExpectErrorContains(AsStatus(dir->Lock("lock", 100ms)),
                      "has mode 0777, not 0644, and another name elsewhere (a hard link); remove "
                      "it ('rm " +
                          path + "'");
}

TEST(StateDir, AnotherUsersLockFileIsLockedReadOnly) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to act as another user";
  TempDir tmp;
  Result<StateDir> dir = StateDir::Open(tmp / "s");
  ASSERT_TRUE(dir.ok());
  { ASSERT_TRUE(dir->Lock("lock", 1s).ok()); }  // created by root, 0644
  EXPECT_EQ(ModeOf(tmp / "s/lock") & 07777, 0644u);
  int code = RunInChild(
      [&] {
        Result<LockAttempt> lock = dir->Lock("lock", 1s);
        if (!lock.ok() || !lock->lock) return 1;
        // Held: a second description of the file cannot take it.
        int other = openat(dir->fd(), "lock", O_RDONLY);
        return flock(other, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK ? 0 : 2;
      },
      kNobody);
  EXPECT_EQ(code, 0);
}

// nobody squats the parts of root's state directory before root's first
// run: every part is refused, with one line naming it, its owner and the fix.
TEST(StateDir, PartsOfAnotherUserAreRefused) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to act as another user";
  TempDir tmp;
  ASSERT_EQ(chmod(tmp.path().c_str(), 0711), 0);
  Result<StateDir> dir = StateDir::Open(tmp / "s");
  ASSERT_TRUE(dir.ok());
  int code = RunInChild(
      [&] {
        bool made = mkdir((tmp / "s/leases").c_str(), 01777) == 0 &&
                    chmod((tmp / "s/leases").c_str(), 01777) == 0;
        int lock = open((tmp / "s/lock").c_str(), O_CREAT | O_WRONLY, 0644);
        return made && lock >= 0 ? 0 : 1;
      },
      kNobody);
  ASSERT_EQ(code, 0);
  for (const char* expected : {"belongs to nobody", "; remove it ('rm"}) {
    ExpectErrorContains(AsStatus(dir->Subdir("leases")), expected);
    ExpectErrorContains(AsStatus(dir->Lock("lock", 1s)), expected);
  }
  ExpectErrorContains(AsStatus(dir->Subdir("leases")), tmp / "s/leases");
  // Root's own part with another mode is repaired; another's is refused.
  ASSERT_EQ(mkdir((tmp / "s/queue").c_str(), 0755), 0);
  EXPECT_TRUE(dir->Subdir("queue").ok());
  EXPECT_EQ(ModeOf(tmp / "s/queue") & 07777, 01777u);
  ASSERT_EQ(chown((tmp / "s/queue").c_str(), kNobody, kNobody), 0);
  ExpectErrorContains(AsStatus(dir->Subdir("queue")), "belongs to nobody");
}

TEST(StateDir, OnlyRootOrTheOwnerCreatesParts) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to act as another user";
  TempDir tmp;
  ASSERT_EQ(mkdir((tmp / "s").c_str(), 01777), 0);
  ASSERT_EQ(chmod((tmp / "s").c_str(), 01777), 0);
  ASSERT_EQ(chmod(tmp.path().c_str(), 0711), 0);
  Result<StateDir> dir = StateDir::Open(tmp / "s");
  ASSERT_TRUE(dir.ok());
  int code = RunInChild(
      [&] {
        Result<StateDir> leases = dir->Subdir("leases");
        Result<LockAttempt> lock = dir->Lock("lock", 1s);
        bool refused = !leases.ok() &&
                       leases.error().message.find("is missing") != std::string::npos &&
                       !lock.ok() && lock.error().message.find("is missing") != std::string::npos;
        return refused ? 0 : 1;
      },
      kNobody);
  EXPECT_EQ(code, 0) << "nobody must not create parts of root's directory";
  EXPECT_FALSE(std::filesystem::exists(tmp / "s/leases"));
  EXPECT_FALSE(std::filesystem::exists(tmp / "s/lock"));
  // A part of the directory's owner (nobody, as in a /tmp/gpupin it
  // created) is trusted: that owner could remove anything there anyway.
  ASSERT_EQ(chown((tmp / "s").c_str(), kNobody, kNobody), 0);
  Result<StateDir> owned = StateDir::Open(tmp / "s");
  ASSERT_TRUE(owned.ok());
  code = RunInChild(
      [&] { return owned->Subdir("leases").ok() && owned->Lock("lock", 1s).ok() ? 0 : 1; },
      kNobody);
  EXPECT_EQ(code, 0);
  EXPECT_TRUE(owned->Subdir("leases").ok()) << "root trusts the owner's part";
  EXPECT_TRUE(owned->shared());
}

}  // namespace
}  // namespace gpupin
