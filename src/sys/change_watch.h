// Waking a waiter when something it waits for may have changed
// (waiters wake within milliseconds when a lease ends): inotify on the
// state directories, a pidfd for every watched process (lease holders,
// foreign GPU processes), and a timeout for what cannot be watched. One
// poll() over all of them.
//
// No wake-up is lost if the waiter creates the ChangeWatch before its first
// read of the state, then loops: read state (transaction) ->
// WatchProcesses(holders seen) -> Wait. Directory changes queue up in the
// inotify descriptor between reads, and a process that exits before it is
// watched is reported at once by the next Wait.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/lease.h"
#include "sys/state_dir.h"
#include "sys/unique_fd.h"

namespace gpupin {

enum class WakeReason {
  kStateChanged,   // a lease or ticket file appeared, changed or went away
  kNudged,         // its owner notified a watched file's watchers: look now
  kProcessExited,  // a watched process ended (or had already ended)
  kPoll,           // the poll interval passed while something was unwatchable
  kDeadline,       // the caller's deadline passed
  kInterrupted,    // the interrupt descriptor became readable (InterruptGuard)
};

class ChangeWatch {
 public:
  // Watches the given directories. Never fails: without inotify (limits,
  // old kernels) the watch polls instead, and says so in needs_poll().
  static ChangeWatch ForDirectories(const std::vector<const StateDir*>& dirs);

  // Watches one file in `dir` until it is removed or replaced: a waiter
  // behind others in the queue needs to wake only when the ticket just ahead
  // of it goes, not at every change of the queue. Opening the file for
  // writing and closing it (LeaseStore::Nudge) wakes it too, as kNudged; a
  // change of its attributes alone does not. A file already gone wakes
  // the first Wait at once; without inotify the watch polls.
  // `change_time_ns`: the file's change time when the caller read it (its
  // place in the queue); a file that no longer has it wakes the first Wait.
  static ChangeWatch ForFile(const StateDir& dir, const std::string& name,
                             std::optional<int64_t> change_time_ns = std::nullopt);
  // Moves a ForFile watch to another file. Cheaper than a new watch: closing
  // an inotify descriptor waits for an RCU grace period (2 to 20 ms).
  void WatchFile(const StateDir& dir, const std::string& name,
                 std::optional<int64_t> change_time_ns = std::nullopt);

  // Forgets the directory changes queued so far. Call it holding the state
  // lock, after reading the state: every change queued by then is in what
  // was read, or one's own (removing dead records, taking a ticket), so no
  // wake-up is lost and a waiter is not woken by its own writes.
  void ForgetChangesSoFar();

  // Replaces the set of watched processes. A process whose PID is taken by
  // another process (start time differs) counts as exited. `start_time`
  // checks identities; pass ProcFs-backed facts. A process `hidden` says
  // exists though its start time cannot be read (/proc's hidepid) is
  // watched by its pidfd alone. Beyond 256 processes (or a quarter of
  // RLIMIT_NOFILE), the rest are polled for.
  void WatchProcesses(const std::vector<ProcessIdentity>& processes,
                      const std::function<std::optional<uint64_t>(int pid)>& start_time,
                      const std::function<bool(int pid)>& hidden = {});

  // Wait also ends, as kInterrupted, once `fd` is readable (and at every
  // Wait after that): InterruptGuard::wake_fd(). -1 watches nothing.
  void WakeOnInterrupt(int fd) { interrupt_fd_ = fd; }

  // Some change cannot be seen by an event (no inotify, no pidfd for a
  // process: another PID namespace, an old kernel): Wait falls back to the
  // poll interval.
  bool needs_poll() const { return !inotify_.valid() || unwatchable_processes_ > 0; }

  // Blocks until an event, the deadline, or (when needs_poll() or
  // `poll_anyway`, e.g. GPU memory without an owner) the poll interval.
  // After a change or a nudge was reported, the watch goes quiet for four
  // times the CPU its caller spent on it (20 ms to 2 s): a directory watch
  // then takes changes together, a file watch ignores nudges, so that a user
  // churning files in the state directory cannot keep a waiter busy. The
  // watched file's removal, a change of its times (its place in the queue),
  // and process exits are never held back.
  WakeReason Wait(std::optional<std::chrono::steady_clock::time_point> deadline,
                  std::chrono::milliseconds poll_interval, bool poll_anyway = false);

 private:
  UniqueFd inotify_;
  std::map<std::pair<int, uint64_t>, UniqueFd> pidfds_;  // by (pid, start time)
  int unwatchable_processes_ = 0;
  int interrupt_fd_ = -1;
  bool exited_already_ = false;
  bool changed_already_ = false;
  // When Wait last reported a change or a nudge, and our thread's CPU time
  // then, until the next Wait; and until when the watch stays quiet after.
  struct Report {
    std::chrono::steady_clock::time_point at;
    std::chrono::nanoseconds cpu;
  };
  std::optional<Report> report_;
  std::chrono::steady_clock::time_point quiet_until_{};
  bool nudges_muted_ = false;
  // Watches the file for nudges again, or no longer; false when the file
  // under the name is no longer the one watched.
  bool MuteNudges(bool muted);
  // The watched file as the caller read it: its inode (as WatchFile found
  // it) and change time.
  struct FileSeen {
    ino_t inode = 0;
    int64_t change_time_ns = 0;
    friend bool operator==(const FileSeen&, const FileSeen&) = default;
  };
  FileSeen file_seen_;
  // Whether the watched file is gone, or no longer as WatchFile found it.
  bool FileMoved() const;
  int file_watch_ = -1;
  int file_dir_fd_ = -1;  // the watched file's directory (its StateDir outlives the watch)
  std::string file_name_;
};

}  // namespace gpupin
