// Leases and the wait queue in the shared state directory
// (doc/state-dir.md). Every read and write happens inside one transaction
// under the directory's exclusive lock, so choosing GPUs and recording the
// lease are one atomic step across all users and commands.
//
// Nothing read is trusted: a file that is a symlink, not a regular file,
// larger than kMaxRecordBytes, beyond its owner's kMaxRecordsPerUser,
// unparsable, or owned by another uid than the one it claims is skipped
// with a diagnostic; liveness is evaluated on every read, never stored.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/lease.h"
#include "core/queue_ticket.h"
#include "sys/state_dir.h"

namespace gpupin {

// Larger than any lease or ticket gpupin writes (it refuses to write one
// larger): a larger file is skipped unread.
inline constexpr size_t kMaxRecordBytes = size_t{16} * 1024;
// The records of one user (file owner) a reader goes through in each of
// leases/ and queue/, the oldest first; gpupin refuses to write more for
// one user, so only records it did not write are ever left unread. Bounds
// what one user's junk costs everyone else's transactions (doc/security.md).
inline constexpr size_t kMaxRecordsPerUser = 1024;

// Receives one line per skipped file ("skipped leases/x.json: is a symbolic
// link (not followed)"), for the caller to print under -v.
using DiagnosticSink = std::function<void(const std::string&)>;

// Whether a live process is stopped (ProcessStopped).
using StoppedCheck = std::function<bool(int pid)>;

// Whether the ticket's holder or its waiter is stopped: either way nobody
// acts for it until it is continued.
bool TicketStopped(const QueueTicket& ticket, const StoppedCheck& stopped);

// "<pid>-<start time>-<random>": unique across processes, PID reuse and
// repeated calls by one process.
std::string NewRecordId(const ProcessIdentity& holder);

// A ticket's file name in queue/: "<seq>-<id>.json" (doc/state-dir.md).
std::string TicketFileName(const QueueTicket& ticket);

class LeaseTransaction;
struct RecordListing;
struct TicketFile;
struct RecordCaches;

class LeaseStore {
 public:
  // Opens (creating) leases/ and queue/ under `root`.
  static Result<LeaseStore> Open(StateDir root, DiagnosticSink diagnostics = {});

  // Runs `body` holding the lock. Keep it to reading, deciding and writing:
  // every gpupin process on the machine waits while it runs. Fails when
  // another process holds the lock for all of `lock_timeout`, naming it.
  Status Transact(const std::function<Status(LeaseTransaction&)>& body,
                  std::chrono::milliseconds lock_timeout = std::chrono::seconds(10)) const;
  // As Transact, but for a waiter, who waits on: a lock held by another
  // process for all of `lock_timeout` is no error but false, `body` not run.
  Result<bool> TryTransact(const std::function<Status(LeaseTransaction&)>& body,
                           std::chrono::milliseconds lock_timeout) const;
  // Who holds the state lock now, as "pid 4711 (nobody: flock lock sleep
  // 40)" (/proc/locks); "an unknown process" when /proc does not say.
  std::string LockHolder() const;

  // When the state directory is shared (mode 1777) but not root's: a line
  // saying who can remove everyone's leases in it and how to get a safe
  // one. nullopt otherwise.
  std::optional<std::string> OwnerWarning() const;

  // Every valid lease file, live or not, in a transaction of its own: for
  // commands that only show them (ps, completion).
  Result<std::vector<Lease>> ReadLeases() const;

  // Wakes the waiter just behind `ticket` (ours) without changing the queue:
  // its watch on our ticket reports the touch as kNudged. A head that may
  // be about to take a card lets the next in line ask NVML at the same time,
  // so cards freed together are handed on without one snapshot after another.
  void Nudge(const QueueTicket& ticket) const;

  // Without the lock, a hint only: whether the queue directory holds any
  // entry. A newcomer who sees none expects to choose at once and asks NVML
  // before taking the lock; one who sees some expects to queue.
  bool QueueMayHaveTickets() const;

  // The turn of a newcomer that found the queue empty to look at the cards
  // and decide, one such newcomer at a time (a lock apart from the state
  // lock, which it does not hold up): a burst of submissions onto free
  // cards then sees the first ticket as soon as one of them queues, and the
  // rest queue behind it without opening NVML. nullopt when the turn did
  // not come within `timeout`, or its file cannot be used (said to the
  // diagnostics): the newcomer then looks without it.
  std::optional<FileLock> TakeArrivalTurn(std::chrono::milliseconds timeout) const;

  // For ChangeWatch: changes to these directories are what waiters wait for.
  const StateDir& leases_dir() const { return leases_; }
  const StateDir& queue_dir() const { return queue_; }

 private:
  LeaseStore(StateDir root, StateDir leases, StateDir queue, DiagnosticSink diagnostics);

  StateDir root_;
  StateDir leases_;
  StateDir queue_;
  DiagnosticSink diagnostics_;
  // What this process read of each record file, for its later transactions
  // (sys/record_cache.h).
  std::shared_ptr<RecordCaches> caches_;
};

// Valid only inside LeaseStore::Transact's body.
class LeaseTransaction {
 public:
  // Every valid lease file, live or not, for `gpupin leases` and `doctor`.
  std::vector<Lease> ReadLeases();
  // The leases that still hold (EvaluateLease). Dead ones are removed where
  // this user may remove them (its own; anyone's as root or as the
  // directory's owner) and ignored otherwise.
  std::vector<Lease> LiveLeases(const LivenessFacts& facts);
  // What a reservation whose job has started stands for now: the lease
  // handed to the job (HandedToJob), which ends when the job does rather
  // than at the TTL. Written back when the reservation is live (`state`, as
  // the caller evaluated it against `facts`) and the file is this user's
  // own (only its owner can rewrite it), so that the hand-over outlives the
  // look that saw the job. nullopt when `lease` is no such reservation.
  std::optional<Lease> HandOverToJob(const Lease& lease, LeaseState state,
                                     const LivenessFacts& facts);
  // Records a new lease, owned by this user. Fails when the id is not a
  // valid record id or a lease with it exists.
  Status AddLease(const Lease& lease);
  // Rewrites an existing lease of this user (e.g. to attach a container id).
  Status UpdateLease(const Lease& lease);
  // Removes a lease file; fails with a message when it is another user's.
  Status RemoveLease(const std::string& id);

  // Every valid ticket, earliest first.
  std::vector<QueueTicket> ReadTickets();
  // The tickets whose holders live, earliest first; dead ones are removed
  // where allowed, as for leases.
  std::vector<QueueTicket> LiveTickets(const LivenessFacts& facts);
  // The queue as a waiter sees it, in order: the live tickets (dead ones
  // are removed where allowed, as for leases) except those whose holder or
  // waiter is `stopped` (a job suspended with Ctrl-Z while it waited): passed
  // over, not removed, it would hold up everyone behind it, and it takes its
  // place again when continued. `mine` is always among them; fails when it
  // is no longer in the queue. Tickets of `mine`'s user behind it are left
  // out, unread: they never go before it.
  Result<std::vector<QueueTicket>> WaitingTickets(const std::optional<QueueTicket>& mine,
                                                  const LivenessFacts& facts,
                                                  const StoppedCheck& stopped = {});
  // Joins the end of the queue: assigns `ticket.seq` (after every ticket
  // present) and, when empty, `ticket.id`; returns the ticket as recorded.
  Result<QueueTicket> TakeTicket(QueueTicket ticket);
  Status RemoveTicket(const QueueTicket& ticket);

 private:
  friend class LeaseStore;
  std::optional<QueueTicket> ReadTicket(const TicketFile& file);
  // A ticket whose holder and waiter (when recorded) both live and run as
  // its user (RecordProcessAlive); a dead one is removed where allowed.
  std::optional<QueueTicket> ReadLiveTicket(const TicketFile& file, const LivenessFacts& facts);
  // A live ticket whose holder and waiter are not stopped.
  std::optional<QueueTicket> ReadWaitingTicket(const TicketFile& file, const LivenessFacts& facts,
                                               const StoppedCheck& stopped);
  LeaseTransaction(const StateDir& leases, const StateDir& queue, const DiagnosticSink& sink,
                   RecordCaches& caches)
      : leases_(leases), queue_(queue), diagnostics_(sink), caches_(caches) {}
  // `dir`'s records; none when it cannot be listed, which fails the
  // transaction (unlisted_) and every write in it, so that nothing is
  // decided on a partial view.
  RecordListing List(const StateDir& dir);
  std::vector<TicketFile> ListTickets();

  const StateDir& leases_;
  // How many lease records of ours this transaction's listing found: nobody
  // else can add one meanwhile (a file is ours only if we create it, and our
  // other gpupin processes wait for the lock), so AddLease after LiveLeases
  // need not list thousands of foreign files again. Removals are not
  // subtracted: the count errs towards the limit, never past it.
  std::optional<size_t> own_leases_;
  const StateDir& queue_;
  const DiagnosticSink& diagnostics_;
  RecordCaches& caches_;
  std::optional<Error> unlisted_;  // the first listing that failed
};

}  // namespace gpupin
