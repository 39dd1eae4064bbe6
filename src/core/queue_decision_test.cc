#include "core/queue_decision.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>

namespace gpupin {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

constexpr uint32_t kAlice = 1001;
constexpr uint32_t kBob = 1002;
constexpr uint32_t kCarol = 1003;
constexpr int64_t kNow = 1704204300000;

std::string UserOf(uint32_t uid) {
  switch (uid) {
    case kAlice:
      return "alice";
    case kBob:
      return "bob";
    default:
      return "carol";
  }
}

std::string UuidOf(uint32_t index) { return fmt::format("GPU-{}{}{}", index, index, index); }

// Tickets in arrival order, as WaitingTickets returns them: a ticket's id
// names its user and arrival ("alice-1").
struct Line {
  std::vector<QueueTicket> tickets;
  Line& Add(uint32_t uid, int count = 1) {
    QueueTicket ticket;
    ticket.id = fmt::format("{}-{}", UserOf(uid), tickets.size());
    ticket.seq = tickets.size() + 1;
    ticket.holder = {static_cast<int>(100 + tickets.size()), 7};
    ticket.waiter = ProcessIdentity{static_cast<int>(500 + tickets.size()), 7};
    ticket.uid = uid;
    ticket.user = UserOf(uid);
    ticket.request = fmt::format("{} GPUs", count);
    ticket.count = count;
    tickets.push_back(ticket);
    return *this;
  }
};

TurnInput TurnOf(const Line& line, std::optional<size_t> mine, uint32_t uid, int count = 1,
                 QueueOrder order = QueueOrder::kFair) {
  TurnInput input;
  input.order = order;
  input.waiting = line.tickets;
  if (mine) input.mine = line.tickets[*mine].id;
  input.uid = uid;
  input.count = count;
  return input;
}

// The ids of the tickets, in the order DecideTurn serves them: each in
// turn asks, and the one whose turn it is leaves the line.
std::vector<std::string> ServedOrder(TurnInput input) {
  std::vector<std::string> served;
  while (!input.waiting.empty()) {
    bool found = false;
    for (const QueueTicket& ticket : input.waiting) {
      TurnInput asking = input;
      asking.mine = ticket.id;
      asking.uid = ticket.uid;
      asking.count = ticket.count;
      if (!DecideTurn(asking).ours) continue;
      served.push_back(ticket.id);
      input.held[ticket.uid] += ticket.count;
      std::erase(input.waiting, ticket);
      found = true;
      break;
    }
    if (!found) break;  // nobody may go: the rest is left
  }
  return served;
}

// --- holdings and caps ---

Lease LeaseOf(uint32_t uid, std::vector<uint32_t> cards, bool shared = false) {
  Lease lease;
  lease.id = fmt::format("{}-{}", UserOf(uid), cards.front());
  lease.uid = uid;
  for (uint32_t card : cards) lease.gpu_uuids.push_back(UuidOf(card));
  if (shared) lease.shared_bytes = 1 << 30;
  return lease;
}

TEST(CardsHeldByUser, CountsDistinctCardsOfEveryLeaseAndReservation) {
  Lease reservation = LeaseOf(kBob, {3});
  reservation.reservation_deadline_unix_ms = kNow;
  std::map<uint32_t, int> held =
      CardsHeldByUser({LeaseOf(kAlice, {0, 1}), LeaseOf(kAlice, {1}, /*shared=*/true),
                       LeaseOf(kBob, {2}, true), reservation});
  EXPECT_EQ(held, (std::map<uint32_t, int>{{kAlice, 2}, {kBob, 2}}))
      << "a card two of one user's leases share counts once; shared and reserved cards count";
  EXPECT_THAT(CardsHeldByUser({}), IsEmpty());
}

// --- whose turn (fifo) ---

TEST(DecideTurnFifo, ArrivalOrderWhateverUsersHold) {
  Line line;
  line.Add(kAlice).Add(kAlice).Add(kBob).Add(kAlice);
  TurnInput input = TurnOf(line, 0, kAlice, 1, QueueOrder::kFifo);
  input.held = {{kAlice, 4}};
  EXPECT_THAT(ServedOrder(input), ElementsAre("alice-0", "alice-1", "bob-2", "alice-3"));
}

TEST(DecideTurnFifo, BehindOthersWatchesTheTicketJustAhead) {
  Line line;
  line.Add(kAlice).Add(kBob).Add(kAlice);
  Turn turn = DecideTurn(TurnOf(line, 2, kAlice, 1, QueueOrder::kFifo));
  EXPECT_FALSE(turn.ours);
  EXPECT_EQ(turn.ahead, 2u);
  EXPECT_EQ(turn.first, line.tickets[0]);
  EXPECT_EQ(turn.watch, line.tickets[1]);
  EXPECT_THAT(turn.watched, ElementsAre(line.tickets[1].holder, *line.tickets[1].waiter));
}

TEST(DecideTurnFifo, ANewcomerIsBehindEveryone) {
  Line line;
  line.Add(kAlice).Add(kBob);
  Turn turn = DecideTurn(TurnOf(line, std::nullopt, kCarol, 1, QueueOrder::kFifo));
  EXPECT_EQ(turn.ahead, 2u);
  EXPECT_EQ(turn.watch, line.tickets[1]);
  EXPECT_TRUE(DecideTurn(TurnOf(Line{}, std::nullopt, kCarol, 1, QueueOrder::kFifo)).ours)
      << "an empty queue: our turn";
}

TEST(DecideTurnFifo, AMultiCardHeadHoldsUpOneCardRequestsBehindIt) {
  Line line;
  line.Add(kBob, 4).Add(kAlice);
  EXPECT_FALSE(DecideTurn(TurnOf(line, 1, kAlice, 1, QueueOrder::kFifo)).ours);
}

// --- whose turn (fair share) ---

TEST(DecideTurnFair, TheUserHoldingFewestCardsGoesFirst) {
  Line line;
  for (int i = 0; i < 4; ++i) line.Add(kAlice);
  line.Add(kBob);
  TurnInput input = TurnOf(line, 4, kBob);
  input.held = {{kAlice, 4}};
  Turn turn = DecideTurn(input);
  EXPECT_TRUE(turn.ours) << "bob holds nothing, alice holds 4: bob's job jumps her batch";
  EXPECT_EQ(turn.ahead, 0u);
  input.mine = line.tickets[0].id;
  input.uid = kAlice;
  turn = DecideTurn(input);
  EXPECT_FALSE(turn.ours);
  EXPECT_EQ(turn.ahead, 1u);
  EXPECT_EQ(turn.first, line.tickets[4]);
}

TEST(DecideTurnFair, TiesGoByArrival) {
  Line line;
  line.Add(kBob).Add(kAlice).Add(kCarol);
  TurnInput input = TurnOf(line, 0, kBob);
  input.held = {{kAlice, 1}, {kBob, 1}, {kCarol, 1}};
  EXPECT_THAT(ServedOrder(input), ElementsAre("bob-0", "alice-1", "carol-2"));
}

TEST(DecideTurnFair, OneUsersJobsKeepTheirOrderAndUsersAlternate) {
  Line line;
  line.Add(kAlice).Add(kAlice).Add(kAlice).Add(kBob).Add(kBob);
  TurnInput input = TurnOf(line, 0, kAlice);
  input.held = {{kAlice, 2}};
  // bob (0) first; then alice 2 vs bob 1: bob; then 2 vs 2: alice arrived first.
  EXPECT_THAT(ServedOrder(input), ElementsAre("bob-3", "bob-4", "alice-0", "alice-1", "alice-2"));
}

TEST(DecideTurnFair, WithOneUserItIsFifo) {
  Line line;
  line.Add(kAlice, 2).Add(kAlice).Add(kAlice, 3);
  TurnInput input = TurnOf(line, 0, kAlice);
  input.held = {{kAlice, 1}};
  EXPECT_THAT(ServedOrder(input), ElementsAre("alice-0", "alice-1", "alice-2"));
  Turn turn = DecideTurn(TurnOf(line, 2, kAlice));
  EXPECT_EQ(turn.watch, line.tickets[1]) << "as in fifo, it waits for the ticket just ahead";
}

TEST(DecideTurnFair, ANewcomerOfAUserWithFewerCardsGoesBeforeTheQueue) {
  Line line;
  line.Add(kAlice).Add(kAlice);
  TurnInput input = TurnOf(line, std::nullopt, kBob);
  input.held = {{kAlice, 4}};
  EXPECT_TRUE(DecideTurn(input).ours);
  input.uid = kAlice;
  EXPECT_EQ(DecideTurn(input).ahead, 2u) << "alice's newcomer is behind her own tickets";
}

// bob copies alice's ticket, id and all, into a ticket of his own later in
// line: alice's place is still her own first ticket, not his copy.
TEST(DecideTurnFair, AnotherUsersTicketUnderOurIdIsNotOurPlace) {
  Line line;
  line.Add(kAlice);
  QueueTicket copy = line.tickets[0];
  copy.seq = 2;
  copy.uid = kBob;
  copy.user = "bob";
  line.tickets.push_back(copy);
  TurnInput input = TurnOf(line, 0, kAlice);
  input.held = {{kBob, 4}};
  const Turn turn = DecideTurn(input);
  EXPECT_TRUE(turn.ours);
  EXPECT_EQ(turn.ahead, 0u);
}

TEST(DecideTurnFair, CardsServedBeforeAWaiterCountInTheOrderBehindTheFirst) {
  Line line;
  line.Add(kBob, 3).Add(kBob).Add(kAlice);
  TurnInput input = TurnOf(line, 0, kBob);
  input.held = {{kAlice, 1}};
  // bob (0) takes 3 first; then bob holds 3 > alice's 1: alice.
  EXPECT_THAT(ServedOrder(input), ElementsAre("bob-0", "alice-2", "bob-1"));
  input.mine = "alice-2";
  input.uid = kAlice;
  EXPECT_EQ(DecideTurn(input).ahead, 1u);
}

// A multi-card request never starves among one-card jobs of another user:
// at the head, freed cards are kept for it (no backfill).
TEST(DecideTurnFair, AMultiCardRequestAtTheHeadKeepsFreedCards) {
  Line line;
  line.Add(kBob, 4);
  for (int i = 0; i < 6; ++i) line.Add(kAlice);
  TurnInput input = TurnOf(line, 0, kBob, 4);
  for (int alice_holds = 4; alice_holds >= 1; --alice_holds) {
    input.held = {{kAlice, alice_holds}};
    input.mine = "bob-0";
    input.uid = kBob;
    input.count = 4;
    EXPECT_TRUE(DecideTurn(input).ours) << "alice holds " << alice_holds;
    input.mine = "alice-1";
    input.uid = kAlice;
    input.count = 1;
    EXPECT_FALSE(DecideTurn(input).ours) << "alice's one-card job does not take a freed card";
  }
}

TEST(DecideTurnFair, TheUsersFirstTicketBehindAnotherUserWatchesTheLeases) {
  Line line;
  line.Add(kBob).Add(kAlice).Add(kAlice);
  TurnInput input = TurnOf(line, 1, kAlice);
  input.held = {{kAlice, 2}};
  Turn turn = DecideTurn(input);
  EXPECT_FALSE(turn.ours);
  EXPECT_FALSE(turn.watch.has_value()) << "holdings decide: the leases tell when they change";
  EXPECT_THAT(turn.watched, ElementsAre(line.tickets[0].holder, *line.tickets[0].waiter));
  input.mine = "alice-2";
  turn = DecideTurn(input);
  EXPECT_EQ(turn.watch, line.tickets[1]) << "behind her own, she waits for it to go";
  EXPECT_EQ(turn.ahead, 2u);
}

// --- caps in the queue ---

TEST(DecideTurnCaps, AUserAtTheCapIsPassedOverAndHoldsUpNobody) {
  for (QueueOrder order : {QueueOrder::kFair, QueueOrder::kFifo}) {
    Line line;
    line.Add(kAlice).Add(kBob);
    TurnInput input = TurnOf(line, 0, kAlice, 1, order);
    input.held = {{kAlice, 2}};
    input.caps = {{kAlice, {2, std::nullopt}}};
    Turn turn = DecideTurn(input);
    EXPECT_TRUE(turn.capped);
    EXPECT_FALSE(turn.ours);
    input.mine = "bob-1";
    input.uid = kBob;
    turn = DecideTurn(input);
    EXPECT_TRUE(turn.ours) << "alice's capped ticket does not hold bob up";
    EXPECT_FALSE(turn.capped);
  }
}

TEST(DecideTurnCaps, ARequestThatWouldPassTheCapIsCappedBelowIt) {
  Line line;
  line.Add(kAlice, 2);
  TurnInput input = TurnOf(line, 0, kAlice, 2);
  input.held = {{kAlice, 1}};
  input.caps = {{kAlice, {2, std::nullopt}}};
  EXPECT_TRUE(DecideTurn(input).capped) << "1 held + 2 asked > 2";
  input.held = {};
  EXPECT_TRUE(DecideTurn(input).ours) << "0 held + 2 asked = 2";
}

TEST(DecideTurnCaps, AUsersSmallerJobWaitsBehindItsOwnCappedBiggerOne) {
  for (QueueOrder order : {QueueOrder::kFair, QueueOrder::kFifo}) {
    Line line;
    line.Add(kAlice, 2).Add(kBob).Add(kAlice, 1);
    TurnInput input = TurnOf(line, 2, kAlice, 1, order);
    input.held = {{kAlice, 1}};
    input.caps = {{kAlice, {2, std::nullopt}}};
    Turn turn = DecideTurn(input);
    EXPECT_FALSE(turn.ours) << "alice's jobs keep their order, whatever fits under the cap";
    EXPECT_FALSE(turn.capped);
    EXPECT_EQ(turn.ahead, 1u);
    ASSERT_TRUE(turn.watch.has_value());
    EXPECT_EQ(turn.watch->id, line.tickets[0].id) << "her bigger job is what moves her up";
    // A newcomer of hers, too.
    input.mine.reset();
    turn = DecideTurn(input);
    EXPECT_FALSE(turn.ours);
    EXPECT_EQ(turn.ahead, 2u);
    EXPECT_EQ(turn.watch->id, line.tickets[2].id);
    // Bob passes both.
    input.mine = line.tickets[1].id;
    input.uid = kBob;
    EXPECT_TRUE(DecideTurn(input).ours);
  }
}

TEST(DecideTurnCaps, WithACapInForceWaitersBehindWatchTheLeases) {
  Line line;
  line.Add(kAlice).Add(kAlice);
  TurnInput input = TurnOf(line, 1, kAlice, 1, QueueOrder::kFifo);
  input.caps = {{kBob, {3, std::nullopt}}};
  Turn turn = DecideTurn(input);
  EXPECT_FALSE(turn.watch.has_value())
      << "the ticket ahead may be passed over when holdings grow: only the leases tell";
  EXPECT_THAT(turn.watched, ElementsAre(line.tickets[0].holder, *line.tickets[0].waiter));
}

TEST(DecideTurnCaps, CapsOfOtherUsersLeaveOursAlone) {
  Line line;
  line.Add(kAlice);
  TurnInput input = TurnOf(line, std::nullopt, kBob);
  input.held = {{kAlice, 9}, {kBob, 9}};
  input.caps = {{kAlice, {1, std::nullopt}}};
  Turn turn = DecideTurn(input);
  EXPECT_TRUE(turn.ours) << "alice is capped; bob has no cap";
}

TEST(ServiceOrder, IsTheOrderTurnsAreTaken) {
  Line line;
  line.Add(kAlice).Add(kAlice).Add(kBob);
  TurnInput input = TurnOf(line, std::nullopt, kCarol, 1, QueueOrder::kFifo);
  input.held = {{kAlice, 2}};
  EXPECT_THAT(ServiceOrder(input), ElementsAre(0, 1, 2)) << "fifo: arrival";
  input.order = QueueOrder::kFair;
  EXPECT_THAT(ServiceOrder(input), ElementsAre(2, 0, 1)) << "fair: bob holds fewer cards";
  input.order = QueueOrder::kFifo;
  input.caps = {{kAlice, {2, std::nullopt}}};
  EXPECT_THAT(ServiceOrder(input), ElementsAre(2, 0, 1)) << "alice's tickets passed over, last";
  for (size_t position : {0u, 2u}) {
    input.mine = line.tickets[position].id;
    input.uid = line.tickets[position].uid;
    EXPECT_EQ(DecideTurn(input).ours, position == 2) << "the first served takes its turn";
  }
}

TEST(DecideTurn, ATicketOfOlderGpupinCountsAsOneCardAndANonsenseCountAsOne) {
  Line line;
  line.Add(kAlice, 0).Add(kBob);
  TurnInput input = TurnOf(line, 1, kBob);
  input.held = {{kAlice, 1}, {kBob, 1}};
  input.caps = {{kAlice, {2, std::nullopt}}};
  EXPECT_FALSE(DecideTurn(input).ours) << "alice's ticket (1 held + 1) is within her cap, ahead";
}

// --- the whole decision ---

Gpu MakeGpu(uint32_t index) {
  Gpu gpu;
  gpu.index = index;
  gpu.uuid = UuidOf(index);
  gpu.name = "NVIDIA A100-SXM4-80GB";
  gpu.memory_total_bytes = uint64_t{80} << 30;
  gpu.memory_used_bytes = 0;
  gpu.memory_free_bytes = uint64_t{80} << 30;
  gpu.utilization_gpu_percent = 0;
  gpu.compute_mode = ComputeMode::kDefault;
  gpu.mig_enabled = false;
  return gpu;
}

struct Fixture {
  DecisionInput input;
  Fixture(int cards = 4, uint32_t uid = kAlice) {
    input.request.holder = {4242, 99};
    input.request.uid = uid;
    input.request.user = UserOf(uid);
    input.request.command = "python train.py";
    input.request.lease_id = "4242-99-abcd";
    input.turn.uid = uid;
    PolicyInput policy;
    for (int i = 0; i < cards; ++i) policy.gpus.push_back(MakeGpu(static_cast<uint32_t>(i)));
    policy.caller = {uid, UserOf(uid), std::nullopt, std::nullopt};
    policy.format_clock = FormatUtcClock;
    policy.now_unix_ms = kNow;
    input.policy = policy;
  }
  void Hold(uint32_t uid, std::vector<uint32_t> cards) {
    Lease lease = LeaseOf(uid, cards);
    lease.user = UserOf(uid);
    lease.holder = {static_cast<int>(7000 + cards.front()), 1};
    input.policy->live_leases.push_back(lease);
    input.turn.held = CardsHeldByUser(input.policy->live_leases);
  }
  void Ask(int count) {
    input.request.request.count = count;
    if (input.policy) input.policy->request.count = count;
    input.turn.count = count;
  }
  void CapPerUser(int cap) {
    input.per_user_rule = fmt::format("max_gpus_per_user = {} in /etc/gpupin/config.toml", cap);
    input.caps.max_gpus_per_user = cap;
    input.turn.caps[input.turn.uid].max_gpus_per_user = cap;
  }
};

TEST(Decide, TakesAFreeCardAndWritesTheLease) {
  Fixture f;
  f.Hold(kBob, {0});
  Decision decision = Decide(f.input);
  ASSERT_EQ(decision.kind, Decision::Kind::kTake);
  ASSERT_TRUE(decision.lease);
  EXPECT_EQ(decision.lease->id, "4242-99-abcd");
  EXPECT_THAT(decision.lease->gpu_uuids, ElementsAre(UuidOf(1)));
  EXPECT_EQ(decision.lease->holder, (ProcessIdentity{4242, 99}));
  EXPECT_EQ(decision.lease->uid, kAlice);
  EXPECT_EQ(decision.lease->user, "alice");
  EXPECT_EQ(decision.lease->command, "python train.py");
  EXPECT_EQ(decision.lease->created_unix_ms, kNow);
  EXPECT_TRUE(decision.lease->exclusive());
  EXPECT_FALSE(decision.lease->is_reservation());
  EXPECT_EQ(decision.verdicts.size(), 4u);
}

TEST(Decide, AReservationRecordsItsDeadlineAndTheProcessesAlreadyThere) {
  Fixture f;
  f.input.request.reservation_ttl_ms = 60000;
  GpuProcess xorg;
  xorg.pid = 1234;
  xorg.used_memory_bytes = 1 << 20;
  xorg.graphics = true;
  f.input.policy->gpus[0].processes.push_back(xorg);
  Decision decision = Decide(f.input);
  ASSERT_EQ(decision.kind, Decision::Kind::kTake);
  EXPECT_EQ(decision.lease->reservation_deadline_unix_ms, kNow + 60000);
  EXPECT_THAT(decision.lease->reservation_baseline_pids, ElementsAre(1234u));
}

TEST(Decide, ASharedRequestWritesASharedLease) {
  Fixture f;
  f.input.request.request.mem_bytes = uint64_t{20} << 30;
  f.input.policy->request.mem_bytes = uint64_t{20} << 30;
  Decision decision = Decide(f.input);
  ASSERT_EQ(decision.kind, Decision::Kind::kTake);
  EXPECT_EQ(decision.lease->shared_bytes, uint64_t{20} << 30);
}

TEST(Decide, NothingFreeWithoutWaitIsRefusedWithTheBlockers) {
  Fixture f(1);
  f.Hold(kBob, {0});
  Decision decision = Decide(f.input);
  ASSERT_EQ(decision.kind, Decision::Kind::kRefuse);
  EXPECT_EQ(decision.refusal->code, ExitCode::kNoGpu);
  EXPECT_THAT(decision.refusal->message, HasSubstr("leased by bob"));
  EXPECT_EQ(decision.verdicts.size(), 1u);
}

TEST(Decide, NothingFreeWithWaitWaitsAtTheHead) {
  Fixture f(1);
  f.Hold(kBob, {0});
  f.input.request.wait = true;
  Decision decision = Decide(f.input);
  ASSERT_EQ(decision.kind, Decision::Kind::kWait);
  EXPECT_TRUE(decision.ever_servable);
  EXPECT_THAT(decision.waiting_text, HasSubstr("waiting: next in queue; "));
  EXPECT_THAT(decision.why_waiting, HasSubstr("leased by bob"));
  EXPECT_THAT(decision.why_waiting, Not(HasSubstr("--wait")));
}

TEST(Decide, AWaitThatNoLeaseEndingCouldServeIsRefused) {
  Fixture f(1);
  f.input.policy->gpus[0].mig_enabled = true;
  f.input.request.wait = true;
  Decision decision = Decide(f.input);
  EXPECT_EQ(decision.kind, Decision::Kind::kRefuse);
  f.input.ever_servable = true;
  EXPECT_EQ(Decide(f.input).kind, Decision::Kind::kWait)
      << "once servable, a card that stops serving may come back: keep waiting";
}

TEST(Decide, ARecentLookMayOnlyLeadToTakingCards) {
  Fixture f(1);
  f.Hold(kBob, {0});
  f.input.fresh_look = false;
  EXPECT_EQ(Decide(f.input).kind, Decision::Kind::kLook);
  f.input.policy->live_leases.clear();
  EXPECT_EQ(Decide(f.input).kind, Decision::Kind::kTake);
}

TEST(Decide, OurTurnWithoutALookAsksForOne) {
  Fixture f;
  f.input.policy.reset();
  EXPECT_EQ(Decide(f.input).kind, Decision::Kind::kLook);
}

// The head of the queue, woken by a change in the leases, counts them
// before it asks NVML: 4 cards, 3 of them leased.
struct HeadWithoutALook : Fixture {
  HeadWithoutALook() {
    for (uint32_t card : {0u, 1u, 2u}) Hold(kBob, {card});
    for (const Gpu& gpu : input.policy->gpus) input.known_cards.push_back(gpu.uuid);
    input.held_leases = input.policy->live_leases;
    input.policy.reset();
    input.request.wait = true;
    input.have_ticket = true;
    input.ever_servable = true;
  }
};

TEST(Decide, TheHeadWaitsOnWithoutALookWhileLeasesHoldTheCards) {
  HeadWithoutALook f;
  f.Ask(2);
  Decision decision = Decide(f.input);
  EXPECT_EQ(decision.kind, Decision::Kind::kWait);
  EXPECT_EQ(decision.why_waiting, "3 of the 4 GPUs are leased");
  EXPECT_EQ(decision.waiting_text, "waiting: next in queue; 3 of the 4 GPUs are leased");
}

TEST(Decide, TheHeadLooksWhenTheLeasesLeaveEnoughCards) {
  HeadWithoutALook f;
  f.Ask(1);
  EXPECT_EQ(Decide(f.input).kind, Decision::Kind::kLook) << "a card free of leases may be free";
  f.Ask(2);
  f.input.held_leases.pop_back();
  EXPECT_EQ(Decide(f.input).kind, Decision::Kind::kLook);
}

TEST(Decide, OnlyALookDecidesForSharedRequestsAndNeverServedOnes) {
  HeadWithoutALook f;
  f.Ask(2);
  f.input.request.request.mem_bytes = uint64_t{4} << 30;
  EXPECT_EQ(Decide(f.input).kind, Decision::Kind::kLook) << "a shared request may share a card";
  f.input.request.request.mem_bytes.reset();
  f.input.ever_servable = false;
  EXPECT_EQ(Decide(f.input).kind, Decision::Kind::kLook)
      << "a request never seen servable is refused on a look, not left waiting";
  f.input.ever_servable = true;
  f.input.known_cards.clear();
  EXPECT_EQ(Decide(f.input).kind, Decision::Kind::kLook) << "no earlier look: the cards unknown";
}

TEST(Decide, AReservedCardMayBeFreeAlready) {
  HeadWithoutALook f;
  f.Ask(2);
  f.input.held_leases.back().reservation_deadline_unix_ms = kNow + 60'000;
  EXPECT_EQ(Decide(f.input).kind, Decision::Kind::kLook)
      << "the reservation's job may have ended, which only a look shows";
}

TEST(Decide, LeasesOfCardsBeyondTheKnownOnesAreNotCounted) {
  HeadWithoutALook f;
  f.Ask(2);
  f.input.held_leases = {LeaseOf(kBob, {0}), LeaseOf(kBob, {0, 9})};
  EXPECT_EQ(Decide(f.input).kind, Decision::Kind::kLook) << "3 of 4 cards are free of leases";
}

TEST(Decide, BehindOthersANewcomerWithoutWaitIsRefusedEvenWithCardsFree) {
  Fixture f;
  Line line;
  line.Add(kAlice, 2).Add(kAlice);
  f.input.turn.waiting = line.tickets;
  Decision decision = Decide(f.input);
  ASSERT_EQ(decision.kind, Decision::Kind::kRefuse);
  EXPECT_EQ(decision.refusal->message,
            "2 jobs are already waiting for GPUs (first: alice, 2 GPUs); use --wait to queue "
            "behind them");
  f.input.request.wait = true;
  decision = Decide(f.input);
  ASSERT_EQ(decision.kind, Decision::Kind::kQueue);
  EXPECT_EQ(decision.waiting_text, "waiting: 3rd in queue (2 ahead: alice, 2 GPUs)");
  EXPECT_EQ(decision.why_waiting, "still 3rd in queue (2 ahead: alice, 2 GPUs)");
  f.input.have_ticket = true;
  f.input.request.wait = false;
  EXPECT_EQ(Decide(f.input).kind, Decision::Kind::kQueue) << "a ticket holder stays";
}

TEST(Decide, FairShareLetsAUserWithoutCardsPassAnotherUsersQueue) {
  Fixture f(4, kBob);
  for (uint32_t card = 0; card < 3; ++card) f.Hold(kAlice, {card});
  Line line;
  line.Add(kAlice).Add(kAlice);
  f.input.turn.waiting = line.tickets;
  Decision decision = Decide(f.input);
  ASSERT_EQ(decision.kind, Decision::Kind::kTake);
  EXPECT_THAT(decision.lease->gpu_uuids, ElementsAre(UuidOf(3)));
  f.input.turn.order = QueueOrder::kFifo;
  EXPECT_EQ(Decide(f.input).kind, Decision::Kind::kRefuse) << "fifo: behind alice's tickets";
}

TEST(Decide, AtTheUserCapWithoutWaitTheLineNamesRuleHoldingsAndFileWithWaitItQueues) {
  Fixture f;
  f.Hold(kAlice, {0});
  f.Hold(kAlice, {1});
  f.CapPerUser(2);
  Decision decision = Decide(f.input);
  ASSERT_EQ(decision.kind, Decision::Kind::kRefuse);
  EXPECT_EQ(decision.refusal->code, ExitCode::kNoGpu);
  EXPECT_EQ(decision.refusal->message,
            "you hold 2 GPUs, the most one user may hold here (max_gpus_per_user = 2 in "
            "/etc/gpupin/config.toml); wait with --wait, or gpupin release");

  f.input.request.wait = true;
  decision = Decide(f.input);
  ASSERT_EQ(decision.kind, Decision::Kind::kQueue);
  EXPECT_TRUE(decision.turn.capped);
  EXPECT_EQ(decision.waiting_text,
            "waiting: you hold 2 GPUs, the most one user may hold here (max_gpus_per_user = 2 "
            "in /etc/gpupin/config.toml)");
}

// The refusal of alice's request for `ask` cards while she holds `held`,
// under a per-user cap of `cap`.
std::string CapRefusal(const std::vector<uint32_t>& held, int cap, int ask) {
  Fixture f;
  f.Hold(kAlice, held);
  f.CapPerUser(cap);
  f.Ask(ask);
  Decision decision = Decide(f.input);
  EXPECT_EQ(decision.kind, Decision::Kind::kRefuse);
  return decision.refusal ? decision.refusal->message : "";
}

TEST(Decide, BelowTheCapAskingPastItSaysWhatItWouldHold) {
  EXPECT_EQ(CapRefusal({0}, 2, 2),
            "you hold 1 GPU and ask for 2, more than one user may hold here (max_gpus_per_user "
            "= 2 in /etc/gpupin/config.toml); wait with --wait, or gpupin release");
}

TEST(Decide, OverTheCapSaysMoreThanOneUserMayHold) {
  // Held from before the cap was lowered, or written by hand.
  EXPECT_EQ(CapRefusal({0, 1, 2}, 1, 1),
            "you hold 3 GPUs, more than one user may hold here (max_gpus_per_user = 1 in "
            "/etc/gpupin/config.toml); wait with --wait, or gpupin release");
}

TEST(Decide, ARequestLargerThanTheUserCapIsRefusedEvenWithWait) {
  Fixture f;
  f.CapPerUser(2);
  f.Ask(3);
  f.input.request.wait = true;
  Decision decision = Decide(f.input);
  ASSERT_EQ(decision.kind, Decision::Kind::kRefuse);
  EXPECT_EQ(decision.refusal->code, ExitCode::kNoGpu);
  EXPECT_EQ(decision.refusal->message,
            "asked for 3 GPUs, more than one user may hold here (max_gpus_per_user = 2 in "
            "/etc/gpupin/config.toml)");
}

TEST(Decide, MaxGpusPerJobCapsTheCount) {
  Fixture f;
  f.input.caps.max_gpus_per_job = 2;
  f.input.per_job_rule = "max_gpus_per_job = 2 in /etc/gpupin/config.toml";
  f.Ask(3);
  f.input.request.wait = true;
  Decision decision = Decide(f.input);
  ASSERT_EQ(decision.kind, Decision::Kind::kRefuse);
  EXPECT_EQ(decision.refusal->code, ExitCode::kNoGpu);
  EXPECT_EQ(decision.refusal->message,
            "asked for 3 GPUs, more than one job may have here (max_gpus_per_job = 2 in "
            "/etc/gpupin/config.toml)");
  f.Ask(2);
  EXPECT_EQ(Decide(f.input).kind, Decision::Kind::kTake);
}

TEST(Decide, InsideAJobTheCapAndTheQueueDoNotApply) {
  Fixture f(2);
  Lease job = LeaseOf(kAlice, {0, 1});
  job.id = "job-1";
  job.user = "alice";
  f.input.policy->live_leases.push_back(job);
  f.input.policy->caller.job_lease_id = "job-1";
  f.input.job_lease_id = "job-1";
  f.input.turn.held = {{kAlice, 2}};
  f.CapPerUser(2);
  Line line;
  line.Add(kBob);
  f.input.turn.waiting = line.tickets;
  EXPECT_EQ(Decide(f.input).kind, Decision::Kind::kTake)
      << "its job's cards are already counted, and waiters want them only after the job";
}

TEST(Decide, InsideAJobWaitingIsForTheJobsCards) {
  Fixture f(1);
  Lease job = LeaseOf(kAlice, {0});
  job.id = "job-1";
  job.user = "alice";
  f.input.policy->live_leases.push_back(job);
  f.input.policy->caller.job_lease_id = "job-1";
  f.input.job_lease_id = "job-1";
  f.input.request.wait = true;
  GpuProcess busy;
  busy.pid = 31;
  busy.used_memory_bytes = uint64_t{30} << 30;
  busy.compute = true;
  f.input.policy->gpus[0].processes.push_back(busy);
  f.input.policy->gpus[0].memory_used_bytes = uint64_t{30} << 30;
  f.input.policy->gpus[0].memory_free_bytes = uint64_t{50} << 30;
  Decision decision = Decide(f.input);
  ASSERT_EQ(decision.kind, Decision::Kind::kWait);
  EXPECT_THAT(decision.waiting_text, HasSubstr("waiting for a card of job job-1; "));
}

// --- reserved cards ---

TEST(Decide, AReservedCardIsNeverChosenUnlessNamedWithOnly) {
  Fixture f(2);
  f.input.policy->reserved = {"0"};
  f.input.policy->reserved_by = "reserved = [\"0\"] in /etc/gpupin/config.toml";
  Decision decision = Decide(f.input);
  ASSERT_EQ(decision.kind, Decision::Kind::kTake);
  EXPECT_THAT(decision.lease->gpu_uuids, ElementsAre(UuidOf(1)));
  EXPECT_EQ(decision.verdicts[0].reason,
            "reserved for interactive work (reserved = [\"0\"] in /etc/gpupin/config.toml); "
            "name it with --only");

  f.Hold(kBob, {1});
  decision = Decide(f.input);
  ASSERT_EQ(decision.kind, Decision::Kind::kRefuse) << "the reserved card is free, but reserved";
  EXPECT_THAT(decision.refusal->message, HasSubstr("GPU 1 leased by bob"));
  EXPECT_THAT(decision.verdicts[0].reason, HasSubstr("reserved for interactive work"));

  f.input.policy->request.only = {"0"};
  decision = Decide(f.input);
  ASSERT_EQ(decision.kind, Decision::Kind::kTake);
  EXPECT_THAT(decision.lease->gpu_uuids, ElementsAre(UuidOf(0)));
}

TEST(Decide, ReservedCardsByUuidPrefixAndUnknownIdsIgnored) {
  Fixture f(3);
  f.input.policy->reserved = {"GPU-000", "7", "GPU-9"};
  f.Ask(2);
  Decision decision = Decide(f.input);
  ASSERT_EQ(decision.kind, Decision::Kind::kTake);
  EXPECT_THAT(decision.lease->gpu_uuids, ElementsAre(UuidOf(1), UuidOf(2)));
}

TEST(Decide, MoreCardsThanTheUnreservedOnesCanNeverBeServed) {
  Fixture f(2);
  f.input.policy->reserved = {"1"};
  f.input.policy->reserved_by = "reserved = [\"1\"] in /etc/gpupin/config.toml";
  f.Ask(2);
  f.input.request.wait = true;
  Decision decision = Decide(f.input);
  ASSERT_EQ(decision.kind, Decision::Kind::kRefuse);
  EXPECT_EQ(decision.refusal->code, ExitCode::kNoGpu);
  EXPECT_EQ(decision.refusal->message,
            "asked for 2 GPUs but only 1 is not reserved for interactive work (reserved = "
            "[\"1\"] in /etc/gpupin/config.toml); name reserved cards with --only");
  f.input.policy->reserved = {"0", "1"};
  f.Ask(1);
  EXPECT_EQ(Decide(f.input).refusal->message,
            "asked for 1 GPU but every GPU is reserved for interactive work (reserved = "
            "[\"1\"] in /etc/gpupin/config.toml); name reserved cards with --only");
}

TEST(Decide, UnreservedCountNamesWhatElseNarrowedTheCards) {
  // 4 cards, 3 reserved-free; --exclude takes one of those: the refusal
  // must not blame the reservation alone.
  Fixture f(4);
  f.input.policy->reserved = {"3"};
  f.input.policy->reserved_by = "reserved = [\"3\"] in /etc/gpupin/config.toml";
  f.input.policy->request.exclude = {"0"};
  f.Ask(3);
  Decision decision = Decide(f.input);
  ASSERT_EQ(decision.kind, Decision::Kind::kRefuse);
  EXPECT_EQ(decision.refusal->message,
            "asked for 3 GPUs but only 2 are not reserved for interactive work among the 3 that "
            "--only/--exclude leave (reserved = [\"3\"] in /etc/gpupin/config.toml); name "
            "reserved cards with --only");

  f.input.policy->request.exclude = {};
  f.input.policy->allowed_gpu_indices = std::vector<uint32_t>{1, 2, 3};
  f.input.policy->allowed_by = "CUDA_VISIBLE_DEVICES=1,2,3";
  decision = Decide(f.input);
  ASSERT_EQ(decision.kind, Decision::Kind::kRefuse);
  EXPECT_THAT(decision.refusal->message,
              HasSubstr("only 2 are not reserved for interactive work among the 3 in your "
                        "allocation ("));
}

// --- rules combined ---

TEST(Decide, CapAndFairShareTogether) {
  // alice holds 2 (her cap), bob 1; alice's ticket is first, bob's second:
  // alice is passed over, bob goes though he holds cards.
  Fixture f(4, kBob);
  f.Hold(kAlice, {0});
  f.Hold(kAlice, {1});
  f.Hold(kBob, {2});
  Line line;
  line.Add(kAlice).Add(kBob);
  f.input.turn.waiting = line.tickets;
  f.input.turn.mine = "bob-1";
  f.input.have_ticket = true;
  f.input.turn.caps = {{kAlice, {2, std::nullopt}}};
  Decision decision = Decide(f.input);
  ASSERT_EQ(decision.kind, Decision::Kind::kTake);
  EXPECT_THAT(decision.lease->gpu_uuids, ElementsAre(UuidOf(3)));
}

TEST(Decide, ReservedAndCapTogether) {
  Fixture f(3);
  f.Hold(kAlice, {0});
  f.CapPerUser(2);
  f.input.policy->reserved = {"1"};
  Decision decision = Decide(f.input);
  ASSERT_EQ(decision.kind, Decision::Kind::kTake);
  EXPECT_THAT(decision.lease->gpu_uuids, ElementsAre(UuidOf(2)));
  f.Hold(kAlice, {2});
  f.input.policy->request.only = {"1"};
  decision = Decide(f.input);
  ASSERT_EQ(decision.kind, Decision::Kind::kRefuse) << "naming the reserved card passes no cap";
  EXPECT_THAT(decision.refusal->message, HasSubstr("you hold 2 GPUs"));
}

TEST(Decide, FifoWithCapPassesOverTheCappedHead) {
  Fixture f(2, kBob);
  f.Hold(kAlice, {0});
  Line line;
  line.Add(kAlice);
  f.input.turn.order = QueueOrder::kFifo;
  f.input.turn.waiting = line.tickets;
  f.input.turn.caps = {{kAlice, {1, std::nullopt}}};
  Decision decision = Decide(f.input);
  ASSERT_EQ(decision.kind, Decision::Kind::kTake);
  EXPECT_THAT(decision.lease->gpu_uuids, ElementsAre(UuidOf(1)));
}

// What a turn says, as text: two turns compared field by field.
std::string Describe(const Turn& turn) {
  std::string watched;
  for (const ProcessIdentity& process : turn.watched) watched += fmt::format("{} ", process.pid);
  return fmt::format("ours={} capped={} ahead={} first={} watch={} watched={}", turn.ours,
                     turn.capped, turn.ahead, turn.first ? turn.first->id : "-",
                     turn.watch ? turn.watch->id : "-", watched);
}

// LeaseTransaction::WaitingTickets leaves a waiter's own user's tickets
// behind its own unread: they must never change its turn, in any order,
// with any holdings and caps.
TEST(DecideTurn, OurOwnUsersTicketsBehindOursNeverChangeOurTurn) {
  std::mt19937 random(20261207);
  const uint32_t users[] = {kAlice, kBob, kCarol};
  for (int trial = 0; trial < 3000; ++trial) {
    Line line;
    const int length = 1 + static_cast<int>(random() % 7);
    for (int i = 0; i < length; ++i)
      line.Add(users[random() % 3], 1 + static_cast<int>(random() % 3));
    const size_t mine = random() % static_cast<size_t>(length);
    const uint32_t uid = line.tickets[mine].uid;
    TurnInput full = TurnOf(line, mine, uid, line.tickets[mine].count,
                            random() % 2 ? QueueOrder::kFair : QueueOrder::kFifo);
    for (uint32_t user : users) {
      if (random() % 2) full.held[user] = static_cast<int>(random() % 4);
      if (random() % 3 == 0) full.caps[user].max_gpus_per_user = 1 + static_cast<int>(random() % 4);
    }
    TurnInput without = full;
    without.waiting.clear();
    for (size_t i = 0; i < line.tickets.size(); ++i) {
      if (i <= mine || line.tickets[i].uid != uid) without.waiting.push_back(line.tickets[i]);
    }
    EXPECT_EQ(Describe(DecideTurn(full)), Describe(DecideTurn(without)))
        << "trial " << trial << ": ticket " << mine << " of " << length;
  }
}

}  // namespace
}  // namespace gpupin
