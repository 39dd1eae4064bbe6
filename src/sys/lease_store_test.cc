#include "sys/lease_store.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "core/lease_json.h"
#include "sys/change_watch.h"
#include "sys/procfs.h"
#include "testing/descriptor_limit.h"
#include "testing/processes.h"
#include "testing/temp_dir.h"

namespace gpupin {
namespace {

using testing::kNobody;
using testing::RunInChild;
using testing::TempDir;
using namespace std::chrono_literals;

constexpr auto& StartTime = testing::RealStartTime;

ProcessIdentity Self() { return {getpid(), StartTime(getpid()).value_or(0)}; }

LivenessFacts RealFacts() {
  LivenessFacts facts;
  facts.now_unix_ms = 0;
  facts.process_start_time = &StartTime;
  facts.process_uid = [](int pid) { return ProcFs().Uid(pid); };
  return facts;
}

Lease LeaseOn(const std::string& uuid, ProcessIdentity holder = Self()) {
  Lease lease;
  lease.id = NewRecordId(holder);
  lease.gpu_uuids = {uuid};
  lease.holder = holder;
  lease.uid = geteuid();
  lease.user = UserName(geteuid());
  lease.command = "test";
  return lease;
}

int64_t MonotonicNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Where a waiter stands in the queue WaitingTickets returns.
struct Place {
  size_t ahead = 0;
  std::optional<QueueTicket> just_ahead;  // nullopt: nobody is ahead
  std::optional<QueueTicket> head;        // the first ticket, when someone is ahead
};

Result<Place> PlaceOf(LeaseTransaction& t, const std::optional<QueueTicket>& mine,
                      const LivenessFacts& facts, const StoppedCheck& stopped = {}) {
  Result<std::vector<QueueTicket>> waiting = t.WaitingTickets(mine, facts, stopped);
  if (!waiting) return waiting.error();
  Place place;
  place.ahead = waiting->size();
  if (mine) {
    place.ahead =
        static_cast<size_t>(std::find(waiting->begin(), waiting->end(), *mine) - waiting->begin());
  }
  if (place.ahead > 0) {
    place.just_ahead = (*waiting)[place.ahead - 1];
    place.head = waiting->front();
  }
  return place;
}

struct Fixture {
  TempDir tmp;
  std::vector<std::string> diagnostics;

  Result<LeaseStore> Open() {
    Result<StateDir> root = StateDir::Open(tmp / "state");
    if (!root) return root.error();
    return LeaseStore::Open(std::move(*root),
                            [this](const std::string& line) { diagnostics.push_back(line); });
  }
  // Runs `body` in one transaction of a freshly opened store; fails the test on error.
  void Transact(const std::function<void(LeaseTransaction&)>& body) {
    Result<LeaseStore> store = Open();
    ASSERT_TRUE(store.ok()) << store.error().message;
    Status status = store->Transact([&](LeaseTransaction& t) -> Status {
      body(t);
      return Ok{};
    });
    ASSERT_TRUE(status.ok()) << status.error().message;
  }
  // Joins the queue as this process, in a transaction of its own.
  QueueTicket TakeOwnTicket() {
    QueueTicket ticket;
    Transact([&](LeaseTransaction& t) {
      Result<QueueTicket> taken = t.TakeTicket(
          QueueTicket{"", 0, Self(), geteuid(), UserName(geteuid()), "cmd", "1 GPU", 1});
      ASSERT_TRUE(taken.ok()) << taken.error().message;
      ticket = *taken;
    });
    return ticket;
  }
  bool Diagnosed(const std::string& name, const std::string& why) const {
    return std::any_of(diagnostics.begin(), diagnostics.end(), [&](const std::string& line) {
      return line.find(name) != std::string::npos && line.find(why) != std::string::npos;
    });
  }
};

TEST(LeaseStore, AddReadUpdateRemove) {
  Fixture f;
  Lease lease = LeaseOn("GPU-a");
  f.Transact([&](LeaseTransaction& t) { ASSERT_TRUE(t.AddLease(lease).ok()); });
  f.Transact([&](LeaseTransaction& t) {
    EXPECT_FALSE(t.AddLease(lease).ok()) << "the same id twice";
    std::vector<Lease> leases = t.LiveLeases(RealFacts());
    ASSERT_EQ(leases.size(), 1u);
    EXPECT_EQ(leases[0].id, lease.id);
    lease.container_id = std::string(64, 'c');
    ASSERT_TRUE(t.UpdateLease(lease).ok());
  });
  f.Transact([&](LeaseTransaction& t) {
    std::vector<Lease> leases = t.ReadLeases();
    ASSERT_EQ(leases.size(), 1u);
    EXPECT_EQ(leases[0].container_id, lease.container_id);
    ASSERT_TRUE(t.RemoveLease(lease.id).ok());
    EXPECT_TRUE(t.ReadLeases().empty());
    EXPECT_FALSE(t.UpdateLease(lease).ok()) << "nothing to update";
    EXPECT_FALSE(t.RemoveLease("../x").ok());
  });
  EXPECT_TRUE(f.diagnostics.empty());
}

// One newcomer at a time has the turn to look; the state lock stays free
// meanwhile, and a turn that does not come is said, not an error.
TEST(LeaseStore, TheArrivalTurnIsOneProcessesAtATimeApartFromTheStateLock) {
  Fixture f;
  Result<LeaseStore> store = f.Open();
  ASSERT_TRUE(store.ok()) << store.error().message;
  std::optional<FileLock> turn = store->TakeArrivalTurn(1s);
  ASSERT_TRUE(turn.has_value());
  EXPECT_TRUE(store->Transact([](LeaseTransaction&) -> Status { return Ok{}; }, 100ms).ok());
  const int code = RunInChild([&] {
    Result<LeaseStore> other = f.Open();
    if (!other.ok() || other->TakeArrivalTurn(100ms)) return 1;
    return f.Diagnosed("arrivals", "was held for 100 ms") ? 0 : 2;
  });
  EXPECT_EQ(code, 0) << "1: a second process took the turn while it was held; 2: not said";
  turn.reset();
  EXPECT_EQ(RunInChild([&] {
              Result<LeaseStore> other = f.Open();
              return other.ok() && other->TakeArrivalTurn(1s) ? 0 : 1;
            }),
            0)
      << "the turn, once given back";
}

TEST(LeaseStore, ADirectoryThatCannotBeListedFailsTheTransactionAndWritesNothing) {
  Fixture f;
  f.Transact([&](LeaseTransaction& t) { ASSERT_TRUE(t.AddLease(LeaseOn("GPU-a")).ok()); });
  Result<LeaseStore> store = f.Open();
  ASSERT_TRUE(store.ok()) << store.error().message;
  size_t seen = 0;
  bool added = true;
  Status status = store->Transact([&](LeaseTransaction& t) -> Status {
    {
      testing::DescriptorLimit none(0);
      seen = t.LiveLeases(RealFacts()).size();
    }
    added = t.AddLease(LeaseOn("GPU-a")).ok();
    return Ok{};
  });
  EXPECT_EQ(seen, 0u) << "nothing read";
  EXPECT_FALSE(added) << "a lease chosen on a listing that failed";
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.error().message.find("cannot list"), std::string::npos)
      << status.error().message;
  f.Transact([&](LeaseTransaction& t) { EXPECT_EQ(t.ReadLeases().size(), 1u); });
}

TEST(LeaseStore, AReservationIsHandedToItsJobAndNamedForIt) {
  Fixture f;
  // The job is this process, a child of the shell (its parent) that picked.
  Lease reservation = LeaseOn("GPU-a", {getppid(), StartTime(getppid()).value_or(0)});
  reservation.command = "pick (reserved for the next job)";
  reservation.reservation_deadline_unix_ms = 60000;
  const ProcessIdentity job = Self();
  LivenessFacts facts = RealFacts();
  facts.parent_of = [](int pid) { return ProcFs().ParentOf(pid); };
  facts.gpu_pids["GPU-a"] = {static_cast<uint32_t>(job.pid)};
  facts.process_command = [job](int pid) -> std::optional<std::string> {
    if (pid == job.pid) return "python train.py";
    return std::nullopt;
  };
  f.Transact([&](LeaseTransaction& t) {
    ASSERT_TRUE(t.AddLease(reservation).ok());
    ASSERT_EQ(t.LiveLeases(facts).size(), 1u);
  });
  f.Transact([&](LeaseTransaction& t) {
    std::vector<Lease> leases = t.ReadLeases();
    ASSERT_EQ(leases.size(), 1u);
    EXPECT_EQ(leases[0].holder, job);
    EXPECT_FALSE(leases[0].is_reservation());
    EXPECT_EQ(leases[0].command, "python train.py");
  });
}

TEST(LeaseStore, RefusesUnsafeSubdirectories) {
  Fixture f;
  ASSERT_TRUE(f.Open().ok());
  ASSERT_EQ(chmod((f.tmp / "state/queue").c_str(), 0777), 0);
  Result<LeaseStore> store = f.Open();
  ASSERT_FALSE(store.ok());
  EXPECT_NE(store.error().message.find("queue is writable by others without the sticky bit"),
            std::string::npos)
      << store.error().message;
}

TEST(LeaseStore, RecordIdsAreUnique) {
  std::set<std::string> ids;
  for (int i = 0; i < 100; ++i) ids.insert(NewRecordId(Self()));
  EXPECT_EQ(ids.size(), 100u);
  EXPECT_TRUE(IsValidRecordId(*ids.begin()));
}

TEST(LeaseStore, DeadLeasesAreIgnoredAndRemoved) {
  Fixture f;
  ProcessIdentity dead_holder = testing::DeadProcess();
  Lease dead = LeaseOn("GPU-a", dead_holder);
  Lease reused = LeaseOn("GPU-b", {getpid(), Self().start_time_ticks + 1});
  Lease live = LeaseOn("GPU-c");
  f.Transact([&](LeaseTransaction& t) {
    for (const Lease& lease : {dead, reused, live}) ASSERT_TRUE(t.AddLease(lease).ok());
    std::vector<Lease> leases = t.LiveLeases(RealFacts());
    ASSERT_EQ(leases.size(), 1u);
    EXPECT_EQ(leases[0].id, live.id);
    EXPECT_EQ(t.ReadLeases().size(), 1u) << "dead lease files of our own are removed";
  });
}

TEST(LeaseStore, HostileFilesAreSkippedWithAMessage) {
  Fixture f;
  Lease good = LeaseOn("GPU-good");
  f.Transact([&](LeaseTransaction& t) { ASSERT_TRUE(t.AddLease(good).ok()); });
  std::string dir = f.tmp / "state/leases";
  std::string valid_text = LeaseToJson(LeaseOn("GPU-x"));
  f.tmp.Write("state/leases/garbage.json", "\x01\x02 not json at all");
  f.tmp.Write("state/leases/truncated.json", valid_text.substr(0, valid_text.size() / 2));
  f.tmp.Write("state/leases/huge.json", std::string(10 << 20, ' '));
  f.tmp.Write("state/leases/README", "not a lease");
  f.tmp.Write("state/leases/\x1b[2Jx\n.json", "{}");
  Lease renamed = LeaseOn("GPU-y");
  f.tmp.Write("state/leases/other-name.json", LeaseToJson(renamed));
  f.tmp.Write("outside.json", valid_text);
  ASSERT_EQ(symlink((f.tmp / "outside.json").c_str(), (dir + "/link.json").c_str()), 0);
  ASSERT_EQ(mkfifo((dir + "/fifo.json").c_str(), 0644), 0);
  ASSERT_EQ(mkdir((dir + "/dir.json").c_str(), 0755), 0);

  f.Transact([&](LeaseTransaction& t) {
    std::vector<Lease> leases = t.LiveLeases(RealFacts());
    ASSERT_EQ(leases.size(), 1u);
    EXPECT_EQ(leases[0].id, good.id);
  });
  EXPECT_TRUE(f.Diagnosed("garbage.json", "not valid JSON"));
  EXPECT_TRUE(f.Diagnosed("truncated.json", "not valid JSON"));
  EXPECT_TRUE(f.Diagnosed("huge.json", "more than"));
  EXPECT_TRUE(f.Diagnosed("README", "not a record file name"));
  EXPECT_TRUE(f.Diagnosed("?[2Jx?.json", "no format_version")) << "control characters replaced";
  EXPECT_TRUE(f.Diagnosed("other-name.json", "not the one its name says"));
  EXPECT_TRUE(f.Diagnosed("link.json", "symbolic link"));
  EXPECT_TRUE(f.Diagnosed("fifo.json", "not a regular file"));
  EXPECT_TRUE(f.Diagnosed("dir.json", "not a regular file"));
  std::ifstream outside(f.tmp / "outside.json");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(outside), {}), valid_text);
}

// read(2) calls this process has made (/proc/self/io): what a read of the
// records costs beyond the listing.
uint64_t ReadCalls() {
  std::ifstream io("/proc/self/io");
  std::string key;
  uint64_t value = 0;
  while (io >> key >> value) {
    if (key == "syscr:") return value;
  }
  ADD_FAILURE() << "no syscr in /proc/self/io";
  return 0;
}

// Every lease file, in a transaction of its own of `store`, whose caches
// last from one to the next.
std::vector<Lease> ReadLeasesOf(const LeaseStore& store) {
  std::vector<Lease> leases;
  EXPECT_TRUE(store
                  .Transact([&](LeaseTransaction& t) -> Status {
                    leases = t.ReadLeases();
                    return Ok{};
                  })
                  .ok());
  return leases;
}

TEST(LeaseStore, AnUnchangedRecordIsReadOnceAndItsVerdictKept) {
  Fixture f;
  Result<LeaseStore> store = f.Open();
  ASSERT_TRUE(store.ok()) << store.error().message;
  Lease good = LeaseOn("GPU-good");
  ASSERT_TRUE(store->Transact([&](LeaseTransaction& t) { return t.AddLease(good); }).ok());
  for (int i = 0; i < 50; ++i)
    f.tmp.Write(fmt::format("state/leases/junk{}.json", i), std::string(8000, '{'));
  auto read_leases = [&] { return ReadLeasesOf(*store); };
  const uint64_t before_first = ReadCalls();
  ASSERT_EQ(read_leases().size(), 1u);
  const uint64_t first = ReadCalls() - before_first;
  EXPECT_GE(first, 51u) << "each file read";
  f.diagnostics.clear();
  const uint64_t before_second = ReadCalls();
  std::vector<Lease> again = read_leases();
  const uint64_t second = ReadCalls() - before_second;
  const uint64_t before_nothing = ReadCalls();
  const uint64_t reading_io_itself = ReadCalls() - before_nothing;
  EXPECT_EQ(second, reading_io_itself) << "nothing read again";
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].id, good.id);
  EXPECT_EQ(f.diagnostics.size(), 50u) << "each skipped file still said under -v";
  EXPECT_TRUE(f.Diagnosed("junk7.json", "not valid JSON"));
}

TEST(LeaseStore, ARecordChangedInPlaceIsReadAgain) {
  Fixture f;
  Result<LeaseStore> store = f.Open();
  ASSERT_TRUE(store.ok()) << store.error().message;
  Lease lease = LeaseOn("GPU-a");
  lease.command = "first";
  const std::string name = "state/leases/" + lease.id + ".json";
  f.tmp.Write(name, LeaseToJson(lease));
  auto read_leases = [&] { return ReadLeasesOf(*store); };
  // Rewritten through the same inode, at the same size, its times set apart
  // as a later write's would be.
  auto rewrite_in_place = [&](const std::string& text, int64_t seconds) {
    std::ofstream(f.tmp / name, std::ios::in | std::ios::out) << text;
    const timespec times[2] = {{seconds, 0}, {seconds, 0}};
    ASSERT_EQ(utimensat(AT_FDCWD, (f.tmp / name).c_str(), times, 0), 0);
  };
  ASSERT_EQ(read_leases().at(0).command, "first");
  lease.command = "other";
  rewrite_in_place(LeaseToJson(lease), 1000);
  ASSERT_EQ(read_leases().at(0).command, "other");
  std::string junk(LeaseToJson(lease).size(), '{');
  rewrite_in_place(junk, 2000);
  EXPECT_TRUE(read_leases().empty());
  EXPECT_TRUE(f.Diagnosed(lease.id + ".json", "not valid JSON"));
  lease.command = "again";
  rewrite_in_place(LeaseToJson(lease), 3000);
  ASSERT_EQ(read_leases().at(0).command, "again");
  // Replaced by another file under the same name.
  lease.command = "renamed over";
  f.tmp.Write("state/leases/new", LeaseToJson(lease));
  ASSERT_EQ(rename((f.tmp / "state/leases/new").c_str(), (f.tmp / name).c_str()), 0);
  ASSERT_EQ(read_leases().at(0).command, "renamed over");
}

// Root's ticket held by `holder`, then `reader` run as nobody (who cannot
// remove it) in a child process through a store opened once: its status.
int ReadRootsTicketAsNobody(Fixture& f, const ProcessIdentity& holder,
                            const std::function<int(const LeaseStore&)>& reader) {
  QueueTicket roots{"", 0, holder, 0, "root", "cmd", "1 GPU", 1};
  f.Transact([&](LeaseTransaction& t) { ASSERT_TRUE(t.TakeTicket(roots).ok()); });
  Result<LeaseStore> store = f.Open();
  if (!store.ok()) return 100;
  return RunInChild([&] { return reader(*store); }, kNobody);
}

TEST(LeaseStore, ADeadTicketLeftInPlaceIsNotJudgedAgain) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to act as another user";
  Fixture f;
  int code = ReadRootsTicketAsNobody(f, testing::DeadProcess(), [&](const LeaseStore& store) {
    int asked = 0;
    LivenessFacts facts = RealFacts();
    facts.process_start_time = [&](int pid) {
      ++asked;
      return StartTime(pid);
    };
    size_t live = 1;
    for (int read = 0; read < 3; ++read) {
      Status status = store.Transact([&](LeaseTransaction& t) -> Status {
        live = t.LiveTickets(facts).size();
        return Ok{};
      });
      if (!status.ok() || live != 0) return 11;
    }
    // Its one holder asked after once; the file stays, root's.
    return asked == 1 ? 0 : 20 + std::min(asked, 9);
  });
  EXPECT_EQ(code, 0);
  f.Transact([&](LeaseTransaction& t) {
    EXPECT_EQ(t.ReadTickets().size(), 1u) << "left for root to remove";
  });
}

TEST(LeaseStore, ATicketWhoseProcessesProcCouldNotReadIsJudgedAgain) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to act as another user";
  Fixture f;
  testing::LiveChild holder;  // root's, alive throughout
  int code = ReadRootsTicketAsNobody(f, holder.identity(), [&](const LeaseStore& store) {
    int asked = 0;
    LivenessFacts facts = RealFacts();
    // /proc answers nothing for it at first (out of descriptors, say).
    facts.process_start_time = [&](int pid) -> std::optional<uint64_t> {
      return ++asked == 1 ? std::nullopt : StartTime(pid);
    };
    size_t first = 1;
    size_t second = 0;
    Status status = store.Transact([&](LeaseTransaction& t) -> Status {
      first = t.LiveTickets(facts).size();
      second = t.LiveTickets(facts).size();
      return Ok{};
    });
    return status.ok() && first == 0 && second == 1 ? 0 : 10;
  });
  EXPECT_EQ(code, 0) << "a ticket of a live process is asked about again, and lives";
}

TEST(LeaseStore, ALeaseMustBeOwnedByTheUidItClaims) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to chown";
  Fixture f;
  ASSERT_TRUE(f.Open().ok());
  Lease forged = LeaseOn("GPU-a");  // claims uid 0
  forged.id = "forged";
  Lease honest = LeaseOn("GPU-b");
  honest.id = "honest";
  honest.uid = kNobody;
  for (const Lease& lease : {forged, honest}) {
    std::string path = f.tmp / ("state/leases/" + lease.id + ".json");
    f.tmp.Write("state/leases/" + lease.id + ".json", LeaseToJson(lease));
    ASSERT_EQ(chown(path.c_str(), kNobody, kNobody), 0);
  }
  f.Transact([&](LeaseTransaction& t) {
    // Read, not judged live: the honest lease names this (root) process.
    std::vector<Lease> leases = t.ReadLeases();
    ASSERT_EQ(leases.size(), 1u);
    EXPECT_EQ(leases[0].id, "honest");
  });
  EXPECT_TRUE(f.Diagnosed("forged.json", "claims uid 0 but is owned by uid 65534 (forged)"));
}

TEST(LeaseStore, ARecordNamesTheUserWhoOwnsItWhateverItsTextSays) {
  Fixture f;
  Lease lease = LeaseOn("GPU-a");
  lease.user = "someone-else";
  QueueTicket ticket{"", 0, Self(), geteuid(), "someone-else", "cmd", "1 GPU", 1};
  f.Transact([&](LeaseTransaction& t) {
    ASSERT_TRUE(t.AddLease(lease).ok());
    ASSERT_TRUE(t.TakeTicket(ticket).ok());
  });
  f.Transact([&](LeaseTransaction& t) {
    std::vector<Lease> leases = t.ReadLeases();
    ASSERT_EQ(leases.size(), 1u);
    EXPECT_EQ(leases[0].user, UserName(geteuid()));
    std::vector<QueueTicket> tickets = t.ReadTickets();
    ASSERT_EQ(tickets.size(), 1u);
    EXPECT_EQ(tickets[0].user, UserName(geteuid()));
  });
}

TEST(LeaseStore, ATicketNamingAProcessOfAnotherUserIsDead) {
  // nobody's ticket naming a root process (here, this test) as its holder
  // and waiter: it would head the queue for as long as that process lives.
  if (geteuid() != 0) GTEST_SKIP() << "needs root to chown";
  Fixture f;
  ASSERT_TRUE(f.Open().ok());
  QueueTicket planted{"planted", 1, Self(), kNobody, "nobody", "hog", "1 GPU", 1};
  planted.waiter = Self();
  std::string name = TicketFileName(planted);
  f.tmp.Write("state/queue/" + name, TicketToJson(planted));
  ASSERT_EQ(chown((f.tmp / ("state/queue/" + name)).c_str(), kNobody, kNobody), 0);
  f.Transact([&](LeaseTransaction& t) {
    EXPECT_EQ(t.ReadTickets().size(), 1u);
    EXPECT_TRUE(t.LiveTickets(RealFacts()).empty());
    Result<Place> place = PlaceOf(t, std::nullopt, RealFacts());
    ASSERT_TRUE(place.ok());
    EXPECT_FALSE(place->just_ahead.has_value()) << "a newcomer is first";
  });
}

TEST(LeaseStore, ATicketCountsOnlyWhileAGpupinWaitsForIt) {
  // A ticket naming a live process of its own user that is no gpupin (a
  // `sleep`) holds up nobody, as holder and waiter or as holder alone.
  Fixture f;
  ASSERT_TRUE(f.Open().ok());
  LivenessFacts facts = RealFacts();
  testing::LiveChild waiter;
  testing::LiveChild holder_and_waiter;
  bool children_are_gpupin = false;
  facts.runs_gpupin = [&](int pid) {
    return children_are_gpupin &&
           (pid == waiter.identity().pid || pid == holder_and_waiter.identity().pid);
  };
  f.Transact([&](LeaseTransaction& t) {
    QueueTicket named{"", 0, Self(), geteuid(), UserName(geteuid()), "sleep", "1 GPU", 1};
    named.waiter = waiter.identity();
    ASSERT_TRUE(t.TakeTicket(named).ok());
    QueueTicket holder_only{
        "", 0, holder_and_waiter.identity(), geteuid(), UserName(geteuid()), "sleep", "1 GPU", 1};
    ASSERT_TRUE(t.TakeTicket(holder_only).ok());
    Result<Place> place = PlaceOf(t, std::nullopt, facts);
    ASSERT_TRUE(place.ok());
    EXPECT_FALSE(place->just_ahead.has_value()) << "no gpupin waits: a newcomer is first";
  });
  // Passed over, not removed: their processes live, and a waiter of another
  // name may be a gpupin (run through a link) that counts for a gpupin of
  // its own name.
  children_are_gpupin = true;
  f.Transact([&](LeaseTransaction& t) {
    EXPECT_EQ(t.LiveTickets(facts).size(), 2u) << "the tickets a gpupin waits for count again";
  });
}

TEST(LeaseStore, OneUsersRecordsAreReadUpToTheBoundGpupinWritesUpTo) {
  Fixture f;
  ASSERT_TRUE(f.Open().ok());
  // Planted by hand, past what gpupin would write for one user.
  for (size_t i = 0; i < kMaxRecordsPerUser + 10; ++i) {
    Lease lease = LeaseOn("GPU-junk");
    f.tmp.Write("state/leases/" + lease.id + ".json", LeaseToJson(lease));
  }
  f.Transact([&](LeaseTransaction& t) {
    EXPECT_EQ(t.ReadLeases().size(), kMaxRecordsPerUser);
    Status refused = t.AddLease(LeaseOn("GPU-a"));
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.error().message.find("the most gpupin keeps for one user"), std::string::npos)
        << refused.error().message;
  });
  EXPECT_TRUE(f.Diagnosed("leases", "beyond the 1024 gpupin writes for one user"));
}

TEST(LeaseStore, ARecordLargerThanGpupinWritesIsSkippedUnread) {
  Fixture f;
  ASSERT_TRUE(f.Open().ok());
  Lease lease = LeaseOn("GPU-a");
  lease.user = std::string(kMaxRecordBytes, 'x');
  f.tmp.Write("state/leases/" + lease.id + ".json", LeaseToJson(lease));
  f.Transact([&](LeaseTransaction& t) {
    EXPECT_TRUE(t.ReadLeases().empty());
    Status refused = t.AddLease(lease);
    ASSERT_FALSE(refused.ok()) << "gpupin writes no record its readers would skip";
  });
  EXPECT_TRUE(f.Diagnosed(lease.id, "more than the 16384 allowed"));
}

TEST(LeaseStore, AnotherUsersLeaseCanBeReadButNotRemoved) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to act as another user";
  Fixture f;
  ProcessIdentity dead_holder = testing::DeadProcess();
  Lease roots_live = LeaseOn("GPU-a");
  Lease roots_dead = LeaseOn("GPU-b", dead_holder);
  f.Transact([&](LeaseTransaction& t) {
    ASSERT_TRUE(t.AddLease(roots_live).ok());
    ASSERT_TRUE(t.AddLease(roots_dead).ok());
  });
  Result<LeaseStore> store = f.Open();
  ASSERT_TRUE(store.ok());
  int code = RunInChild(
      [&] {
        int result = 10;
        Status status = store->Transact([&](LeaseTransaction& t) -> Status {
          std::vector<Lease> live = t.LiveLeases(RealFacts());  // cannot prune root's dead one
          Status removed = t.RemoveLease(roots_live.id);
          Lease mine = LeaseOn("GPU-c");
          mine.uid = kNobody;
          bool ok = live.size() == 1 && live[0].id == roots_live.id && !removed.ok() &&
                    removed.error().message.find("another user") != std::string::npos &&
                    t.AddLease(mine).ok() && t.ReadLeases().size() == 3;
          result = ok ? 0 : 11;
          return Ok{};
        });
        return status.ok() ? result : 12;
      },
      kNobody);
  EXPECT_EQ(code, 0);
  f.Transact([&](LeaseTransaction& t) {
    EXPECT_EQ(t.ReadLeases().size(), 3u);
    EXPECT_EQ(t.LiveLeases(RealFacts()).size(), 1u) << "nobody's lease died with its holder";
    EXPECT_EQ(t.ReadLeases().size(), 1u) << "root prunes every dead lease";
  });
}

TEST(LeaseStore, ATicketForNoCardIsNotWritten) {
  Fixture f;
  f.Transact([&](LeaseTransaction& t) {
    QueueTicket ticket{"", 0, Self(), geteuid(), UserName(geteuid()), "cmd", "0 GPUs", 0};
    EXPECT_FALSE(t.TakeTicket(ticket).ok());
    EXPECT_TRUE(t.ReadTickets().empty());
  });
}

TEST(LeaseStore, TicketsAreNumberedInOrderAndDeadOnesSkipped) {
  Fixture f;
  ProcessIdentity dead_holder = testing::DeadProcess();
  testing::LiveChild third_waiter;
  f.Transact([&](LeaseTransaction& t) {
    QueueTicket ticket{"", 0, Self(), geteuid(), UserName(geteuid()), "cmd", "1 GPU", 1};
    Result<QueueTicket> first = t.TakeTicket(ticket);
    ticket.holder = dead_holder;
    Result<QueueTicket> dead = t.TakeTicket(ticket);
    ticket.holder = third_waiter.identity();
    Result<QueueTicket> third = t.TakeTicket(ticket);
    ASSERT_TRUE(first.ok() && dead.ok() && third.ok());
    EXPECT_LT(first->seq, dead->seq);
    EXPECT_LT(dead->seq, third->seq);
    EXPECT_EQ(TicketFileName(*third), fmt::format("{}-{}.json", third->seq, third->id));
    std::vector<QueueTicket> all = t.ReadTickets();
    ASSERT_EQ(all.size(), 3u);
    EXPECT_EQ(all[2], *third);

    Result<Place> place = PlaceOf(t, *third, RealFacts());
    ASSERT_TRUE(place.ok()) << place.error().message;
    EXPECT_EQ(place->ahead, 1u) << "the dead ticket just ahead is read, removed, not counted";
    EXPECT_EQ(place->just_ahead, *first);
    EXPECT_EQ(place->head, *first);
    EXPECT_EQ(t.ReadTickets().size(), 2u) << "the dead ticket file is removed";
    place = PlaceOf(t, *first, RealFacts());
    ASSERT_TRUE(place.ok());
    EXPECT_EQ(place->ahead, 0u);
    EXPECT_FALSE(place->just_ahead.has_value());
    EXPECT_FALSE(PlaceOf(t, *dead, RealFacts()).ok()) << "a removed ticket has no place";

    place = PlaceOf(t, std::nullopt, RealFacts());  // a newcomer
    ASSERT_TRUE(place.ok());
    EXPECT_EQ(place->ahead, 2u);
    EXPECT_EQ(place->just_ahead, *third);
    EXPECT_EQ(place->head, *first);

    ASSERT_TRUE(t.RemoveTicket(*first).ok());
    place = PlaceOf(t, *third, RealFacts());
    ASSERT_TRUE(place.ok());
    EXPECT_FALSE(place->just_ahead.has_value()) << "third is the head now";
    EXPECT_EQ(t.LiveTickets(RealFacts()), std::vector<QueueTicket>{*third});
  });
}

// A job suspended with Ctrl-Z while it waited must not hold up everyone
// behind it, nor lose its place: it is passed over only while stopped.
TEST(LeaseStore, AWaiterLeavesItsOwnUsersTicketsBehindItUnread) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to write another user's ticket";
  Fixture f;
  QueueTicket ticket{"", 0, Self(), geteuid(), UserName(geteuid()), "cmd", "1 GPU", 1};
  QueueTicket mine;
  QueueTicket own_dead_behind;
  f.Transact([&](LeaseTransaction& t) {
    mine = t.TakeTicket(ticket).value();
    ticket.holder = testing::DeadProcess();
    own_dead_behind = t.TakeTicket(ticket).value();
    ticket.holder = Self();
    (void)t.TakeTicket(ticket).value();
  });
  // Another user's ticket behind ours, naming a process of root's: dead
  // to any reader, and root may remove it.
  QueueTicket others{"", mine.seq + 10, Self(), kNobody, "nobody", "cmd", "1 GPU", 1};
  others.id = NewRecordId(Self());
  const std::string others_name = "state/queue/" + TicketFileName(others);
  f.tmp.Write(others_name, TicketToJson(others));
  ASSERT_EQ(chown((f.tmp / others_name).c_str(), kNobody, kNobody), 0);
  f.Transact([&](LeaseTransaction& t) {
    Result<std::vector<QueueTicket>> waiting = t.WaitingTickets(mine, RealFacts());
    ASSERT_TRUE(waiting.ok()) << waiting.error().message;
    EXPECT_EQ(*waiting, std::vector<QueueTicket>{mine});
    std::vector<QueueTicket> left = t.ReadTickets();
    EXPECT_EQ(left.size(), 3u) << "another user's dead ticket behind was read and removed";
    EXPECT_TRUE(std::find(left.begin(), left.end(), own_dead_behind) != left.end())
        << "our own user's dead ticket behind was not even read";
  });
}

TEST(LeaseStore, AWaitingGpupinHoldsOnePlaceWhateverCopiesNameIt) {
  Fixture f;
  testing::LiveChild waiter;
  testing::LiveChild other_waiter;
  QueueTicket real{"", 0, Self(), geteuid(), UserName(geteuid()), "cmd", "1 GPU", 1};
  real.waiter = waiter.identity();
  QueueTicket other;
  f.Transact([&](LeaseTransaction& t) {
    real = t.TakeTicket(real).value();
    // Copies naming the same waiting gpupin, under ids of their own.
    QueueTicket copy = real;
    copy.id = "";
    (void)t.TakeTicket(copy).value();
    (void)t.TakeTicket(copy).value();
    other = t.TakeTicket({"", 0, other_waiter.identity(), geteuid(), UserName(geteuid()), "cmd",
                          "1 GPU", 1})
                .value();
  });
  f.Transact([&](LeaseTransaction& t) {
    EXPECT_EQ(t.LiveTickets(RealFacts()), (std::vector<QueueTicket>{real, other}));
    Result<Place> place = PlaceOf(t, other, RealFacts());
    ASSERT_TRUE(place.ok()) << place.error().message;
    EXPECT_EQ(place->ahead, 1u) << "the copies hold no place";
    place = PlaceOf(t, std::nullopt, RealFacts());
    ASSERT_TRUE(place.ok());
    EXPECT_EQ(place->ahead, 2u);
    EXPECT_EQ(t.ReadTickets().size(), 4u) << "passed over, not removed: their waiter lives";
  });
}

TEST(LeaseStore, ACopyNamingOurWaiterAheadOfOurTicketIsRemovedByUs) {
  Fixture f;
  QueueTicket copy{"", 0, Self(), geteuid(), UserName(geteuid()), "copy", "1 GPU", 1};
  f.Transact([&](LeaseTransaction& t) { copy = t.TakeTicket(copy).value(); });
  std::this_thread::sleep_for(30ms);     // past the file system's clock tick
  QueueTicket ours = f.TakeOwnTicket();  // names this process too
  f.Transact([&](LeaseTransaction& t) {
    Result<Place> place = PlaceOf(t, ours, RealFacts());
    ASSERT_TRUE(place.ok()) << place.error().message;
    EXPECT_EQ(place->ahead, 0u) << "the copy ahead is no place of anyone's";
    EXPECT_EQ(t.ReadTickets(), std::vector<QueueTicket>{ours}) << "and it is gone for every reader";
  });
}

TEST(LeaseStore, AStoppedWaiterIsPassedOverAndKeepsItsPlace) {
  Fixture f;
  pid_t child = fork();
  if (child == 0) {
    for (;;) pause();
  }
  ASSERT_GT(child, 0);
  int status = 0;
  ASSERT_EQ(kill(child, SIGSTOP), 0);
  ASSERT_EQ(waitpid(child, &status, WUNTRACED), child);
  ASSERT_TRUE(WIFSTOPPED(status));
  const ProcessIdentity suspended{child, StartTime(child).value_or(0)};
  const StoppedCheck stopped = [](int pid) { return ProcessStopped(ProcFs(), pid); };
  f.Transact([&](LeaseTransaction& t) {
    Result<QueueTicket> first =
        t.TakeTicket({"", 0, suspended, geteuid(), UserName(geteuid()), "suspended", "1 GPU", 1});
    Result<QueueTicket> second =
        t.TakeTicket({"", 0, Self(), geteuid(), UserName(geteuid()), "waiting", "1 GPU", 1});
    ASSERT_TRUE(first.ok() && second.ok());

    Result<Place> place = PlaceOf(t, *second, RealFacts(), stopped);
    ASSERT_TRUE(place.ok()) << place.error().message;
    EXPECT_FALSE(place->just_ahead.has_value()) << "the stopped ticket does not hold us up";
    EXPECT_EQ(place->ahead, 0u);
    EXPECT_EQ(t.ReadTickets().size(), 2u) << "the stopped ticket is kept";
    place = PlaceOf(t, std::nullopt, RealFacts(), stopped);
    ASSERT_TRUE(place.ok());
    EXPECT_EQ(place->just_ahead, *second);
    EXPECT_EQ(place->head, *second);

    ASSERT_EQ(kill(child, SIGCONT), 0);
    ASSERT_EQ(waitpid(child, &status, WCONTINUED), child);
    place = PlaceOf(t, *second, RealFacts(), stopped);
    ASSERT_TRUE(place.ok());
    EXPECT_EQ(place->just_ahead, *first) << "continued, it is ahead of us again";
    EXPECT_EQ(place->ahead, 1u);
  });
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
}

// A `$(gpupin pick --wait)` suspended with Ctrl-Z stops the pick, not its
// shell (the holder): the ticket is stopped all the same.
TEST(LeaseStore, ATicketIsStoppedWhenItsHolderOrItsWaiterIs) {
  QueueTicket ticket{"t-1", 1, {10, 1}, 0, UserName(geteuid()), "pick", "1 GPU", 1};
  const StoppedCheck only_11 = [](int pid) { return pid == 11; };
  EXPECT_FALSE(TicketStopped(ticket, only_11));
  ticket.waiter = ProcessIdentity{11, 1};
  EXPECT_TRUE(TicketStopped(ticket, only_11)) << "its waiter is stopped";
  ticket.holder.pid = 11;
  ticket.waiter = ProcessIdentity{12, 1};
  EXPECT_TRUE(TicketStopped(ticket, only_11)) << "its holder is stopped";
}

// `gpupin pick --wait` queues for its shell: a SIGKILLed pick leaves its
// ticket behind with a live holder, and that ticket must not hold up the
// queue for as long as the shell lives.
TEST(LeaseStore, ATicketWhoseWaiterIsGoneIsDeadThoughItsHolderLives) {
  Fixture f;
  f.Transact([&](LeaseTransaction& t) {
    QueueTicket orphan{"", 0, Self(), geteuid(), UserName(geteuid()), "pick", "1 GPU", 1};
    orphan.waiter = testing::DeadProcess();
    Result<QueueTicket> first = t.TakeTicket(orphan);
    QueueTicket waiting{"", 0, Self(), geteuid(), UserName(geteuid()), "pick", "1 GPU", 1};
    waiting.waiter = Self();
    Result<QueueTicket> second = t.TakeTicket(waiting);
    ASSERT_TRUE(first.ok() && second.ok());

    Result<Place> place = PlaceOf(t, *second, RealFacts());
    ASSERT_TRUE(place.ok()) << place.error().message;
    EXPECT_FALSE(place->just_ahead.has_value()) << "the orphaned ticket does not hold us up";
    EXPECT_EQ(t.ReadTickets(), std::vector<QueueTicket>{*second}) << "and it is removed";
  });
}

TEST(LeaseStore, NudgeWakesTheWaiterWatchingTheTicketAndChangesNothing) {
  Fixture f;
  Result<LeaseStore> store = f.Open();
  ASSERT_TRUE(store.ok());
  QueueTicket ahead = f.TakeOwnTicket();
  ChangeWatch behind = ChangeWatch::ForFile(store->queue_dir(), TicketFileName(ahead));
  Result<int64_t> placed = store->queue_dir().ChangeTimeNs(TicketFileName(ahead));
  ASSERT_TRUE(placed.ok());
  std::this_thread::sleep_for(30ms);  // past the file system's clock tick
  store->Nudge(ahead);
  EXPECT_EQ(behind.Wait(std::chrono::steady_clock::now() + 2s, 10s), WakeReason::kNudged);
  EXPECT_EQ(store->queue_dir().ChangeTimeNs(TicketFileName(ahead)).value(), *placed)
      << "a nudge keeps the ticket's place";
  f.Transact(
      [&](LeaseTransaction& t) { EXPECT_EQ(t.ReadTickets(), std::vector<QueueTicket>{ahead}); });
}

// Any user may write a ticket file of their own under any number: one
// numbered 0, put in place after ours, must not take our place, and one
// claiming the largest number must not stop anyone from queuing.
TEST(LeaseStore, ATicketNumberedAheadOfOthersStillQueuesBehindThem) {
  Fixture f;
  Result<LeaseStore> store = f.Open();
  ASSERT_TRUE(store.ok());
  QueueTicket ours = f.TakeOwnTicket();
  std::this_thread::sleep_for(30ms);  // past the file system's clock tick
  testing::LiveChild forger;
  testing::LiveChild last;
  testing::LiveChild newest;
  QueueTicket forged{"forged0",           0,        forger.identity(), geteuid(),
                     UserName(geteuid()), "cut in", "1 GPU",           1};
  ASSERT_TRUE(
      store->queue_dir().WriteFileAtomic(TicketFileName(forged), TicketToJson(forged)).ok());
  QueueTicket highest{"highest",           kMaxTicketSeq, last.identity(), geteuid(),
                      UserName(geteuid()), "last",        "1 GPU",         1};
  ASSERT_TRUE(
      store->queue_dir().WriteFileAtomic(TicketFileName(highest), TicketToJson(highest)).ok());
  f.Transact([&](LeaseTransaction& t) {
    EXPECT_EQ(t.LiveTickets(RealFacts()), (std::vector<QueueTicket>{ours, forged, highest}));
    Result<Place> place = PlaceOf(t, forged, RealFacts());
    ASSERT_TRUE(place.ok()) << place.error().message;
    EXPECT_EQ(place->ahead, 1u);
    EXPECT_EQ(place->head, ours);
    place = PlaceOf(t, ours, RealFacts());
    ASSERT_TRUE(place.ok());
    EXPECT_EQ(place->ahead, 0u) << "ours is still the head";
    std::this_thread::sleep_for(30ms);
    Result<QueueTicket> after =
        t.TakeTicket({"", 0, newest.identity(), geteuid(), UserName(geteuid()), "cmd", "1 GPU", 1});
    ASSERT_TRUE(after.ok()) << after.error().message;
    EXPECT_EQ(after->seq, kMaxTicketSeq);
    place = PlaceOf(t, *after, RealFacts());
    ASSERT_TRUE(place.ok());
    EXPECT_EQ(place->ahead, 3u) << "the newest ticket is the last";
  });
}

TEST(LeaseStore, ATicketMustSitUnderTheNameOfItsPlace) {
  Fixture f;
  Result<LeaseStore> store = f.Open();
  ASSERT_TRUE(store.ok());
  QueueTicket real = f.TakeOwnTicket();
  // A copy of a valid ticket under a better place in the queue, and files
  // whose names cannot be tickets: none of them is a ticket.
  std::string text = TicketToJson(real);
  ASSERT_TRUE(store->queue_dir().WriteFileAtomic(fmt::format("0-{}.json", real.id), text).ok());
  ASSERT_TRUE(store->queue_dir().WriteFileAtomic("x-abc.json", text).ok());
  ASSERT_TRUE(store->queue_dir().WriteFileAtomic("99999999999999999999-abc.json", text).ok());
  f.Transact([&](LeaseTransaction& t) {
    EXPECT_EQ(t.ReadTickets(), std::vector<QueueTicket>{real});
    Result<Place> place = PlaceOf(t, std::nullopt, RealFacts());
    ASSERT_TRUE(place.ok());
    EXPECT_EQ(place->just_ahead, real);
    EXPECT_EQ(place->head, real);
  });
  EXPECT_TRUE(f.Diagnosed(fmt::format("0-{}.json", real.id), "not the one its name says"));
  EXPECT_TRUE(f.Diagnosed("x-abc.json", "not a ticket file name"));
  EXPECT_TRUE(f.Diagnosed("99999999999999999999-abc.json", "not a ticket file name"));
}

TEST(LeaseStore, QueueMayHaveTicketsSeesAnyEntryWithoutTheLock) {
  Fixture f;
  Result<LeaseStore> store = f.Open();
  ASSERT_TRUE(store.ok()) << store.error().message;
  EXPECT_FALSE(store->QueueMayHaveTickets());
  QueueTicket ticket = f.TakeOwnTicket();
  EXPECT_TRUE(store->QueueMayHaveTickets());
  f.Transact([&](LeaseTransaction& t) { ASSERT_TRUE(t.RemoveTicket(ticket).ok()); });
  EXPECT_FALSE(store->QueueMayHaveTickets());
}

// --- Many processes at once -------------------------------------------------

constexpr int kCards = 4;

std::string CardUuid(int card) { return "GPU-card" + std::to_string(card); }

// One line to the shared pipe; lines below PIPE_BUF are written atomically.
void Report(int fd, const std::string& line) { (void)!write(fd, line.data(), line.size()); }

// A child of the concurrency test: waits for the start signal, takes the
// lowest free card, holds it ~50 ms, gives it back.
int Contender(int start_fd, int report_fd, const std::string& state) {
  char byte;
  while (read(start_fd, &byte, 1) < 0 && errno == EINTR) {
  }
  Result<StateDir> root = StateDir::Open(state);
  if (!root) return 20;
  Result<LeaseStore> store = LeaseStore::Open(std::move(*root));
  if (!store) return 21;
  ChangeWatch watch = ChangeWatch::ForDirectories({&store->leases_dir()});
  auto deadline = std::chrono::steady_clock::now() + 60s;
  while (true) {
    int card = -1;
    std::string lease_id;
    std::vector<ProcessIdentity> holders;
    Status status = store->Transact([&](LeaseTransaction& t) -> Status {
      std::set<std::string> taken;
      for (const Lease& lease : t.LiveLeases(RealFacts())) {
        taken.insert(lease.gpu_uuids.begin(), lease.gpu_uuids.end());
        holders.push_back(lease.holder);
      }
      for (int c = 0; c < kCards && card < 0; ++c) {
        if (!taken.contains(CardUuid(c))) card = c;
      }
      if (card < 0) return Ok{};
      Lease lease = LeaseOn(CardUuid(card));
      lease_id = lease.id;
      Status added = t.AddLease(lease);
      if (added) Report(report_fd, fmt::format("A {} {} {}\n", getpid(), card, MonotonicNs()));
      return added;
    });
    if (!status) return 22;
    if (card >= 0) {
      std::this_thread::sleep_for(50ms);
      Report(report_fd, fmt::format("R {} {} {}\n", getpid(), card, MonotonicNs()));
      status = store->Transact([&](LeaseTransaction& t) { return t.RemoveLease(lease_id); });
      return status ? 0 : 23;
    }
    watch.WatchProcesses(holders, &StartTime);
    if (watch.Wait(deadline, 10s) == WakeReason::kDeadline) return 24;
  }
}

struct Interval {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  pid_t pid = 0;
  bool killed = false;
};

TEST(LeaseStoreConcurrency, NoCardIsEverHeldTwiceEvenWhenHoldersAreKilled) {
  constexpr int kProcesses = 32;
  constexpr int kKilled = 3;
  TempDir tmp;
  int start[2], report[2];
  ASSERT_EQ(pipe(start), 0);
  ASSERT_EQ(pipe(report), 0);
  std::vector<pid_t> children;
  for (int i = 0; i < kProcesses; ++i) {
    pid_t pid = fork();
    if (pid == 0) {
      close(start[1]);
      close(report[0]);
      _exit(Contender(start[0], report[1], tmp / "state"));
    }
    children.push_back(pid);
  }
  close(start[0]);
  close(report[1]);
  close(start[1]);  // the barrier: every child's read returns at once

  std::map<pid_t, Interval> intervals;  // by holder
  std::map<pid_t, int> card_of;
  std::map<int, std::vector<int64_t>> kills_by_card;
  std::string pending;
  char buffer[4096];
  ssize_t n;
  while ((n = read(report[0], buffer, sizeof buffer)) != 0) {
    if (n < 0 && errno == EINTR) continue;
    ASSERT_GT(n, 0);
    pending.append(buffer, static_cast<size_t>(n));
    size_t newline;
    while ((newline = pending.find('\n')) != std::string::npos) {
      std::istringstream line(pending.substr(0, newline));
      pending.erase(0, newline + 1);
      char kind;
      pid_t pid;
      int card;
      int64_t ns;
      line >> kind >> pid >> card >> ns;
      if (kind == 'A') {
        intervals[pid] = {ns, 0, pid, false};
        card_of[pid] = card;
        if (static_cast<int>(kills_by_card.size()) < kKilled && !kills_by_card.contains(card)) {
          // Kill mid-hold. Its interval ends before the kill: whoever takes
          // the card next must start after the holder is dead.
          intervals[pid].end_ns = MonotonicNs();
          intervals[pid].killed = true;
          kills_by_card[card].push_back(intervals[pid].end_ns);
          kill(pid, SIGKILL);
        }
      } else if (!intervals[pid].killed) {
        intervals[pid].end_ns = ns;
      }
    }
  }
  int exited = 0, killed = 0;
  for (pid_t pid : children) {
    int status = 0;
    waitpid(pid, &status, 0);
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) ++killed;
    if (WIFEXITED(status)) {
      EXPECT_EQ(WEXITSTATUS(status), 0) << "child " << pid;
      ++exited;
    }
  }
  EXPECT_EQ(killed, kKilled);
  EXPECT_EQ(exited, kProcesses - kKilled);
  ASSERT_EQ(intervals.size(), static_cast<size_t>(kProcesses));

  std::map<int, std::vector<Interval>> by_card;
  for (const auto& [pid, interval] : intervals) by_card[card_of[pid]].push_back(interval);
  for (auto& [card, list] : by_card) {
    std::sort(list.begin(), list.end(),
              [](const Interval& a, const Interval& b) { return a.start_ns < b.start_ns; });
    for (size_t i = 1; i < list.size(); ++i) {
      EXPECT_GT(list[i].start_ns, list[i - 1].end_ns)
          << "card " << card << " held by " << list[i - 1].pid << " and " << list[i].pid;
      if (list[i - 1].killed) {
        // "Immediately": long before the 10 s poll the contenders use.
        EXPECT_LT(list[i].start_ns - list[i - 1].end_ns, 2'000'000'000)
            << "card " << card << " stayed blocked after its holder was killed";
      }
    }
  }
  for (const auto& [card, kills] : kills_by_card) {
    EXPECT_GT(by_card[card].size(), 1u) << "card " << card << " was never taken again";
  }
}

// Waiters arrive one after another while the only card is held; they must
// get it in arrival order, skipping one that was SIGKILLed while waiting.
int Waiter(int index, int report_fd, const std::string& state) {
  Result<StateDir> root = StateDir::Open(state);
  if (!root) return 30;
  Result<LeaseStore> store = LeaseStore::Open(std::move(*root));
  if (!store) return 31;
  ChangeWatch watch = ChangeWatch::ForDirectories({&store->leases_dir(), &store->queue_dir()});
  QueueTicket mine;
  Status status = store->Transact([&](LeaseTransaction& t) -> Status {
    Result<QueueTicket> ticket =
        t.TakeTicket({"", 0, Self(), geteuid(), UserName(geteuid()), "waiter", "1 GPU", 1});
    if (!ticket) return ticket.error();
    mine = *ticket;
    return Ok{};
  });
  if (!status) return 32;
  Report(report_fd, fmt::format("T {}\n", index));
  auto deadline = std::chrono::steady_clock::now() + 60s;
  std::string lease_id;
  while (lease_id.empty()) {
    std::vector<ProcessIdentity> watched;
    status = store->Transact([&](LeaseTransaction& t) -> Status {
      Result<Place> place = PlaceOf(t, mine, RealFacts());
      if (!place) return place.error();
      std::vector<Lease> leases = t.LiveLeases(RealFacts());
      if (place->just_ahead) watched.push_back(place->just_ahead->holder);
      for (const Lease& lease : leases) watched.push_back(lease.holder);
      if (place->just_ahead || !leases.empty()) return Ok{};
      Lease lease = LeaseOn("GPU-only");
      if (Status added = t.AddLease(lease); !added) return added;
      lease_id = lease.id;
      Report(report_fd, fmt::format("G {}\n", index));
      return t.RemoveTicket(mine);
    });
    if (!status) return 33;
    if (!lease_id.empty()) break;
    watch.WatchProcesses(watched, &StartTime);
    if (watch.Wait(deadline, 10s) == WakeReason::kDeadline) return 34;
  }
  std::this_thread::sleep_for(20ms);
  status = store->Transact([&](LeaseTransaction& t) { return t.RemoveLease(lease_id); });
  return status ? 0 : 35;
}

TEST(LeaseStoreQueue, WaitersAreServedFirstComeFirstServed) {
  constexpr int kWaiters = 6;
  constexpr int kVictim = 2;
  Fixture f;
  Lease mine = LeaseOn("GPU-only");
  f.Transact([&](LeaseTransaction& t) { ASSERT_TRUE(t.AddLease(mine).ok()); });
  int report[2];
  ASSERT_EQ(pipe(report), 0);
  FILE* lines = fdopen(report[0], "r");
  std::vector<pid_t> waiters;
  char line[64];
  for (int i = 0; i < kWaiters; ++i) {
    pid_t pid = fork();
    if (pid == 0) {
      fclose(lines);
      _exit(Waiter(i, report[1], f.tmp / "state"));
    }
    waiters.push_back(pid);
    // The next one arrives only once this one holds its ticket.
    ASSERT_NE(fgets(line, sizeof line, lines), nullptr);
    EXPECT_EQ(std::string(line), fmt::format("T {}\n", i));
  }
  close(report[1]);
  kill(waiters[kVictim], SIGKILL);
  f.Transact([&](LeaseTransaction& t) { ASSERT_TRUE(t.RemoveLease(mine.id).ok()); });

  std::vector<std::string> served;
  while (fgets(line, sizeof line, lines) != nullptr) served.emplace_back(line);
  fclose(lines);
  for (int i = 0; i < kWaiters; ++i) {
    int status = 0;
    waitpid(waiters[i], &status, 0);
    if (i != kVictim) {
      EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << i;
    }
  }
  EXPECT_EQ(served, (std::vector<std::string>{"G 0\n", "G 1\n", "G 3\n", "G 4\n", "G 5\n"}));
  f.Transact([&](LeaseTransaction& t) {
    EXPECT_TRUE(t.LiveTickets(RealFacts()).empty());
    EXPECT_TRUE(t.ReadTickets().empty()) << "the victim's ticket is cleaned up";
  });
}

// A process that takes the flock on `lock` and passes its descriptor to a
// child that keeps it; then it exits (kExits) or closes its own descriptor
// and stays (kStays). Both are in a process group of the taker's pid, ended
// whole however the test ends: a failed assertion leaves nothing paused.
class LockTaker {
 public:
  enum Then { kExits, kStays };

  LockTaker(const std::string& lock, Then then) {
    int ready[2];
    if (pipe(ready) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      setpgid(0, 0);
      const int fd = open(lock.c_str(), O_RDWR | O_CREAT, 0644);
      if (fd < 0 || flock(fd, LOCK_EX) != 0) _exit(1);
      if (fork() == 0) pause();  // keeps the descriptor
      close(fd);
      const char done = 'x';
      (void)!write(ready[1], &done, 1);
      if (then == kExits) _exit(0);
      pause();
    }
    close(ready[1]);
    char done = 0;
    ready_ = pid_ > 0 && read(ready[0], &done, 1) == 1 &&
             (then == kStays || waitpid(pid_, nullptr, 0) == pid_);
    close(ready[0]);
  }
  ~LockTaker() {
    if (pid_ <= 0) return;
    kill(-pid_, SIGKILL);
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }

  bool ready() const { return ready_; }
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  bool ready_ = false;
};

TEST(LeaseStore, ALockHeldByTheChildOfAGoneProcessIsSaidSo) {
  // /proc/locks keeps the pid of the process that took the lock: here one
  // that exits at once, leaving the descriptor to the child it started.
  Fixture f;
  Result<LeaseStore> store = f.Open();
  ASSERT_TRUE(store.ok()) << store.error().message;
  LockTaker taker(f.tmp / "state/lock", LockTaker::kExits);
  ASSERT_TRUE(taker.ready());
  EXPECT_EQ(store->LockHolder(),
            fmt::format("pid {} (no longer running: a process it started holds the lock open)",
                        taker.pid()));
}

TEST(LeaseStore, ALockPassedOnByALiveProcessIsNotBlamedOnIt) {
  // The pid /proc/locks keeps runs, but no longer holds the lock open: it
  // could be any process that took that pid since.
  Fixture f;
  Result<LeaseStore> store = f.Open();
  ASSERT_TRUE(store.ok()) << store.error().message;
  LockTaker taker(f.tmp / "state/lock", LockTaker::kStays);
  ASSERT_TRUE(taker.ready());
  EXPECT_EQ(store->LockHolder(),
            fmt::format("a process that pid {} passed the lock to (pid {} no longer holds it open)",
                        taker.pid(), taker.pid()));
}

}  // namespace
}  // namespace gpupin
