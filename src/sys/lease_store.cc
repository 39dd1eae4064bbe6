#include "sys/lease_store.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>

#include "core/json_fields.h"
#include "core/lease_json.h"

namespace gpupin {
namespace {

constexpr std::string_view kSuffix = ".json";

std::string FileName(const std::string& id) { return id + std::string(kSuffix); }

// File names come from other users: no escape sequence or newline of theirs
// reaches the terminal through a diagnostic.
std::string Printable(std::string_view name) {
  std::string result(name);
  for (char& c : result) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  }
  return result;
}

// Reads every record file of one directory. A file is trusted only as far
// as its owner: its claimed uid must be the uid that owns the file, so no
// user can create a lease or ticket in another's name. Root is held to the
// same rule (a root process records uid 0), which keeps the rule simple and
// the owner column honest.
template <class Record>
std::vector<Record> ReadRecords(const StateDir& dir, Result<Record> (*parse)(std::string_view),
                                const DiagnosticSink& diagnostics) {
  std::vector<Record> records;
  auto skip = [&](const std::string& name, const std::string& why) {
    if (diagnostics)
      diagnostics(fmt::format("skipped {}/{}: {}", dir.path(), Printable(name), why));
  };
  Result<std::vector<std::string>> names = dir.List();
  if (!names) {
    skip(".", names.error().message);
    return records;
  }
  for (const std::string& name : *names) {
    if (!name.ends_with(kSuffix)) {
      skip(name, "not a record file name");
      continue;
    }
    Result<FileRead> file = dir.ReadFile(name, kMaxRecordBytes);
    if (!file) {
      skip(name, file.error().message);
      continue;
    }
    Result<Record> record = parse(file->text);
    if (!record) {
      skip(name, record.error().message);
      continue;
    }
    if (record->uid != file->owner_uid) {
      skip(name, fmt::format("claims uid {} but is owned by uid {} (forged)", record->uid,
                             file->owner_uid));
      continue;
    }
    if (FileName(record->id) != name) {
      skip(name, fmt::format("holds record '{}', not the one its name says", record->id));
      continue;
    }
    records.push_back(std::move(*record));
  }
  return records;
}

// Dead records of other users usually cannot be removed (sticky directory);
// readers ignore them, so failing here is fine.
void RemoveIfAllowed(const StateDir& dir, const std::string& id) { (void)dir.Remove(FileName(id)); }

}  // namespace

std::string NewRecordId(const ProcessIdentity& holder) {
  return fmt::format("{}-{}-{}", holder.pid, holder.start_time_ticks, RandomHex(4));
}

std::optional<size_t> QueuePosition(const std::vector<QueueTicket>& queue, const std::string& id) {
  auto it = std::find_if(queue.begin(), queue.end(),
                         [&](const QueueTicket& ticket) { return ticket.id == id; });
  if (it == queue.end()) return std::nullopt;
  return static_cast<size_t>(it - queue.begin());
}

Result<LeaseStore> LeaseStore::Open(StateDir root, DiagnosticSink diagnostics) {
  Result<StateDir> leases = root.Subdir("leases");
  if (!leases) return leases.error();
  Result<StateDir> queue = root.Subdir("queue");
  if (!queue) return queue.error();
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

bool LeaseStore::QueueMayHaveTickets() const {
  Result<std::vector<std::string>> names = queue_.List();
  return !names.ok() || !names->empty();
}

Status LeaseStore::Transact(const std::function<Status(LeaseTransaction&)>& body,
                            std::chrono::milliseconds lock_timeout) const {
  Result<FileLock> lock = root_.Lock("lock", lock_timeout);
  if (!lock) return lock.error();
  LeaseTransaction transaction(leases_, queue_, diagnostics_);
  return body(transaction);
}

std::vector<Lease> LeaseTransaction::ReadLeases() {
  return ReadRecords<Lease>(leases_, &LeaseFromJson, diagnostics_);
}

std::vector<Lease> LeaseTransaction::LiveLeases(const LivenessFacts& facts) {
  std::vector<Lease> live;
  for (Lease& lease : ReadLeases()) {
    if (EvaluateLease(lease, facts) == LeaseState::kLive) {
      // A reservation whose job has started is handed to the job, so that it
      // ends when the job does rather than at its TTL. Only the owner can
      // rewrite the file; others keep seeing a live reservation while the
      // job runs, which is safe, only slower to free.
      if (std::optional<ProcessIdentity> job = ReservationJob(lease, facts);
          job && lease.uid == geteuid()) {
        lease.holder = *job;
        lease.reservation_deadline_unix_ms.reset();
        lease.reservation_baseline_pids.clear();
        (void)UpdateLease(lease);
      }
      live.push_back(std::move(lease));
    } else {
      RemoveIfAllowed(leases_, lease.id);
    }
  }
  return live;
}

Status LeaseTransaction::AddLease(const Lease& lease) {
  if (!IsValidRecordId(lease.id)) {
    return MakeError(ExitCode::kError, fmt::format("invalid lease id '{}'", lease.id));
  }
  if (leases_.ReadFile(FileName(lease.id), kMaxRecordBytes).ok()) {
    return MakeError(ExitCode::kError, fmt::format("lease {} exists already", lease.id));
  }
  return leases_.WriteFileAtomic(FileName(lease.id), LeaseToJson(lease));
}

Status LeaseTransaction::UpdateLease(const Lease& lease) {
  if (!IsValidRecordId(lease.id)) {
    return MakeError(ExitCode::kError, fmt::format("invalid lease id '{}'", lease.id));
  }
  Result<FileRead> existing = leases_.ReadFile(FileName(lease.id), kMaxRecordBytes);
  if (!existing) {
    return existing.error().WithContext(fmt::format("cannot update lease {}", lease.id));
  }
  if (existing->owner_uid != geteuid()) {
    return MakeError(ExitCode::kError, fmt::format("cannot update lease {}: it belongs to uid {}",
                                                   lease.id, existing->owner_uid));
  }
  return leases_.WriteFileAtomic(FileName(lease.id), LeaseToJson(lease));
}

Status LeaseTransaction::RemoveLease(const std::string& id) {
  if (!IsValidRecordId(id))
    return MakeError(ExitCode::kError, fmt::format("invalid lease id '{}'", id));
  return leases_.Remove(FileName(id));
}

std::vector<QueueTicket> LeaseTransaction::ReadTickets() {
  std::vector<QueueTicket> tickets =
      ReadRecords<QueueTicket>(queue_, &TicketFromJson, diagnostics_);
  std::sort(tickets.begin(), tickets.end(), [](const QueueTicket& a, const QueueTicket& b) {
    return std::tie(a.seq, a.id) < std::tie(b.seq, b.id);
  });
  return tickets;
}

std::vector<QueueTicket> LeaseTransaction::LiveTickets(const StartTimeOf& start_time) {
  std::vector<QueueTicket> live;
  for (QueueTicket& ticket : ReadTickets()) {
    if (start_time(ticket.holder.pid) == ticket.holder.start_time_ticks) {
      live.push_back(std::move(ticket));
    } else {
      RemoveIfAllowed(queue_, ticket.id);
    }
  }
  return live;
}

// The sequence continues from the tickets present rather than from a counter
// file: in a sticky directory a counter would belong to whoever created it
// and nobody else could advance it. Order only matters among tickets that
// exist, so restarting at 1 when the queue is empty is harmless.
Result<QueueTicket> LeaseTransaction::TakeTicket(QueueTicket ticket) {
  if (ticket.id.empty()) ticket.id = NewRecordId(ticket.holder);
  if (!IsValidRecordId(ticket.id)) {
    return MakeError(ExitCode::kError, fmt::format("invalid ticket id '{}'", ticket.id));
  }
  uint64_t last = 0;
  for (const QueueTicket& other : ReadTickets()) last = std::max(last, other.seq);
  if (last >= kMaxTicketSeq) {
    return MakeError(ExitCode::kError,
                     fmt::format("the wait queue in {} holds a ticket numbered {}; remove the "
                                 "files in it that no gpupin is waiting on",
                                 queue_.path(), last));
  }
  ticket.seq = last + 1;
  Status written = queue_.WriteFileAtomic(FileName(ticket.id), TicketToJson(ticket));
  if (!written) return written.error();
  return ticket;
}

Status LeaseTransaction::RemoveTicket(const std::string& id) {
  if (!IsValidRecordId(id))
    return MakeError(ExitCode::kError, fmt::format("invalid ticket id '{}'", id));
  return queue_.Remove(FileName(id));
}

}  // namespace gpupin
