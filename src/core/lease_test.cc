#include "core/lease.h"

#include <gtest/gtest.h>

namespace gpupin {
namespace {

Lease HeldBy(int pid, uint64_t start) {
  Lease lease;
  lease.id = "l1";
  lease.gpu_uuids = {"GPU-a", "GPU-b"};
  lease.holder = {pid, start};
  return lease;
}

LivenessFacts World(std::map<int, uint64_t> processes, int64_t now_ms = 1000) {
  LivenessFacts facts;
  facts.now_unix_ms = now_ms;
  facts.process_start_time = [processes](int pid) -> std::optional<uint64_t> {
    auto it = processes.find(pid);
    if (it == processes.end()) return std::nullopt;
    return it->second;
  };
  return facts;
}

TEST(EvaluateLease, LiveWhileHolderRuns) {
  EXPECT_EQ(EvaluateLease(HeldBy(10, 555), World({{10, 555}})), LeaseState::kLive);
}

TEST(EvaluateLease, HolderGoneWhenNoSuchProcess) {
  EXPECT_EQ(EvaluateLease(HeldBy(10, 555), World({{11, 555}})), LeaseState::kHolderGone);
}

TEST(EvaluateLease, AHolderHiddenFromThisUserStaysLive) {
  // /proc with hidepid: another user's holder exists but cannot be read.
  LivenessFacts facts = World({});
  facts.process_hidden = [](int pid) { return pid == 10; };
  EXPECT_EQ(EvaluateLease(HeldBy(10, 555), facts), LeaseState::kLive);
  EXPECT_EQ(EvaluateLease(HeldBy(11, 555), facts), LeaseState::kHolderGone);
}

TEST(EvaluateLease, ReusedPidIsNotTheHolder) {
  EXPECT_EQ(EvaluateLease(HeldBy(10, 555), World({{10, 556}})), LeaseState::kHolderGone);
}

TEST(EvaluateLease, AHolderRunningAsAnotherUserIsNotTheHolder) {
  // Anyone may write a lease naming init: it would hold a card for ever.
  LivenessFacts facts = World({{1, 7}, {10, 555}});
  facts.process_uid = [](int pid) -> std::optional<uint32_t> {
    if (pid == 1) return 0;
    return 1000;
  };
  Lease planted = HeldBy(1, 7);
  planted.uid = 65534;
  EXPECT_EQ(EvaluateLease(planted, facts), LeaseState::kHolderGone);
  Lease own = HeldBy(10, 555);
  own.uid = 1000;
  EXPECT_EQ(EvaluateLease(own, facts), LeaseState::kLive);
  Lease roots = HeldBy(10, 555);  // root's leases may name anyone's process (sudo gpupin env --for)
  roots.uid = 0;
  EXPECT_EQ(EvaluateLease(roots, facts), LeaseState::kLive);
  facts.process_uid = [](int) -> std::optional<uint32_t> { return std::nullopt; };
  EXPECT_EQ(EvaluateLease(planted, facts), LeaseState::kLive) << "an unreadable owner is no proof";
}

TEST(EvaluateLease, AHolderThatMadeItselfRootIsHeldByTheUserWhoStartedIt) {
  // gpupin run -- sudo ...: the holder (pid 10) now runs as root; its
  // parent, the user's gpupin run (pid 9), does not.
  LivenessFacts facts = World({{1, 7}, {9, 500}, {10, 555}, {20, 600}});
  facts.process_uid = [](int pid) -> std::optional<uint32_t> {
    return pid == 9 ? 1000u : pid == 30 ? 65534u : 0u;
  };
  facts.parent_of = [](int pid) -> std::optional<int> {
    if (pid == 10) return 9;
    if (pid == 20) return 30;  // started by another user's process
    return 1;
  };
  Lease own = HeldBy(10, 555);
  own.uid = 1000;
  EXPECT_EQ(EvaluateLease(own, facts), LeaseState::kLive);
  Lease planted = HeldBy(20, 600);  // a root process another user started
  planted.uid = 1000;
  EXPECT_EQ(EvaluateLease(planted, facts), LeaseState::kHolderGone);
  Lease daemon = HeldBy(9, 500);  // runs as 1000, named in a record of 65534's
  daemon.uid = 65534;
  EXPECT_EQ(EvaluateLease(daemon, facts), LeaseState::kHolderGone);
  Lease init = HeldBy(1, 7);
  init.uid = 1000;
  EXPECT_EQ(EvaluateLease(init, facts), LeaseState::kHolderGone);
}

TEST(EvaluateLease, ReservationLiveUntilDeadline) {
  Lease lease = HeldBy(10, 5);
  lease.reservation_deadline_unix_ms = 2000;
  lease.reservation_baseline_pids = {77};
  LivenessFacts facts = World({{10, 5}}, 2000);
  facts.gpu_pids["GPU-a"] = {77};
  EXPECT_EQ(EvaluateLease(lease, facts), LeaseState::kLive);
  facts.now_unix_ms = 2001;
  EXPECT_EQ(EvaluateLease(lease, facts), LeaseState::kReservationExpired);
}

TEST(EvaluateLease, ReservationPassesToItsJobWhileTheJobRuns) {
  Lease lease = HeldBy(10, 5);
  lease.reservation_deadline_unix_ms = 2000;
  lease.reservation_baseline_pids = {77};
  LivenessFacts facts = World({{10, 5}});
  facts.gpu_pids["GPU-a"] = {77};
  facts.gpu_pids["GPU-b"] = {77, 78};
  EXPECT_EQ(EvaluateLease(lease, facts), LeaseState::kLive);
  facts.now_unix_ms = 5000;
  EXPECT_EQ(EvaluateLease(lease, facts), LeaseState::kLive)
      << "past the deadline, the running job keeps the cards";
  LivenessFacts shell_gone = World({}, 5000);
  shell_gone.gpu_pids = facts.gpu_pids;
  EXPECT_EQ(EvaluateLease(lease, shell_gone), LeaseState::kLive)
      << "and after the shell that picked exits";
  facts.gpu_pids["GPU-b"] = {77};  // the job ended
  EXPECT_EQ(EvaluateLease(lease, facts), LeaseState::kReservationExpired);
}

TEST(EvaluateLease, AnotherUsersProcessKeepsNoReservationAlive) {
  Lease lease = HeldBy(10, 5);
  lease.uid = 1000;
  lease.reservation_deadline_unix_ms = 2000;
  LivenessFacts facts = World({}, 5000);  // the shell that picked is gone, the TTL passed
  facts.gpu_pids["GPU-a"] = {78};
  facts.process_uid = [](int pid) -> std::optional<uint32_t> { return pid == 78 ? 65534u : 1000u; };
  EXPECT_EQ(EvaluateLease(lease, facts), LeaseState::kHolderGone);
  EXPECT_TRUE(ReservationJobs(lease, facts).empty());
  facts.process_uid = [](int) -> std::optional<uint32_t> { return 1000u; };
  EXPECT_EQ(EvaluateLease(lease, facts), LeaseState::kLive) << "its own user's job keeps it";
  EXPECT_EQ(ReservationJobs(lease, facts), std::vector<uint32_t>{78});
}

TEST(EvaluateLease, AReservationIsHandedToTheNewLiveProcess) {
  Lease lease = HeldBy(10, 5);
  lease.command = "pick (reserved for the next job)";
  lease.reservation_deadline_unix_ms = 2000;
  lease.reservation_baseline_pids = {77};
  LivenessFacts facts = World({{10, 5}, {78, 9}});
  facts.process_command = [](int pid) -> std::optional<std::string> {
    if (pid == 78) return "python train.py";
    return std::nullopt;
  };
  // 78 is a child of the shell 10, which picked.
  facts.parent_of = [](int pid) -> std::optional<int> {
    if (pid == 78) return 10;
    return std::nullopt;
  };
  facts.gpu_pids["GPU-a"] = {77};
  EXPECT_FALSE(HandedToJob(lease, facts).has_value()) << "no job yet";
  facts.gpu_pids["GPU-a"] = {77, 79, 78};  // 79 has already gone
  std::optional<Lease> handed = HandedToJob(lease, facts);
  ASSERT_TRUE(handed.has_value());
  EXPECT_EQ(handed->holder, (ProcessIdentity{78, 9}));
  EXPECT_EQ(handed->command, "python train.py");
  EXPECT_FALSE(handed->is_reservation());
  EXPECT_TRUE(handed->reservation_baseline_pids.empty());
  EXPECT_EQ(handed->gpu_uuids, lease.gpu_uuids);
  facts.process_command = nullptr;
  EXPECT_EQ(HandedToJob(lease, facts)->command, lease.command) << "a command it cannot read";
  // Another user's new process is not this user's job.
  lease.uid = 1000;
  facts.process_uid = [](int pid) -> std::optional<uint32_t> { return pid == 78 ? 0u : 1000u; };
  EXPECT_FALSE(HandedToJob(lease, facts).has_value()) << "root's process on a user's card";
  lease.uid = 0;
  EXPECT_TRUE(HandedToJob(lease, facts).has_value()) << "root's job that became another user";
  EXPECT_FALSE(HandedToJob(HeldBy(10, 5), facts).has_value())
      << "only reservations have jobs to hand over to";
}

TEST(EvaluateLease, AReservationIsHandedOnlyToADescendantOfItsHolder) {
  for (uint32_t uid : {0u, 1000u}) {
    Lease lease = HeldBy(10, 5);
    lease.uid = uid;
    lease.reservation_deadline_unix_ms = 2000;
    LivenessFacts facts = World({{10, 5}, {20, 6}, {78, 9}, {90, 7}});
    facts.process_uid = [uid](int) -> std::optional<uint32_t> { return uid; };
    // 90 is another session's process, not the shell's; 78 descends from
    // the shell 10 through 20.
    facts.parent_of = [](int pid) -> std::optional<int> {
      if (pid == 78) return 20;
      if (pid == 20) return 10;
      if (pid == 90) return 1;
      return std::nullopt;
    };
    facts.gpu_pids["GPU-a"] = {90};
    EXPECT_FALSE(HandedToJob(lease, facts).has_value()) << "uid " << uid << ": a stranger";
    EXPECT_EQ(EvaluateLease(lease, facts), LeaseState::kLive)
        << "uid " << uid << ": the stranger on the card ends nothing";
    facts.gpu_pids["GPU-a"] = {90, 78};
    ASSERT_TRUE(HandedToJob(lease, facts).has_value()) << "uid " << uid << ": a grandchild";
    EXPECT_EQ(HandedToJob(lease, facts)->holder, (ProcessIdentity{20, 6}))
        << "uid " << uid << ": the shell's child the process descends from (the job's script)";
    LivenessFacts reused = facts;
    reused.process_start_time = [](int pid) -> std::optional<uint64_t> {
      return pid == 10 ? 99u : 9u;  // the shell's pid now names another process
    };
    EXPECT_FALSE(HandedToJob(lease, reused).has_value()) << "uid " << uid << ": holder gone";
  }
}

TEST(EvaluateLease, AReservationIsHandedToTheScriptNotItsFirstStep) {
  Lease lease = HeldBy(10, 5);
  lease.uid = 1000;
  lease.reservation_deadline_unix_ms = 2000;
  // The shell 10 runs a script 20, whose step 30 runs a process 40 on the card.
  LivenessFacts facts = World({{10, 5}, {20, 6}, {30, 7}, {40, 8}});
  facts.parent_of = [](int pid) -> std::optional<int> {
    if (pid == 40) return 30;
    if (pid == 30) return 20;
    if (pid == 20) return 10;
    return 1;
  };
  facts.process_uid = [](int) -> std::optional<uint32_t> { return 1000u; };
  facts.gpu_pids["GPU-a"] = {40};
  ASSERT_TRUE(HandedToJob(lease, facts).has_value());
  EXPECT_EQ(HandedToJob(lease, facts)->holder, (ProcessIdentity{20, 6}));
  // The shell has exec'd since the reservation (`bash -c '…; ./train.sh'`):
  // it is now the script, and the job; the steps are its children.
  lease.holder_start_stack = 0x7000;
  facts.start_stack_of = [](int pid) -> std::optional<uint64_t> {
    return pid == 10 ? 0x7000u : 0x9000u;
  };
  EXPECT_EQ(HandedToJob(lease, facts)->holder, (ProcessIdentity{20, 6})) << "no exec yet";
  facts.start_stack_of = [](int pid) -> std::optional<uint64_t> {
    return pid == 10 ? 0x7a00u : 0x9000u;
  };
  EXPECT_EQ(HandedToJob(lease, facts)->holder, (ProcessIdentity{10, 5})) << "after the exec";
  facts.start_stack_of = nullptr;
  // A script that runs as another user cannot hold the user's lease: the
  // process on the card does.
  facts.process_uid = [](int pid) -> std::optional<uint32_t> { return pid == 20 ? 0u : 1000u; };
  EXPECT_EQ(HandedToJob(lease, facts)->holder, (ProcessIdentity{40, 8}));
  // The holder itself on the card: the lease stays with it.
  facts.process_uid = [](int) -> std::optional<uint32_t> { return 1000u; };
  facts.gpu_pids["GPU-a"] = {10};
  EXPECT_EQ(HandedToJob(lease, facts)->holder, (ProcessIdentity{10, 5}));
}

TEST(EvaluateLease, AReservationWhoseShellIsGoneIsHandedToTheScriptOfItsSession) {
  Lease lease = HeldBy(10, 5);  // the shell 10 has exited
  lease.uid = 1000;
  lease.reservation_deadline_unix_ms = 2000;
  // Its script 20, now init's child, runs step 30, whose process 40 is on
  // the card; all in the terminal session led by the interactive shell,
  // process 7.
  LivenessFacts facts = World({{7, 1}, {20, 6}, {30, 7}, {40, 8}, {90, 9}});
  facts.parent_of = [](int pid) -> std::optional<int> {
    if (pid == 40) return 30;
    if (pid == 30) return 20;
    return 1;
  };
  facts.session_of = [](int pid) -> std::optional<int> { return pid == 90 ? 88 : 7; };
  facts.process_uid = [](int) -> std::optional<uint32_t> { return 1000u; };
  facts.gpu_pids["GPU-a"] = {40};
  EXPECT_FALSE(HandedToJob(lease, facts).has_value()) << "a record without the session";
  lease.holder_session = 7;
  ASSERT_TRUE(HandedToJob(lease, facts).has_value());
  EXPECT_EQ(HandedToJob(lease, facts)->holder, (ProcessIdentity{20, 6}));
  EXPECT_FALSE(HandedToJob(lease, facts)->holder_session.has_value());
  // Under the session's leader (still there: the terminal), the job is the
  // leader's child, not the leader.
  facts.parent_of = [](int pid) -> std::optional<int> {
    if (pid == 40) return 30;
    if (pid == 30) return 20;
    if (pid == 20) return 7;
    return 1;
  };
  EXPECT_EQ(HandedToJob(lease, facts)->holder, (ProcessIdentity{20, 6}));
  // A process of another session is not the job: the reservation only
  // stays live while it runs.
  facts.gpu_pids["GPU-a"] = {90};
  EXPECT_FALSE(HandedToJob(lease, facts).has_value());
  EXPECT_EQ(EvaluateLease(lease, facts), LeaseState::kLive);
}

TEST(EvaluateLease, UnknownProcessListIsNotANewProcess) {
  Lease lease = HeldBy(10, 5);
  lease.reservation_deadline_unix_ms = 2000;
  LivenessFacts facts = World({{10, 5}});
  facts.gpu_pids["GPU-other"] = {99};  // not one of the lease's cards
  EXPECT_EQ(EvaluateLease(lease, facts), LeaseState::kLive);
}

TEST(EvaluateLease, NonReservationIgnoresNewProcesses) {
  LivenessFacts facts = World({{10, 5}}, 1 << 30);
  facts.gpu_pids["GPU-a"] = {1234};
  EXPECT_EQ(EvaluateLease(HeldBy(10, 5), facts), LeaseState::kLive);
}

TEST(LeaseCommand, JoinsTheArgumentsAndCutsLongOnes) {
  EXPECT_EQ(LeaseCommand({"python", "train.py", "--lr", "3e-4"}), "python train.py --lr 3e-4");
  EXPECT_EQ(LeaseCommand({}), "");
  std::string cut = LeaseCommand({"python", std::string(300, 'x')});
  EXPECT_EQ(cut.size(), 200u);
  EXPECT_EQ(cut.substr(0, 8), "python x");
  EXPECT_EQ(cut.substr(197), "...");
}

// A container id proves nothing: anyone can write one into a lease.
TEST(EvaluateLease, AContainersLeaseLivesWithItsHolder) {
  Lease lease = HeldBy(10, 5);  // the `docker wait` that follows the container
  lease.container_id = std::string(64, 'a');
  EXPECT_EQ(EvaluateLease(lease, World({{10, 5}})), LeaseState::kLive);
  EXPECT_EQ(EvaluateLease(lease, World({})), LeaseState::kHolderGone);
}

}  // namespace
}  // namespace gpupin
