// Lease records and the rules that decide whether one still holds. Pure: the
// facts about the world (is this process alive, what runs on each GPU, what
// time is it) come in as values, so every rule is unit-tested without
// processes. Storage lives in sys/lease_store.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpupin {

// A process identified so that a reused PID is not mistaken for it: the
// start time is field 22 of /proc/PID/stat (clock ticks since boot).
struct ProcessIdentity {
  int pid = 0;
  uint64_t start_time_ticks = 0;
  friend bool operator==(const ProcessIdentity&, const ProcessIdentity&) = default;
};

// The command of an `env` lease that follows the calling shell: "env for
// shell pid N". Told apart by release, which reminds such a shell's user of
// the variables the shell keeps.
inline constexpr std::string_view kShellLeaseCommand = "env for shell pid";

struct Lease {
  std::string id;  // unique; also the file name in the state directory
  std::vector<std::string> gpu_uuids;
  ProcessIdentity holder;
  uint32_t uid = 0;
  std::string user;
  std::string command;
  int64_t created_unix_ms = 0;
  // Absent: exclusive. Present: a shared lease of that many bytes (--mem).
  std::optional<uint64_t> shared_bytes;
  // A reservation (pick, env --ttl) holds its cards until its holder dies
  // or the deadline passes, and beyond both while a process that was not on
  // them at reservation time (the job) runs on them.
  std::optional<int64_t> reservation_deadline_unix_ms;
  std::vector<uint32_t> reservation_baseline_pids;
  // The session of a reservation's holder (field 6 of its stat) when it was
  // made: a job whose shell is gone by the time a gpupin first sees it is
  // found by it (HandedToJob). Absent in records of older gpupins.
  std::optional<int> holder_session;
  // And its start_stack (field 28), which changes when it execs: a holder
  // that has since exec'd (`bash -c '…; ./train.sh'`) has become the job.
  std::optional<uint64_t> holder_start_stack;
  // docker run -d: the lease lives as long as this container.
  std::optional<std::string> container_id;

  bool exclusive() const { return !shared_bytes.has_value(); }
  bool is_reservation() const { return reservation_deadline_unix_ms.has_value(); }
  friend bool operator==(const Lease&, const Lease&) = default;
};

// What the world looks like right now, for liveness decisions.
struct LivenessFacts {
  int64_t now_unix_ms = 0;
  // Start time of a live process with this PID, or nullopt if none.
  std::function<std::optional<uint64_t>(int pid)> process_start_time;
  // Whether a process with this PID exists that this user may not look at
  // (/proc mounted with hidepid): its start time, and so its identity,
  // cannot be told. Unset: none is.
  std::function<bool(int pid)> process_hidden;
  // Real uid of a live process, or nullopt if it cannot be read.
  std::function<std::optional<uint32_t>(int pid)> process_uid;
  // A live process's command line, as a lease records it; nullopt if it
  // cannot be read.
  std::function<std::optional<std::string>(int pid)> process_command;
  // The parent pid of a live process; nullopt when gone or unreadable.
  // Unset: no process counts as any other's descendant.
  std::function<std::optional<int>(int pid)> parent_of;
  // The session id of a live process; nullopt when gone or unreadable.
  // Unset: no job is found by its session.
  std::function<std::optional<int>(int pid)> session_of;
  // The start_stack of a live process (changed by each exec); nullopt when
  // gone, unreadable or hidden (0). Unset: no exec is seen.
  std::function<std::optional<uint64_t>(int pid)> start_stack_of;
  // Whether a live process runs gpupin (its executable's name is ours), for
  // queue tickets: only a waiting gpupin holds a place. Unset: any does.
  std::function<bool(int pid)> runs_gpupin;
  // Whether a live process is stopped (Ctrl-Z, SIGSTOP, a debugger): the
  // ticket of a stopped gpupin is passed over. Unset: none is.
  std::function<bool(int pid)> process_stopped;
  // PIDs NVML lists on each GPU (by UUID). Missing UUID: unknown.
  std::map<std::string, std::vector<uint32_t>> gpu_pids;
};

enum class LeaseState {
  kLive,
  kHolderGone,          // the holder process died (however it died)
  kReservationExpired,  // deadline passed before the job's process appeared
};

LeaseState EvaluateLease(const Lease& lease, const LivenessFacts& facts);

// The processes a reservation counts as its job: on its cards, not there
// when it was made, and running as its user (when /proc says). While there
// is one, the reservation holds whatever its holder and deadline say.
std::vector<uint32_t> ReservationJobs(const Lease& lease, const LivenessFacts& facts);

// "python train.py --lr 3e-4": a command line as a lease records it for
// other users to read, at most 200 characters.
std::string LeaseCommand(const std::vector<std::string>& argv);

// Whether a record of user `uid` (a lease or a queue ticket) may still count
// on `process`: it lives (a reused PID is not it), and, unless the record is
// root's, it runs as that user. Anyone can write a record naming init or
// another user's daemon, which would then hold a card or the queue's head
// for as long as that process lives.
bool RecordProcessAlive(const ProcessIdentity& process, uint32_t uid, const LivenessFacts& facts);

// A reservation handed over to its job: the first live process on its cards
// that was not there at reservation time, descends from the reservation's
// holder (the shell that picked) and runs as the reservation's user. Held by
// the job, so that it ends exactly when the job does, and named for the
// job's command. Descent, not the user, is what makes a process the job:
// any user can start a process on any card, and root's reservation handed
// to another user's 3-second process would end with it. Its owner writes it
// so (sys/lease_store); `leases` shows it so to everyone. nullopt: not a
// reservation, or no job yet.
std::optional<Lease> HandedToJob(const Lease& lease, const LivenessFacts& facts);

}  // namespace gpupin
