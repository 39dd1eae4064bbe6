#include "sys/change_watch.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "sys/pidfd.h"
#include "sys/thread_cpu_time.h"

namespace gpupin {
namespace {

// Names of the events that mean a record appeared, changed or went away.
// Writers create hidden temp files and rename them into place, so
// IN_MOVED_TO is the "written" event; temp file names are filtered out.
constexpr uint32_t kDirectoryEvents = IN_CREATE | IN_CLOSE_WRITE | IN_DELETE | IN_MOVED_TO |
                                      IN_MOVED_FROM | IN_DELETE_SELF | IN_MOVE_SELF;

// Anyone may create and delete files in the shared directories, or nudge a
// ticket of theirs, as fast as the kernel lets them, and each change
// reported costs the waiter a read of the state, maybe a look at the
// cards: without a bound, a churning user keeps every waiter busy, the more
// so the more records there are to read. So after reporting a change or a
// nudge, a watch goes quiet for kIdlePerBusy times the CPU its caller then
// spent on it, kChangeCoalescing at least and kMostQuiet at most: a
// directory watch takes the directory's changes together meanwhile, a file
// watch ignores nudges (its file's removal or move, which changes the
// waiter's place, is never held back; a nudge is only a hint to look early,
// and the waiter looks when the ticket ahead goes anyway). Process exits and
// interrupts always wake at once.
constexpr std::chrono::milliseconds kChangeCoalescing{20};
constexpr std::chrono::milliseconds kMostQuiet{2000};
constexpr int kIdlePerBusy = 4;

constexpr uint32_t kFileEvents = IN_DELETE_SELF | IN_MOVE_SELF | IN_ATTRIB | IN_DONT_FOLLOW;
constexpr uint32_t kNudgeEvents = IN_CLOSE_WRITE;

// How many processes a watch holds a pidfd for. Every live lease holder is
// one, and anyone may write a thousand leases held by live processes of
// their own: descriptors without end would leave the waiter none to list
// the queue with. At most a quarter of the descriptors it may open, and 256;
// the rest are polled for.
size_t MaxWatchedProcesses() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return 256;
  return std::min<size_t>(256, limit.rlim_cur / 4);
}

// What the queued inotify events said.
struct Drained {
  bool change = false;  // a visible name appeared, changed or went away
  bool nudge = false;   // the watched file was opened for writing and closed
  bool attrib = false;  // the watched file's attributes changed: maybe unlinked
};

// Reads all queued inotify events. `file_watch` is the watch descriptor of
// the watched file, or -1.
Drained DrainInotify(int fd, int file_watch) {
  Drained drained;
  alignas(inotify_event) char buffer[16 * 1024];
  while (true) {
    ssize_t n = read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    for (ssize_t at = 0; at < n;) {
      const auto* event = reinterpret_cast<const inotify_event*>(buffer + at);
      bool hidden = event->len > 0 && event->name[0] == '.';
      bool on_file = file_watch >= 0 && event->wd == file_watch;
      bool lost = (event->mask & IN_Q_OVERFLOW) != 0;  // assume the worst
      if (!lost && on_file && event->mask == IN_CLOSE_WRITE) {
        drained.nudge = true;
      } else if (!lost && on_file && event->mask == IN_ATTRIB) {
        drained.attrib = true;
      } else if (lost || !hidden) {
        drained.change = true;
      }
      at += static_cast<ssize_t>(sizeof(inotify_event) + event->len);
    }
  }
  return drained;
}

}  // namespace

ChangeWatch ChangeWatch::ForDirectories(const std::vector<const StateDir*>& dirs) {
  ChangeWatch watch;
  watch.inotify_.Reset(inotify_init1(IN_NONBLOCK | IN_CLOEXEC));
  for (const StateDir* dir : dirs) {
    if (!watch.inotify_.valid()) break;
    // Through our own descriptor, so the watched directory is the one we
    // opened and checked, even if its path was replaced since.
    std::string self = fmt::format("/proc/self/fd/{}", dir->fd());
    if (inotify_add_watch(watch.inotify_.get(), self.c_str(), kDirectoryEvents | IN_ONLYDIR) < 0) {
      watch.inotify_.Reset();
    }
  }
  return watch;
}

ChangeWatch ChangeWatch::ForFile(const StateDir& dir, const std::string& name,
                                 std::optional<int64_t> change_time_ns) {
  ChangeWatch watch;
  watch.inotify_.Reset(inotify_init1(IN_NONBLOCK | IN_CLOEXEC));
  watch.WatchFile(dir, name, change_time_ns);
  return watch;
}

void ChangeWatch::WatchFile(const StateDir& dir, const std::string& name,
                            std::optional<int64_t> change_time_ns) {
  if (!inotify_.valid()) return;
  if (file_watch_ >= 0) {
    inotify_rm_watch(inotify_.get(), file_watch_);
    file_watch_ = -1;
    (void)DrainInotify(inotify_.get(), -1);  // the old file's events, IN_IGNORED
  }
  file_dir_fd_ = dir.fd();
  file_name_ = name;
  nudges_muted_ = false;
  std::string path = fmt::format("/proc/self/fd/{}/{}", dir.fd(), name);
  file_watch_ = inotify_add_watch(inotify_.get(), path.c_str(), kFileEvents | kNudgeEvents);
  struct stat st {};
  if (file_watch_ >= 0 &&
      fstatat(file_dir_fd_, file_name_.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
    file_seen_ = FileSeen{st.st_ino, change_time_ns.value_or(ChangeTimeNsOf(st))};
    // Touched, or removed and made again, since the caller read it.
    if (ChangeTimeNsOf(st) != file_seen_.change_time_ns) changed_already_ = true;
  } else if (file_watch_ >= 0 || errno == ENOENT) {
    changed_already_ = true;
  } else {
    inotify_.Reset();
  }
}

bool ChangeWatch::MuteNudges(bool muted) {
  if (muted == nudges_muted_) return true;
  std::string path = fmt::format("/proc/self/fd/{}/{}", file_dir_fd_, file_name_);
  const int watch =
      inotify_add_watch(inotify_.get(), path.c_str(), kFileEvents | (muted ? 0 : kNudgeEvents));
  // Another file under the name: ours went, which its own watch reports.
  if (watch >= 0 && watch != file_watch_) inotify_rm_watch(inotify_.get(), watch);
  if (watch != file_watch_) return false;
  nudges_muted_ = muted;
  return true;
}

bool ChangeWatch::FileMoved() const {
  struct stat st {};
  return fstatat(file_dir_fd_, file_name_.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 ||
         st.st_nlink == 0 || FileSeen{st.st_ino, ChangeTimeNsOf(st)} != file_seen_;
}

void ChangeWatch::ForgetChangesSoFar() {
  if (inotify_.valid()) (void)DrainInotify(inotify_.get(), file_watch_);
}

void ChangeWatch::WatchProcesses(const std::vector<ProcessIdentity>& processes,
                                 const std::function<std::optional<uint64_t>(int pid)>& start_time,
                                 const std::function<bool(int pid)>& hidden) {
  std::map<std::pair<int, uint64_t>, UniqueFd> kept;
  unwatchable_processes_ = 0;
  const size_t most = MaxWatchedProcesses();
  for (const ProcessIdentity& process : processes) {
    std::pair<int, uint64_t> key{process.pid, process.start_time_ticks};
    if (kept.contains(key)) continue;
    if (kept.size() >= most) {
      ++unwatchable_processes_;
      continue;
    }
    if (auto it = pidfds_.find(key); it != pidfds_.end()) {
      kept.emplace(key, std::move(it->second));
      continue;
    }
    UniqueFd fd(PidfdOpen(process.pid));
    if (!fd.valid()) {
      if (errno == ESRCH) {
        exited_already_ = true;
      } else {
        ++unwatchable_processes_;  // ENOSYS, EMFILE, EPERM...: poll for it
      }
      continue;
    }
    // Checked after opening: the pidfd now pins this very process, so a
    // matching start time means we watch the one we were asked to. One
    // that cannot be read is watched as it is counted: alive
    // (RecordProcessAlive), else its exit would be reported at every Wait.
    const std::optional<uint64_t> start = start_time(process.pid);
    if (!start && hidden && hidden(process.pid)) {
      kept.emplace(key, std::move(fd));
      continue;
    }
    if (start != process.start_time_ticks) {
      exited_already_ = true;
      continue;
    }
    kept.emplace(key, std::move(fd));
  }
  pidfds_ = std::move(kept);
}

WakeReason ChangeWatch::Wait(std::optional<std::chrono::steady_clock::time_point> deadline,
                             std::chrono::milliseconds poll_interval, bool poll_anyway) {
  // Past the deadline nothing else counts: a caller woken again and again
  // still ends on time.
  if (deadline && std::chrono::steady_clock::now() >= *deadline) return WakeReason::kDeadline;
  if (exited_already_) {
    exited_already_ = false;
    return WakeReason::kProcessExited;
  }
  if (changed_already_) {
    changed_already_ = false;
    return WakeReason::kStateChanged;
  }
  std::vector<pollfd> fds;
  if (inotify_.valid()) fds.push_back({inotify_.get(), POLLIN, 0});
  for (const auto& [key, fd] : pidfds_) fds.push_back({fd.get(), POLLIN, 0});
  // Last, so that a readable one is seen whatever else is ready.
  if (interrupt_fd_ >= 0) fds.push_back({interrupt_fd_, POLLIN, 0});

  using Clock = std::chrono::steady_clock;
  const bool polling = needs_poll() || poll_anyway;
  const Clock::time_point poll_end = Clock::now() + poll_interval;
  const bool file_mode = file_watch_ >= 0;
  if (report_) {
    // Counted from when the handling would have ended had it not blocked
    // (on the lock, or on another watch): blocking is idle time too.
    const auto busy = ThreadCpuTime() - report_->cpu;
    quiet_until_ = std::max(
        Clock::now(),
        report_->at + busy +
            std::clamp<Clock::duration>(kIdlePerBusy * busy, kChangeCoalescing, kMostQuiet));
    report_.reset();
  }
  auto report = [&](WakeReason reason) {
    report_ = Report{Clock::now(), ThreadCpuTime()};
    return reason;
  };
  while (true) {
    Clock::time_point now = Clock::now();
    const bool quiet = inotify_.valid() && now < quiet_until_;
    if (deadline && now >= *deadline) return WakeReason::kDeadline;
    if (polling && now >= poll_end) {
      // A touch of the file ahead between the caller's read and the watch
      // moved it in the queue unseen: checked at every poll.
      if (file_mode && FileMoved()) return WakeReason::kStateChanged;
      return WakeReason::kPoll;
    }
    std::optional<Clock::time_point> until = deadline;
    if (polling && (!until || poll_end < *until)) until = poll_end;
    if (quiet && (!until || quiet_until_ < *until)) until = quiet_until_;
    // A quiet directory watch leaves its changes in the inotify queue: out
    // of poll(), not just masked, or each event would still wake it. A
    // quiet file watch asks the kernel for no nudges, for the same reason.
    if (!file_mode && inotify_.valid()) fds[0].fd = quiet ? -1 : inotify_.get();
    if (file_mode && !MuteNudges(quiet)) return report(WakeReason::kStateChanged);
    int timeout_ms = -1;
    if (until) {
      // Rounded up, so a wake-up is never early and never a busy loop.
      auto left = std::chrono::ceil<std::chrono::milliseconds>(*until - now).count();
      timeout_ms = static_cast<int>(std::min<int64_t>(left, 1 << 30));
    }
    int ready = poll(fds.data(), fds.size(), timeout_ms);
    if (ready < 0 && errno != EINTR) return polling ? WakeReason::kPoll : WakeReason::kDeadline;
    if (ready <= 0) continue;

    if (interrupt_fd_ >= 0 && fds.back().revents != 0) return WakeReason::kInterrupted;
    bool process_exited = false;
    for (const pollfd& fd : fds) {
      if (fd.revents == 0 || fd.fd == inotify_.get() || fd.fd == interrupt_fd_) continue;
      process_exited = true;
      // Reported once: the caller re-reads the state and watches anew.
      std::erase_if(pidfds_, [&](const auto& entry) { return entry.second.get() == fd.fd; });
    }
    Drained drained = inotify_.valid() && !fds.empty() && fds[0].revents != 0
                          ? DrainInotify(inotify_.get(), file_watch_)
                          : Drained{};
    if (process_exited) return WakeReason::kProcessExited;
    if (drained.change) return report(WakeReason::kStateChanged);
    // Unlinking a file reports IN_ATTRIB (its link count) at once, and
    // IN_DELETE_SELF only once nobody has it open. New times (a touch or a
    // chmod by its owner) move a ticket in the queue, which is ordered by
    // the files' change times: the waiter's place may have changed too.
    if (drained.attrib && FileMoved()) return report(WakeReason::kStateChanged);
    // Nudges queued before the quiet spell began are dropped with it.
    if (drained.nudge && !quiet) return report(WakeReason::kNudged);
    // Only hidden names changed (temp files): nothing to report, and a
    // churn of them is taken together as well.
    if (!file_mode) quiet_until_ = Clock::now() + kChangeCoalescing;
  }
}

}  // namespace gpupin
