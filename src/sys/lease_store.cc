#include "sys/lease_store.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <map>
#include <set>
#include <tuple>

#include "core/json_fields.h"
#include "core/lease_json.h"
#include "core/printable.h"
#include "sys/procfs.h"
#include "sys/record_cache.h"

namespace gpupin {
namespace {

constexpr std::string_view kSuffix = ".json";
constexpr const char* kLockName = "lock";
constexpr const char* kArrivalLockName = "arrivals";

std::string FileName(const std::string& id) { return id + std::string(kSuffix); }

// Reads one record file, or takes what an earlier read of the same version
// made of it from `cache`. A file is trusted only as far as its owner: its
// claimed uid must be the uid that owns the file, so no user can create a
// lease or ticket in another's name. Root is held to the same rule (a root
// process records uid 0), which keeps the rule simple and the owner column
// honest. A file must also be named for the record it holds, or it could
// shadow another.
template <class Record>
std::optional<Record> ReadRecord(const StateDir& dir, const std::string& name,
                                 const FileInfo& listed, Result<Record> (*parse)(std::string_view),
                                 std::string (*file_name)(const Record&),
                                 const DiagnosticSink& diagnostics, RecordCache<Record>& cache) {
  auto skip = [&](const std::string& why) -> std::optional<Record> {
    if (diagnostics)
      diagnostics(fmt::format("skipped {}/{}: {}", dir.path(), Printable(name), why));
    return std::nullopt;
  };
  if (const typename RecordCache<Record>::Entry* known = cache.Find(name, listed)) {
    if (!known->skipped.empty()) return skip(known->skipped);
    if (known->record) return known->record;  // else too large to keep: read again
  }
  Result<FileRead> file = dir.ReadFile(name, kMaxRecordBytes);
  if (!file) return skip(file.error().message);
  auto judge = [&]() -> Result<Record> {
    Result<Record> record = parse(file->text);
    if (!record) return record.error();
    if (record->uid != file->info.owner_uid) {
      return MakeError(ExitCode::kError,
                       fmt::format("claims uid {} but is owned by uid {} (forged)", record->uid,
                                   file->info.owner_uid));
    }
    if (file_name(*record) != name) {
      return MakeError(ExitCode::kError,
                       fmt::format("holds record '{}', not the one its name says", record->id));
    }
    // The name written in the file is the writer's word; the owner's uid is
    // the kernel's, so a lease can name no one but the user who holds it.
    record->user = UserName(record->uid);
    return record;
  };
  Result<Record> record = judge();
  if (!record) {
    cache.Keep(name, {file->info, std::nullopt, record.error().message});
    return skip(record.error().message);
  }
  cache.Keep(name, {file->info, *record, ""});
  return std::move(*record);
}

}  // namespace

// A record file as the listing and one lstat show it, unread.
struct ListedRecord {
  std::string name;
  FileInfo info;
};

// A directory's records as a reader goes through them, and how many of them
// are this user's (what the limit on a user's records counts).
struct RecordListing {
  std::vector<ListedRecord> records;
  size_t own = 0;
};

namespace {

// The record files of a directory, oldest first, at most kMaxRecordsPerUser
// of each owner: one user's thousands of files (gpupin writes no more than
// that many for anyone) cost every reader only the listing and an lstat
// each. Names that cannot be records are skipped with a diagnostic. A
// directory that cannot be listed is an error, never an empty one: a card
// would look free, a queue empty.
Result<RecordListing> ListRecords(const StateDir& dir, const DiagnosticSink& diagnostics) {
  std::vector<ListedRecord> records;
  Result<std::vector<std::string>> names = dir.List();
  if (!names) return names.error();
  for (std::string& name : *names) {
    if (!name.ends_with(kSuffix)) {
      if (diagnostics) {
        diagnostics(
            fmt::format("skipped {}/{}: not a record file name", dir.path(), Printable(name)));
      }
      continue;
    }
    Result<FileInfo> info = dir.Info(name);
    if (info) records.push_back({std::move(name), *info});  // else gone since the listing
  }
  std::sort(records.begin(), records.end(), [](const ListedRecord& a, const ListedRecord& b) {
    return std::tie(a.info.change_time_ns, a.name) < std::tie(b.info.change_time_ns, b.name);
  });
  std::map<uint32_t, size_t> per_owner;
  std::vector<ListedRecord> kept;
  for (ListedRecord& record : records) {
    size_t& count = per_owner[record.info.owner_uid];
    if (++count <= kMaxRecordsPerUser) {
      kept.push_back(std::move(record));
    } else if (count == kMaxRecordsPerUser + 1 && diagnostics) {
      diagnostics(
          fmt::format("skipped {}: the records of uid {} beyond the {} gpupin writes for "
                      "one user",
                      dir.path(), record.info.owner_uid, kMaxRecordsPerUser));
    }
  }
  return RecordListing{std::move(kept), std::min(per_owner[geteuid()], kMaxRecordsPerUser)};
}

// Writes a record of ours, refusing one that readers would skip: too large,
// or beyond the number of records they read of one user.
Status WriteRecord(const StateDir& dir, const std::string& name, const std::string& text,
                   size_t own_records, const char* what) {
  if (text.size() > kMaxRecordBytes) {
    return MakeError(ExitCode::kError, fmt::format("the {} would be {} bytes, more than the {} "
                                                   "gpupin reads",
                                                   what, text.size(), kMaxRecordBytes));
  }
  if (own_records >= kMaxRecordsPerUser) {
    return MakeError(ExitCode::kError,
                     fmt::format("you have {} {}s in {} already, the most gpupin keeps for one "
                                 "user; end some (gpupin leases lists them)",
                                 own_records, what, dir.path()));
  }
  return dir.WriteFileAtomic(name, text);
}

std::string LeaseFileName(const Lease& lease) { return FileName(lease.id); }

}  // namespace

struct RecordCaches {
  RecordCache<Lease> leases;
  RecordCache<QueueTicket> tickets;
};

// A ticket's place is known from its file, not its content: first
// the file's change time, which the kernel sets when the ticket is put in
// place and no user can set back, then the `seq` of its name
// ("<seq>-<id>.json") among tickets of one clock tick. Any user can write
// a ticket numbered 0; ordered by number alone, it would jump the queue.
struct TicketFile {
  FileInfo info;  // as listed
  uint64_t seq = 0;
  std::string id;
  std::string name;
};

namespace {

std::optional<TicketFile> ParseTicketFileName(const std::string& name) {
  size_t dash = name.find('-');
  if (!name.ends_with(kSuffix) || dash == 0 || dash == std::string::npos || dash > 16)
    return std::nullopt;
  TicketFile file;
  auto [end, error] = std::from_chars(name.data(), name.data() + dash, file.seq);
  if (error != std::errc() || end != name.data() + dash || file.seq > kMaxTicketSeq)
    return std::nullopt;
  file.id = name.substr(dash + 1, name.size() - dash - 1 - kSuffix.size());
  if (!IsValidRecordId(file.id)) return std::nullopt;
  file.name = name;
  return file;
}

// The queue in order, from the listing and the files' change times.
std::vector<TicketFile> TicketFiles(const std::vector<ListedRecord>& records, const StateDir& queue,
                                    const DiagnosticSink& diagnostics) {
  std::vector<TicketFile> files;
  for (const ListedRecord& record : records) {
    if (std::optional<TicketFile> file = ParseTicketFileName(record.name)) {
      file->info = record.info;
      files.push_back(std::move(*file));
    } else if (diagnostics) {
      diagnostics(fmt::format("skipped {}/{}: not a ticket file name", queue.path(),
                              Printable(record.name)));
    }
  }
  std::sort(files.begin(), files.end(), [](const TicketFile& a, const TicketFile& b) {
    return std::tie(a.info.change_time_ns, a.seq, a.id) <
           std::tie(b.info.change_time_ns, b.seq, b.id);
  });
  return files;
}

// Dead records of other users usually cannot be removed (sticky directory);
// readers ignore them, so failing here is fine.
void RemoveIfAllowed(const StateDir& dir, const std::string& name) { (void)dir.Remove(name); }

// What `cache` made of files no longer in the directory's `listed` records.
template <class Record>
void ForgetUnlisted(RecordCache<Record>& cache, const std::vector<ListedRecord>& listed) {
  std::set<std::string> names;
  for (const ListedRecord& record : listed) names.insert(record.name);
  cache.KeepOnly(names);
}

// The gpupin that waits for `ticket` (its holder, in tickets that name none).
const ProcessIdentity& WaiterOf(const QueueTicket& ticket) {
  return ticket.waiter ? *ticket.waiter : ticket.holder;
}

// Which live tickets hold a place: one per waiting gpupin, the earliest
// that names it as its waiter. A gpupin waits for one ticket at a time;
// anyone can write copies of a ticket naming a gpupin of their own, and
// each would otherwise hold a place of its own.
class OnePlacePerWaiter {
 public:
  // Whether `ticket`, the next live one in queue order, is the first to
  // name its waiter.
  bool First(const QueueTicket& ticket) {
    const ProcessIdentity& waiter = WaiterOf(ticket);
    return seen_.insert({waiter.pid, waiter.start_time_ticks}).second;
  }

 private:
  std::set<std::pair<int, uint64_t>> seen_;
};

// Whether the process is gone for good (no process has its pid now), as
// opposed to unreadable in /proc for a moment.
bool NoSuchProcess(int pid) { return kill(pid, 0) != 0 && errno == ESRCH; }

}  // namespace

std::string NewRecordId(const ProcessIdentity& holder) {
  return fmt::format("{}-{}-{}", holder.pid, holder.start_time_ticks, RandomHex(4));
}

std::string TicketFileName(const QueueTicket& ticket) {
  return fmt::format("{}-{}{}", ticket.seq, ticket.id, kSuffix);
}

LeaseStore::LeaseStore(StateDir root, StateDir leases, StateDir queue, DiagnosticSink diagnostics)
    : root_(std::move(root)),
      leases_(std::move(leases)),
      queue_(std::move(queue)),
      diagnostics_(std::move(diagnostics)),
      caches_(std::make_shared<RecordCaches>()) {}

Result<LeaseStore> LeaseStore::Open(StateDir root, DiagnosticSink diagnostics) {
  Result<StateDir> leases = root.Subdir("leases");
  if (!leases) return leases.error();
  Result<StateDir> queue = root.Subdir("queue");
  if (!queue) return queue.error();
  // The newcomers' turn is made with the other parts, by whoever may make
  // them (any command of root's), so that other users find it: they may
  // only open it, and their attempt here fails harmlessly. Taken for a
  // moment to be made, as `lock` is.
  struct stat turn {};
  if (fstatat(root.fd(), kArrivalLockName, &turn, AT_SYMLINK_NOFOLLOW) != 0 && errno == ENOENT)
    (void)root.Lock(kArrivalLockName, std::chrono::milliseconds(1));
  return LeaseStore(std::move(root), std::move(*leases), std::move(*queue), std::move(diagnostics));
}

Result<std::vector<Lease>> LeaseStore::ReadLeases() const {
  std::vector<Lease> leases;
  Status read = Transact([&](LeaseTransaction& txn) -> Status {
    leases = txn.ReadLeases();
    return Ok{};
  });
  if (!read.ok()) return read.error();
  return leases;
}

void LeaseStore::Nudge(const QueueTicket& ticket) const {
  // Not a touch: that would move the ticket's change time, its place.
  (void)queue_.NotifyWatchers(TicketFileName(ticket));  // gone already: nobody to nudge
}

bool LeaseStore::QueueMayHaveTickets() const {
  Result<bool> names = queue_.HasNames();
  return !names.ok() || *names;
}

std::optional<FileLock> LeaseStore::TakeArrivalTurn(std::chrono::milliseconds timeout) const {
  Result<LockAttempt> attempt = root_.Lock(kArrivalLockName, timeout);
  if (!attempt.ok()) {
    if (diagnostics_)
      diagnostics_("looking without waiting for the turn: " + attempt.error().message);
    return std::nullopt;
  }
  if (!attempt->lock && diagnostics_) {
    diagnostics_(fmt::format("looking without waiting for the turn: {}/{} was held for {} ms",
                             root_.path(), kArrivalLockName, timeout.count()));
  }
  return std::move(attempt->lock);
}

Result<bool> LeaseStore::TryTransact(const std::function<Status(LeaseTransaction&)>& body,
                                     std::chrono::milliseconds lock_timeout) const {
  Result<LockAttempt> attempt = root_.Lock(kLockName, lock_timeout);
  if (!attempt) return attempt.error();
  if (!attempt->lock) return false;
  LeaseTransaction transaction(leases_, queue_, diagnostics_, *caches_);
  Status done = body(transaction);
  // Before the body's own error, which may follow from what it could not read.
  if (transaction.unlisted_) return *transaction.unlisted_;
  if (!done) return done.error();
  return true;
}

Status LeaseStore::Transact(const std::function<Status(LeaseTransaction&)>& body,
                            std::chrono::milliseconds lock_timeout) const {
  Result<bool> done = TryTransact(body, lock_timeout);
  if (!done) return done.error();
  if (*done) return Ok{};
  return MakeError(ExitCode::kError,
                   fmt::format("{}/{} has been locked by {} for {} ms (gpupin holds it for "
                               "milliseconds): a stopped gpupin, or a process that should not "
                               "lock it",
                               root_.path(), kLockName, LockHolder(), lock_timeout.count()));
}

std::string LeaseStore::LockHolder() const {
  struct stat st {};
  std::optional<int> pid;
  if (fstatat(root_.fd(), kLockName, &st, AT_SYMLINK_NOFOLLOW) == 0)
    pid = ProcFs().FlockHolder(st.st_dev, st.st_ino);
  if (!pid) return "an unknown process";
  // /proc/locks names the process that took the lock; one that exited, or
  // closed it, while a child it started keeps the descriptor leaves only
  // its pid, which a process started since may have taken: it is not
  // named as the holder once its descriptors show it holds nothing.
  const ProcFs procfs = ProcFs().RememberingStats();  // one read of its stat for all three
  if (procfs.Hidden(*pid)) return fmt::format("pid {} (another user's, hidden by /proc)", *pid);
  if (!procfs.Stat(*pid))
    return fmt::format("pid {} (no longer running: a process it started holds the lock open)",
                       *pid);
  if (procfs.HoldsOpen(*pid, st.st_dev, st.st_ino) == false)
    return fmt::format("a process that pid {} passed the lock to (pid {} no longer holds it open)",
                       *pid, *pid);
  return DescribeProcess(procfs, *pid);
}

std::optional<std::string> LeaseStore::OwnerWarning() const {
  // A private directory of one's own is nobody else's business; one of
  // another user's is theirs to empty, shared or not (root can use a 0700
  // directory that someone else made).
  if (root_.owner_uid() == 0 || (root_.owner_uid() == geteuid() && !root_.shared()))
    return std::nullopt;
  return fmt::format(
      "the state directory {} belongs to {} (uid {}), who can remove everyone's leases in it "
      "(the sticky bit does not stop a directory's owner); ask an admin for a root-owned "
      "/run/gpupin (the package's tmpfiles.d entry creates it: systemd-tmpfiles --create)",
      root_.path(), UserName(root_.owner_uid()), root_.owner_uid());
}

RecordListing LeaseTransaction::List(const StateDir& dir) {
  Result<RecordListing> listing = ListRecords(dir, diagnostics_);
  if (listing) return std::move(*listing);
  if (!unlisted_) unlisted_ = listing.error();
  return {};
}

std::vector<TicketFile> LeaseTransaction::ListTickets() {
  RecordListing listing = List(queue_);
  ForgetUnlisted(caches_.tickets, listing.records);
  return TicketFiles(listing.records, queue_, diagnostics_);
}

std::vector<Lease> LeaseTransaction::ReadLeases() {
  std::vector<Lease> leases;
  RecordListing listing = List(leases_);
  own_leases_ = listing.own;
  ForgetUnlisted(caches_.leases, listing.records);
  for (const ListedRecord& record : listing.records) {
    if (std::optional<Lease> lease =
            ReadRecord<Lease>(leases_, record.name, record.info, &LeaseFromJson, &LeaseFileName,
                              diagnostics_, caches_.leases)) {
      leases.push_back(std::move(*lease));
    }
  }
  return leases;
}

std::vector<Lease> LeaseTransaction::LiveLeases(const LivenessFacts& facts) {
  std::vector<Lease> live;
  for (Lease& lease : ReadLeases()) {
    if (EvaluateLease(lease, facts) == LeaseState::kLive) {
      // Others keep seeing another user's reservation while its job runs,
      // which is safe, only slower to free.
      if (std::optional<Lease> handed = HandOverToJob(lease, LeaseState::kLive, facts);
          handed && lease.uid == geteuid()) {
        lease = std::move(*handed);
      }
      live.push_back(std::move(lease));
    } else {
      RemoveIfAllowed(leases_, FileName(lease.id));
    }
  }
  return live;
}

std::optional<Lease> LeaseTransaction::HandOverToJob(const Lease& lease, LeaseState state,
                                                     const LivenessFacts& facts) {
  std::optional<Lease> handed = HandedToJob(lease, facts);
  if (handed && state == LeaseState::kLive && lease.uid == geteuid()) (void)UpdateLease(*handed);
  return handed;
}

Status LeaseTransaction::AddLease(const Lease& lease) {
  if (!IsValidRecordId(lease.id)) {
    return MakeError(ExitCode::kError, fmt::format("invalid lease id '{}'", lease.id));
  }
  if (leases_.ReadFile(FileName(lease.id), kMaxRecordBytes).ok()) {
    return MakeError(ExitCode::kError, fmt::format("lease {} exists already", lease.id));
  }
  if (!own_leases_) own_leases_ = List(leases_).own;
  if (unlisted_) return *unlisted_;
  Status written =
      WriteRecord(leases_, FileName(lease.id), LeaseToJson(lease), *own_leases_, "lease");
  if (written) ++*own_leases_;
  return written;
}

Status LeaseTransaction::UpdateLease(const Lease& lease) {
  if (!IsValidRecordId(lease.id)) {
    return MakeError(ExitCode::kError, fmt::format("invalid lease id '{}'", lease.id));
  }
  if (unlisted_) return *unlisted_;
  Result<FileRead> existing = leases_.ReadFile(FileName(lease.id), kMaxRecordBytes);
  if (!existing) {
    return existing.error().WithContext(fmt::format("cannot update lease {}", lease.id));
  }
  if (existing->info.owner_uid != geteuid()) {
    return MakeError(ExitCode::kError, fmt::format("cannot update lease {}: it belongs to uid {}",
                                                   lease.id, existing->info.owner_uid));
  }
  return WriteRecord(leases_, FileName(lease.id), LeaseToJson(lease), 0, "lease");
}

Status LeaseTransaction::RemoveLease(const std::string& id) {
  if (!IsValidRecordId(id))
    return MakeError(ExitCode::kError, fmt::format("invalid lease id '{}'", id));
  return leases_.Remove(FileName(id));
}

std::vector<QueueTicket> LeaseTransaction::ReadTickets() {
  std::vector<QueueTicket> tickets;
  for (const TicketFile& file : ListTickets()) {
    if (std::optional<QueueTicket> ticket = ReadTicket(file)) {
      tickets.push_back(std::move(*ticket));
    }
  }
  return tickets;
}

std::optional<QueueTicket> LeaseTransaction::ReadTicket(const TicketFile& file) {
  return ReadRecord<QueueTicket>(queue_, file.name, file.info, &TicketFromJson, &TicketFileName,
                                 diagnostics_, caches_.tickets);
}

std::optional<QueueTicket> LeaseTransaction::ReadLiveTicket(const TicketFile& file,
                                                            const LivenessFacts& facts) {
  // Found dead before and left in place (another user's): skipped unread.
  if (const RecordCache<QueueTicket>::Entry* known = caches_.tickets.Find(file.name, file.info);
      known && known->processes_gone) {
    return std::nullopt;
  }
  std::optional<QueueTicket> ticket = ReadTicket(file);
  if (!ticket) return std::nullopt;
  auto alive = [&](const ProcessIdentity& process) {
    return RecordProcessAlive(process, ticket->uid, facts);
  };
  // A ticket holds a place only while a gpupin waits for it: anyone can
  // write one naming a live process of theirs (a `sleep`), which would hold
  // up the queue for as long as that process lives. The waiter is the
  // holder itself in tickets that name none (run's).
  const ProcessIdentity& waiter = WaiterOf(*ticket);
  const bool processes_alive = alive(ticket->holder) && alive(waiter);
  if (processes_alive && (!facts.runs_gpupin || facts.runs_gpupin(waiter.pid))) return ticket;
  // Removed only once its processes are gone: a live waiter of another
  // name may be a gpupin after all (run through a link), and must not
  // find its place gone.
  if (!processes_alive) {
    RemoveIfAllowed(queue_, file.name);
    // Not judged again only when it cannot come back to life: a /proc
    // that failed to answer (out of descriptors) is asked again next time.
    if (NoSuchProcess(ticket->holder.pid) || NoSuchProcess(waiter.pid))
      caches_.tickets.ProcessesGone(file.name);
  }
  return std::nullopt;
}

std::vector<QueueTicket> LeaseTransaction::LiveTickets(const LivenessFacts& facts) {
  std::vector<QueueTicket> live;
  OnePlacePerWaiter places;
  for (const TicketFile& file : ListTickets()) {
    std::optional<QueueTicket> ticket = ReadLiveTicket(file, facts);
    if (ticket && places.First(*ticket)) live.push_back(std::move(*ticket));
  }
  return live;
}

bool TicketStopped(const QueueTicket& ticket, const StoppedCheck& stopped) {
  return stopped(ticket.holder.pid) || (ticket.waiter && stopped(ticket.waiter->pid));
}

std::optional<QueueTicket> LeaseTransaction::ReadWaitingTicket(const TicketFile& file,
                                                               const LivenessFacts& facts,
                                                               const StoppedCheck& stopped) {
  std::optional<QueueTicket> ticket = ReadLiveTicket(file, facts);
  if (ticket && stopped && TicketStopped(*ticket, stopped)) return std::nullopt;
  return ticket;
}

Result<std::vector<QueueTicket>> LeaseTransaction::WaitingTickets(
    const std::optional<QueueTicket>& mine, const LivenessFacts& facts,
    const StoppedCheck& stopped) {
  std::vector<QueueTicket> waiting;
  bool found = false;
  OnePlacePerWaiter places;
  for (const TicketFile& file : ListTickets()) {
    if (mine && file.id == mine->id && file.seq == mine->seq) {
      waiting.push_back(*mine);
      found = true;
    } else if (found && file.info.owner_uid == mine->uid) {
      // Our own user's tickets behind ours never go first, whatever the
      // order (fair share and caps count users, and within a user it is
      // arrival): left unread, a waiter asks /proc about none of them.
      continue;
    } else if (std::optional<QueueTicket> ticket = ReadWaitingTicket(file, facts, stopped)) {
      if (mine && WaiterOf(*ticket) == WaiterOf(*mine)) {
        // A copy naming us, ahead of our ticket or behind it: we wait for
        // our own only. Removed, so that every reader sees our place where
        // we do; it is ours to remove, since a ticket naming a process
        // lives only as that process's user's (RecordProcessAlive).
        RemoveIfAllowed(queue_, file.name);
      } else if (places.First(*ticket)) {
        ticket->change_time_ns = file.info.change_time_ns;
        waiting.push_back(std::move(*ticket));
      }
    }
  }
  if (mine && !found) {
    return MakeError(ExitCode::kError,
                     "our place in the wait queue vanished; run the command again");
  }
  return waiting;
}

// The sequence continues from the tickets present rather than from a counter
// file: in a sticky directory a counter would belong to whoever created it
// and nobody else could advance it. It orders only tickets put in place
// within one tick of the clock (TicketFile), so restarting at 1 when the
// queue is empty is harmless, and so is staying at the largest number
// when someone's ticket claims it: the ids keep the names apart.
Result<QueueTicket> LeaseTransaction::TakeTicket(QueueTicket ticket) {
  if (ticket.id.empty()) ticket.id = NewRecordId(ticket.holder);
  if (!IsValidRecordId(ticket.id)) {
    return MakeError(ExitCode::kError, fmt::format("invalid ticket id '{}'", ticket.id));
  }
  // What every reader would skip (TicketFromJson) is not written.
  if (ticket.count < 1)
    return MakeError(ExitCode::kError, "a queue ticket asks for at least one card");
  RecordListing listing = List(queue_);
  if (unlisted_) return *unlisted_;
  uint64_t last = 0;
  for (const TicketFile& file : TicketFiles(listing.records, queue_, diagnostics_))
    last = std::max(last, file.seq);
  ticket.seq = std::min(last + 1, kMaxTicketSeq);
  Status written = WriteRecord(queue_, TicketFileName(ticket), TicketToJson(ticket), listing.own,
                               "queue ticket");
  if (!written) return written.error();
  return ticket;
}

Status LeaseTransaction::RemoveTicket(const QueueTicket& ticket) {
  if (!IsValidRecordId(ticket.id))
    return MakeError(ExitCode::kError, fmt::format("invalid ticket id '{}'", ticket.id));
  return queue_.Remove(TicketFileName(ticket));
}

}  // namespace gpupin
