// The queue decision (doc/queue.md): given the cards, the live leases, the
// waiting tickets, the house rules and one request, whether that request
// takes cards now (and the lease to write), joins or stays in the queue,
// waits at the head, or is refused. Pure: cli/acquire gathers the facts
// under the state lock, calls Decide, and carries out its answer.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/house_rules.h"
#include "core/lease.h"
#include "core/policy.h"
#include "core/queue_ticket.h"

namespace gpupin {

// Where a request stands in the queue.
struct TurnInput {
  QueueOrder order = QueueOrder::kFair;
  // Live tickets whose holders and waiters are not stopped, in arrival
  // order (LeaseTransaction::WaitingTickets); ours among them once we have one.
  std::vector<QueueTicket> waiting;
  // Our ticket's id (of a ticket of `uid`'s); nullopt: a newcomer, behind everyone.
  std::optional<std::string> mine;
  uint32_t uid = 0;               // ours (read from our ticket when we have one)
  int count = 1;                  // cards we ask for
  std::map<uint32_t, int> held;   // CardsHeldByUser
  std::map<uint32_t, Caps> caps;  // per uid; a missing uid has no cap
};

struct Turn {
  bool ours = false;  // nobody goes before us: choose now
  // We hold so many cards that `count` more would pass max_gpus_per_user:
  // we are passed over (and pass nobody) until our holdings fall.
  bool capped = false;
  size_t ahead = 0;                  // waiters served before us
  std::optional<QueueTicket> first;  // the first of them
  // Wait for this ticket to go: the one just ahead (fifo) or our own
  // user's previous one (fair). nullopt while not ours: watch the leases,
  // since holdings decide who goes next.
  std::optional<QueueTicket> watch;
  // Holders and waiters of tickets ahead whose end may move us up.
  std::vector<ProcessIdentity> watched;
};

// fifo: arrival order. fair: the waiter whose user holds the fewest cards
// (counting, for the order behind the first, the cards of those served
// before it) goes first, ties by arrival; one user's tickets keep their
// order. Either way a ticket whose user is at the cap is passed over, and
// the first waiter keeps freed cards until it has enough (no backfill), so
// a request of many cards never starves behind a stream of small ones.
Turn DecideTurn(const TurnInput& input);

// The waiting tickets in the order they are served (indices into
// input.waiting; `mine`, `uid` and `count` are not used): as DecideTurn
// orders them, with the tickets passed over at the cap last, in arrival order.
std::vector<size_t> ServiceOrder(const TurnInput& input);

// One request, as acquire knows it.
struct QueueRequest {
  Request request;
  bool wait = false;
  ProcessIdentity holder;
  uint32_t uid = 0;
  std::string user;
  std::string command;
  std::optional<int64_t> reservation_ttl_ms;
  std::optional<int> holder_session;           // for a reservation (Lease::holder_session)
  std::optional<uint64_t> holder_start_stack;  // likewise
  std::string lease_id;                        // a fresh record id, for the lease if one is taken
};

struct DecisionInput {
  QueueRequest request;
  Caps caps;  // the caller's
  // The rules that set them, as messages name them
  // ("max_gpus_per_user = 2 in /etc/gpupin/config.toml:4").
  std::string per_user_rule;
  std::string per_job_rule;
  // Inside a job (GPUPIN_LEASE_ID, verified): served from the job's cards,
  // never queued, and the job's cards are already counted.
  std::optional<std::string> job_lease_id;
  TurnInput turn;
  // The cards: nullopt when no look was taken (a waiter behind others).
  std::optional<PolicyInput> policy;
  // The look is fresh: a choice that finds nothing is believed. A recent
  // one may only lead to taking cards.
  bool fresh_look = true;
  // Some earlier look found enough cards that can run jobs at all.
  bool ever_servable = false;
  bool have_ticket = false;
  // Without a look, for a waiter at its turn: the UUID of every card (from
  // an earlier look: they do not change while the driver is loaded) and the
  // leases held now. An exclusive request that fewer cards are free of
  // leases (reservations aside) than it asks for waits on without a look: nothing a look shows
  // frees a leased card, and every hand-off in a busy queue wakes the head.
  std::vector<std::string> known_cards;
  std::vector<Lease> held_leases;
};

struct Decision {
  enum class Kind {
    kTake,    // write `lease` (and drop our ticket)
    kQueue,   // hold or take a ticket behind others (`turn` says whom)
    kWait,    // our turn (or our job's), but nothing fits: hold a ticket, wait for the leases
    kRefuse,  // `refusal`; drop our ticket
    kLook,    // our turn, but without a fresh enough look: hold our place, look, decide again
  };
  Kind kind = Kind::kLook;
  std::optional<Lease> lease;
  std::optional<Selection> selection;
  std::optional<Error> refusal;
  Turn turn;
  bool ever_servable = false;
  std::vector<CardVerdict> verdicts;  // from the choice, when one was made
  std::string waiting_text;           // shown while waiting
  std::string why_waiting;            // said if the --wait time runs out
};

Decision Decide(const DecisionInput& input);

}  // namespace gpupin
