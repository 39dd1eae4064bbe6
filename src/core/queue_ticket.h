// A place in the wait queue (doc/state-dir.md): who waits, for what, and the
// sequence number that orders the queue. Pure record and its file format;
// the queue itself lives in sys/lease_store.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>

#include "core/error.h"
#include "core/lease.h"

namespace gpupin {

inline constexpr int kTicketFormatVersion = 1;
// Sequence numbers stay exact in every JSON reader (doubles hold 2^53).
inline constexpr uint64_t kMaxTicketSeq = uint64_t{1} << 53;

struct QueueTicket {
  std::string id;    // unique; also the file name
  uint64_t seq = 0;  // orders tickets put in place in one clock tick (sys/lease_store.cc)
  ProcessIdentity holder;
  uint32_t uid = 0;
  std::string user;
  std::string command;
  std::string request;  // what it waits for, for `gpupin leases` ("2 GPUs, 24G shared")
  // How many cards it waits for, for the other waiters' queue decision (a
  // user it would take past max_gpus_per_user is passed over). 1 in
  // tickets of older gpupin.
  int count = 1;
  int64_t created_unix_ms = 0;
  // The gpupin process waiting for this ticket. For pick, env and docker it
  // is not the holder (the shell or client that gets the cards), and a
  // ticket whose waiter was SIGKILLed must not stay in the queue for as
  // long as that shell lives. Absent in tickets of older gpupin.
  std::optional<ProcessIdentity> waiter;
  // Not in the file: the file's change time when another waiter read the
  // queue, which is its place in the queue (sys/lease_store.cc), so that a
  // waiter behind it sees it move even between that read and its watch on
  // the file.
  int64_t change_time_ns = 0;
  // The same ticket, whenever it was read: the change time is left out.
  friend bool operator==(const QueueTicket& a, const QueueTicket& b) {
    return std::tie(a.id, a.seq, a.holder, a.uid, a.user, a.command, a.request, a.count,
                    a.created_unix_ms, a.waiter) == std::tie(b.id, b.seq, b.holder, b.uid, b.user,
                                                             b.command, b.request, b.count,
                                                             b.created_unix_ms, b.waiter);
  }
};

std::string TicketToJson(const QueueTicket& ticket);
Result<QueueTicket> TicketFromJson(std::string_view text);

}  // namespace gpupin
