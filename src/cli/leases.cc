#include "cli/leases.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <set>
#include <string>

#include "cli/machine_state.h"
#include "core/house_rules.h"
#include "core/printable.h"
#include "core/queue_decision.h"
#include "core/time_format.h"
#include "core/units.h"
#include "out/gpu_table.h"
#include "out/inventory_json.h"
#include "out/json_value.h"
#include "out/table.h"
#include "out/terminal.h"
#include "sys/lease_store.h"
#include "sys/procfs.h"
#include "sys/user_groups.h"

namespace gpupin {
namespace {

struct LeaseRow {
  Lease lease;
  LeaseState state = LeaseState::kLive;
};

struct TicketRow {
  QueueTicket ticket;
  // Its holder or waiter is stopped (Ctrl-Z): waiters behind pass it over.
  bool stopped = false;
};

struct StateSnapshot {
  std::vector<LeaseRow> leases;
  std::vector<TicketRow> queue;
  std::map<std::string, uint32_t> index_of_uuid;
  std::vector<Gpu> gpus;  // the cards present, which a gone card's short UUID must not match
  int64_t now_unix_ms = 0;
};

const char* StateName(LeaseState state) {
  switch (state) {
    case LeaseState::kLive:
      return "live";
    case LeaseState::kHolderGone:
      return "holder gone";
    case LeaseState::kReservationExpired:
      return "reservation expired";
  }
  return "unknown";
}

std::string KindText(const Lease& lease, int64_t now_unix_ms) {
  std::string kind =
      lease.shared_bytes ? "shared " + FormatBytes(*lease.shared_bytes) : "exclusive";
  if (lease.is_reservation())
    kind +=
        ", reserved until " + FormatLocalClock(*lease.reservation_deadline_unix_ms, now_unix_ms);
  if (lease.container_id) kind += ", container " + lease.container_id->substr(0, 12);
  return kind;
}

// Reads leases and the queue. NVML is asked for the GPU process lists (a
// reservation ends when its job appears) and for indices; without it the
// listing still works, by UUID.
Result<StateSnapshot> ReadState(World& world) {
  Result<LeaseStore*> store = world.Leases();
  if (!store.ok()) return store.error();
  Inventory inventory;
  if (Result<GpuSource*> gpus = world.Gpus(); gpus.ok()) {
    if (Result<Inventory> snapshot = (*gpus)->Snapshot(gpu_facts::kProcesses); snapshot.ok())
      inventory = std::move(*snapshot);
  } else {
    world.Verbose("GPUs shown by UUID: " + gpus.error().message);
  }
  StateSnapshot snapshot;
  for (const Gpu& gpu : inventory.gpus) snapshot.index_of_uuid[gpu.uuid] = gpu.index;
  snapshot.gpus = inventory.gpus;
  LivenessFacts facts = MakeLivenessFacts(inventory, world.procfs());
  snapshot.now_unix_ms = facts.now_unix_ms;
  Status read = (*store)->Transact([&](LeaseTransaction& txn) -> Status {
    for (Lease& lease : txn.ReadLeases()) {
      LeaseState state = EvaluateLease(lease, facts);
      // Another user's reservation stays a reservation in its file while its
      // job runs (only its owner rewrites it): show what it has become.
      if (std::optional<Lease> handed = txn.HandOverToJob(lease, state, facts))
        lease = std::move(*handed);
      snapshot.leases.push_back({std::move(lease), state});
    }
    for (QueueTicket& ticket : txn.LiveTickets(facts)) {
      bool is_stopped = TicketStopped(ticket, facts.process_stopped);
      snapshot.queue.push_back({std::move(ticket), is_stopped});
    }
    return Ok{};
  });
  if (!read.ok()) return read.error();
  return snapshot;
}

std::string GpuList(const Lease& lease, const StateSnapshot& snapshot) {
  std::string text;
  for (const std::string& uuid : lease.gpu_uuids) {
    auto it = snapshot.index_of_uuid.find(uuid);
    text += (text.empty() ? "" : ",") + (it != snapshot.index_of_uuid.end()
                                             ? std::to_string(it->second)
                                             : ShortUuid(uuid, snapshot.gpus));
  }
  return text;
}

std::vector<Lease> LiveLeases(const StateSnapshot& snapshot) {
  std::vector<Lease> live;
  for (const LeaseRow& row : snapshot.leases) {
    if (row.state == LeaseState::kLive) live.push_back(row.lease);
  }
  return live;
}

// The queue in the order it is served (ServiceOrder: fair share, the caps),
// not of arrival. A suspended waiter is where it will be once continued.
void OrderAsServed(const World& world, StateSnapshot& snapshot) {
  TurnInput input;
  input.order = world.rules().queue;
  input.held = CardsHeldByUser(LiveLeases(snapshot));
  for (const TicketRow& row : snapshot.queue) {
    input.waiting.push_back(row.ticket);
    if (!input.caps.contains(row.ticket.uid))
      input.caps[row.ticket.uid] = CapsOfUser(world.rules(), row.ticket.uid);
  }
  std::vector<TicketRow> served;
  for (size_t arrival : ServiceOrder(input)) served.push_back(std::move(snapshot.queue[arrival]));
  snapshot.queue = std::move(served);
}

// Each user's cards against their cap, when the house rules cap users:
// the holders of live leases and the waiters.
struct Holding {
  uint32_t uid = 0;
  std::string user;
  int held = 0;
  AppliedCap cap;
};

std::vector<Holding> Holdings(const World& world, const StateSnapshot& snapshot) {
  if (!AnyPerUserCap(world.rules())) return {};
  std::map<uint32_t, int> held = CardsHeldByUser(LiveLeases(snapshot));
  for (const TicketRow& row : snapshot.queue) held.try_emplace(row.ticket.uid, 0);
  std::vector<Holding> holdings;
  for (const auto& [uid, cards] : held) {
    const std::string user = UserName(uid);
    holdings.push_back(
        {uid, user, cards,
         CapFor(world.rules(), CapKind::kPerUser, user, GroupsTheRulesCap(world.rules(), uid))});
  }
  return holdings;
}

Result<int> ShowLeases(World& world, bool all) {
  if (Status exists = world.RequireExistingStateDir(); !exists.ok()) return exists.error();
  Result<StateSnapshot> snapshot = ReadState(world);
  if (!snapshot.ok()) return snapshot.error();
  OrderAsServed(world, *snapshot);
  if (world.options().json) {
    nlohmann::ordered_json leases = nlohmann::ordered_json::array();
    for (const LeaseRow& row : snapshot->leases) {
      if (!all && row.state != LeaseState::kLive) continue;
      const Lease& lease = row.lease;
      nlohmann::ordered_json indices = nlohmann::ordered_json::array();
      for (const std::string& uuid : lease.gpu_uuids) {
        auto it = snapshot->index_of_uuid.find(uuid);
        indices.push_back(it != snapshot->index_of_uuid.end() ? nlohmann::ordered_json(it->second)
                                                              : nullptr);
      }
      leases.push_back(
          {{"lease_id", lease.id},
           {"state", StateName(row.state)},
           {"user", lease.user},
           {"uid", lease.uid},
           {"holder_pid", lease.holder.pid},
           {"gpu_uuids", lease.gpu_uuids},
           {"gpu_indices", indices},
           {"shared_bytes", OrNull(lease.shared_bytes)},
           {"reservation_deadline_unix_ms", OrNull(lease.reservation_deadline_unix_ms)},
           {"container_id", OrNull(lease.container_id)},
           {"created_unix_ms", lease.created_unix_ms},
           {"command", lease.command}});
    }
    nlohmann::ordered_json queue = nlohmann::ordered_json::array();
    for (size_t i = 0; i < snapshot->queue.size(); ++i) {
      const QueueTicket& ticket = snapshot->queue[i].ticket;
      queue.push_back({{"position", i + 1},
                       {"state", snapshot->queue[i].stopped ? "stopped" : "waiting"},
                       {"ticket_id", ticket.id},
                       {"user", ticket.user},
                       {"holder_pid", ticket.holder.pid},
                       {"request", ticket.request},
                       {"created_unix_ms", ticket.created_unix_ms},
                       {"command", ticket.command}});
    }
    nlohmann::ordered_json out = {
        {"schema_version", kJsonSchemaVersion}, {"leases", leases}, {"queue", queue}};
    if (std::vector<Holding> holdings = Holdings(world, *snapshot); !holdings.empty()) {
      out["holdings"] = nlohmann::ordered_json::array();
      for (const Holding& holding : holdings) {
        out["holdings"].push_back({{"user", holding.user},
                                   {"uid", holding.uid},
                                   {"gpus_held", holding.held},
                                   {"max_gpus_per_user", OrNull(holding.cap.limit)},
                                   {"rule", DescribeCap(world.rules(), holding.cap)}});
      }
    }
    std::printf("%s\n", JsonText(out).c_str());
    return 0;
  }
  Table leases({{"LEASE"},
                {"USER"},
                {"PID", Align::kRight},
                {"GPUS"},
                {"KIND"},
                {"SINCE"},
                {"STATE"},
                {"COMMAND"}});
  size_t shown = 0;
  for (const LeaseRow& row : snapshot->leases) {
    if (!all && row.state != LeaseState::kLive) continue;
    const Lease& lease = row.lease;
    leases.AddRow({lease.id, Printable(lease.user), std::to_string(lease.holder.pid),
                   GpuList(lease, *snapshot), KindText(lease, snapshot->now_unix_ms),
                   FormatLocalClock(lease.created_unix_ms, snapshot->now_unix_ms),
                   StateName(row.state), Printable(lease.command)});
    ++shown;
  }
  std::string out = shown == 0 ? "no active leases\n" : leases.Render();
  if (!snapshot->queue.empty()) {
    Table queue({{"WAITING", Align::kRight},
                 {"USER"},
                 {"PID", Align::kRight},
                 {"WANTS"},
                 {"SINCE"},
                 {"STATE"},
                 {"COMMAND"}});
    for (size_t i = 0; i < snapshot->queue.size(); ++i) {
      const QueueTicket& ticket = snapshot->queue[i].ticket;
      queue.AddRow({std::to_string(i + 1), Printable(ticket.user),
                    std::to_string(ticket.holder.pid), Printable(ticket.request),
                    FormatLocalClock(ticket.created_unix_ms, snapshot->now_unix_ms),
                    snapshot->queue[i].stopped ? "stopped (passed over)" : "waiting",
                    Printable(ticket.command)});
    }
    out += "\n" + queue.Render();
  }
  if (std::vector<Holding> holdings = Holdings(world, *snapshot); !holdings.empty()) {
    Table table({{"USER"}, {"HOLDS", Align::kRight}, {"CAP"}});
    for (const Holding& holding : holdings) {
      // gpupin gives no one more; more is held outside it (lease files
      // written by hand) or from before the cap was lowered.
      const bool over = holding.cap.limit && holding.held > *holding.cap.limit;
      table.AddRow({Printable(holding.user), std::to_string(holding.held),
                    DescribeCap(world.rules(), holding.cap) + (over ? " (over it)" : "")});
    }
    out += "\n" + table.Render();
  }
  std::fputs(out.c_str(), stdout);
  return 0;
}

// The processes of the job a live lease of ours holds cards for: its
// holder, or a reservation's new processes on its cards (a job whose shell
// was gone before any gpupin saw it could not be handed the reservation).
// Empty for a reservation still waiting for its job.
std::vector<uint32_t> RunningJob(const Lease& lease, const LivenessFacts& facts) {
  if (lease.is_reservation()) return ReservationJobs(lease, facts);
  if (!RecordProcessAlive(lease.holder, lease.uid, facts)) return {};
  return {static_cast<uint32_t>(lease.holder.pid)};
}

Result<int> Release(World& world, const std::vector<std::string>& ids, bool all) {
  // An empty id is a prefix of every id: `gpupin release "$ID"` with ID
  // unset would end a job's lease that nobody named.
  if (std::find(ids.begin(), ids.end(), "") != ids.end()) {
    return MakeError(ExitCode::kUsage,
                     "an empty lease id; give an id from gpupin leases (no id at all releases "
                     "your reservations)");
  }
  // Which one was meant, every lease or the ones named, cannot be told.
  if (all && !ids.empty()) {
    return MakeError(ExitCode::kUsage,
                     "--all releases every lease of yours: give it alone, or the ids without it");
  }
  if (Status exists = world.RequireExistingStateDir(); !exists.ok()) return exists.error();
  Result<LeaseStore*> store = world.Leases();
  if (!store.ok()) return store.error();
  uint32_t uid = static_cast<uint32_t>(getuid());
  // A reservation its job has taken over is the job's lease from then on:
  // the GPU process lists tell (without NVML, every reservation is one).
  Inventory inventory;
  if (Result<GpuSource*> gpus = world.Gpus(); gpus.ok()) {
    if (Result<Inventory> snapshot = (*gpus)->Snapshot(gpu_facts::kProcesses); snapshot.ok())
      inventory = std::move(*snapshot);
  }
  const LivenessFacts facts = MakeLivenessFacts(inventory, world.procfs());
  std::vector<Lease> released;
  std::vector<Lease> kept;  // running jobs' leases a bare release leaves alone
  Status done = (*store)->Transact([&](LeaseTransaction& txn) -> Status {
    // Ended leases are removed on the way, so that an id names only what
    // still holds and --all reports only what it ended; handed reservations
    // become jobs'.
    (void)txn.LiveLeases(facts);
    std::vector<Lease> leases = txn.ReadLeases();
    std::vector<const Lease*> chosen;
    for (const Lease& lease : leases) {
      if (lease.uid != uid || !ids.empty()) continue;
      if (all || RunningJob(lease, facts).empty()) {
        chosen.push_back(&lease);
      } else {
        kept.push_back(lease);
      }
    }
    for (const std::string& id : ids) {
      // The caller's own lease whose id it is, else the caller's own ones it
      // begins, and only then anyone's, in the same order: another user's
      // lease named as one of ours plus a character, or as the prefix we
      // type (ids are predictable), cannot make ours unnamable.
      std::vector<const Lease*> matches;
      auto collect = [&](const std::function<bool(const Lease&)>& named) {
        for (const Lease& lease : leases) {
          if (named(lease)) matches.push_back(&lease);
        }
        return !matches.empty();
      };
      if (!collect([&](const Lease& l) { return l.uid == uid && l.id == id; }) &&
          !collect([&](const Lease& l) { return l.uid == uid && l.id.starts_with(id); }) &&
          !collect([&](const Lease& lease) { return lease.id == id; })) {
        collect([&](const Lease& lease) { return lease.id.starts_with(id); });
      }
      // A waiting job's ticket is not a lease: it leaves the queue with its gpupin.
      if (matches.empty()) {
        return MakeError(ExitCode::kError,
                         fmt::format("no lease '{}'; see gpupin leases (a job still waiting in "
                                     "the queue leaves it when its gpupin is stopped: Ctrl-C, "
                                     "or kill its PID)",
                                     Printable(id)));
      }
      if (matches.size() > 1) {
        return MakeError(
            ExitCode::kUsage,
            fmt::format("'{}' matches {} leases; give more of the id", id, matches.size()));
      }
      if (std::find(chosen.begin(), chosen.end(), matches.front()) != chosen.end()) continue;
      if (matches.front()->uid != uid && uid != 0) {
        return MakeError(ExitCode::kError,
                         fmt::format("lease {} belongs to {}; only they (or root) can release it",
                                     matches.front()->id, matches.front()->user));
      }
      chosen.push_back(matches.front());
    }
    for (const Lease* lease : chosen) {
      Status removed = txn.RemoveLease(lease->id);
      if (!removed.ok()) return removed.error();
      released.push_back(*lease);
    }
    return Ok{};
  });
  if (!done.ok()) return done.error();
  for (const Lease& lease : kept) {
    world.Note(
        fmt::format("kept {} ({}): a running job's lease ends only when named: gpupin "
                    "release {} (or --all)",
                    lease.id, Printable(lease.command), lease.id));
  }
  if (world.options().json) {
    nlohmann::ordered_json out = {{"schema_version", kJsonSchemaVersion},
                                  {"released", nlohmann::ordered_json::array()},
                                  {"kept", nlohmann::ordered_json::array()}};
    for (const Lease& lease : released) out["released"].push_back(lease.id);
    for (const Lease& lease : kept) out["kept"].push_back(lease.id);
    std::printf("%s\n", JsonText(out).c_str());
  } else if (released.empty() && kept.empty()) {
    world.Note("you hold no leases");
  }
  // Once per job: one shell's several env leases have one job.
  std::set<std::string> warned;
  for (const Lease& lease : released) {
    if (!world.options().json)
      std::printf("released %s (%s)\n", lease.id.c_str(), Printable(lease.command).c_str());
    if (const std::vector<uint32_t> running = RunningJob(lease, facts); !running.empty()) {
      std::string warning = fmt::format(
          "pid {} still {}, now without a lease: others may be given its GPUs{}",
          fmt::join(running, ", "), running.size() == 1 ? "runs" : "run",
          lease.command.starts_with(kShellLeaseCommand)
              ? "; in that shell, unset CUDA_VISIBLE_DEVICES GPUPIN_LEASE_ID before starting more"
              : "");
      if (warned.insert(warning).second) world.Note(warning);
    }
  }
  return 0;
}

}  // namespace

CommandSpec LeasesCommand() {
  return {"leases",
          "show active leases, reservations and the wait queue (a job suspended while it "
          "waits is shown as stopped: passed over until continued); times are local, with the "
          "date when not today (Dec 6 21:08)",
          [](CLI::App& app) {
            auto all = std::make_shared<bool>(false);
            app.add_flag("--all", *all, "also show leases that have ended but whose files remain");
            return [all](World& world) { return ShowLeases(world, *all); };
          }};
}

CommandSpec ReleaseCommand() {
  return {"release", "end your own reservations (a running job's lease only by its id, or --all)",
          [](CLI::App& app) {
            auto ids = std::make_shared<std::vector<std::string>>();
            auto all = std::make_shared<bool>(false);
            app.add_option(
                   "ids", *ids,
                   "lease ids (a unique prefix is enough); default: your reservations that no "
                   "job has taken over")
                ->option_text("LEASE-ID ...");
            app.add_flag("--all", *all,
                         "all of your leases, running jobs' too (they run on without a "
                         "lease); not with ids");
            return [ids, all](World& world) { return Release(world, *ids, *all); };
          }};
}

}  // namespace gpupin
