#include "core/queue_decision.h"

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <set>
#include <tuple>

namespace gpupin {
namespace {

std::string Gpus(int n) { return fmt::format("{} GPU{}", n, n == 1 ? "" : "s"); }

// One place in the line: a ticket, or the newcomer deciding.
struct Entry {
  const QueueTicket* ticket = nullptr;  // nullptr: the newcomer
  uint32_t uid = 0;
  int count = 1;
  size_t arrival = 0;
};

void WatchTicket(const QueueTicket& ticket, std::vector<ProcessIdentity>* watched) {
  watched->push_back(ticket.holder);
  if (ticket.waiter) watched->push_back(*ticket.waiter);
}

// The order in which `line` is served under fair share: repeatedly the
// first waiting ticket of the user who holds the fewest cards, counting
// those of the tickets already placed before it; ties by arrival.
std::vector<Entry> FairOrder(const std::vector<Entry>& line, std::map<uint32_t, int> held) {
  std::map<uint32_t, std::deque<Entry>> by_user;
  for (const Entry& entry : line) by_user[entry.uid].push_back(entry);
  std::vector<Entry> order;
  while (order.size() < line.size()) {
    auto best = by_user.end();
    for (auto it = by_user.begin(); it != by_user.end(); ++it) {
      if (it->second.empty()) continue;
      if (best == by_user.end() ||
          std::tuple(held[it->first], it->second.front().arrival) <
              std::tuple(held[best->first], best->second.front().arrival)) {
        best = it;
      }
    }
    order.push_back(best->second.front());
    best->second.pop_front();
    held[best->first] += order.back().count;
  }
  return order;
}

// "--wait to queue behind them": the caller is not waiting yet.
Error AlreadyWaiting(const Turn& turn) {
  return MakeError(ExitCode::kNoGpu,
                   fmt::format("{} job{} already waiting for GPUs (first: {}, {}); use --wait to "
                               "queue behind them",
                               turn.ahead, turn.ahead == 1 ? " is" : "s are", turn.first->user,
                               turn.first->request));
}

std::string Ordinal(size_t n) {
  const char* suffix = "th";
  if (n % 100 < 11 || n % 100 > 13) {
    if (n % 10 == 1) suffix = "st";
    if (n % 10 == 2) suffix = "nd";
    if (n % 10 == 3) suffix = "rd";
  }
  return fmt::format("{}{}", n, suffix);
}

// What blocks the cards, without the policy's advice to use --wait: the
// waiter already does.
std::string Blockers(const std::string& refusal) {
  return refusal.substr(0, refusal.rfind("; use --wait"));
}

// The caller at max_gpus_per_user: what it holds against the cap.
std::string AtUserCap(int held, int count, int cap, const std::string& rule) {
  if (held == cap) {
    return fmt::format("you hold {}, the most one user may hold here ({})", Gpus(held), rule);
  }
  if (held > cap) {
    return fmt::format("you hold {}, more than one user may hold here ({})", Gpus(held), rule);
  }
  return fmt::format("you hold {} and ask for {}, more than one user may hold here ({})",
                     Gpus(held), count, rule);
}

Lease LeaseFor(const QueueRequest& request, const PolicyInput& policy, const Selection& selection) {
  Lease lease;
  lease.id = request.lease_id;
  for (uint32_t index : selection.chosen_gpu_indices) {
    const Gpu& gpu = *std::find_if(policy.gpus.begin(), policy.gpus.end(),
                                   [&](const Gpu& g) { return g.index == index; });
    lease.gpu_uuids.push_back(gpu.uuid);
    if (request.reservation_ttl_ms) {
      for (const GpuProcess& process : gpu.processes)
        lease.reservation_baseline_pids.push_back(process.pid);
    }
  }
  lease.holder = request.holder;
  lease.uid = request.uid;
  lease.user = request.user;
  lease.command = request.command;
  lease.created_unix_ms = policy.now_unix_ms;
  lease.shared_bytes = request.request.mem_bytes;
  if (request.reservation_ttl_ms) {
    lease.reservation_deadline_unix_ms = policy.now_unix_ms + *request.reservation_ttl_ms;
    lease.holder_session = request.holder_session;
    lease.holder_start_stack = request.holder_start_stack;
  }
  return lease;
}

// Without a look: "3 of the 4 GPUs are leased" when the leases alone leave
// too few cards for the request to start (DecisionInput::known_cards), and
// nullopt when only a look can tell. A reserved card may be free already, a
// shared request may share a leased card, and a request that no look has
// shown could ever be served is refused on a look, not left waiting.
std::optional<std::string> AllLeased(const DecisionInput& input) {
  const QueueRequest& request = input.request;
  if (!request.wait || input.job_lease_id || !input.ever_servable || request.request.mem_bytes ||
      input.known_cards.empty())
    return std::nullopt;
  std::set<std::string> leased;
  for (const Lease& lease : input.held_leases) {
    // A reservation ends when its job does, which only a look can see.
    if (lease.is_reservation()) continue;
    for (const std::string& uuid : lease.gpu_uuids) {
      if (std::find(input.known_cards.begin(), input.known_cards.end(), uuid) !=
          input.known_cards.end())
        leased.insert(uuid);
    }
  }
  const size_t free_of_leases = input.known_cards.size() - leased.size();
  if (free_of_leases >= static_cast<size_t>(request.request.count)) return std::nullopt;
  return fmt::format("{} of the {} GPUs {} leased", leased.size(), input.known_cards.size(),
                     leased.size() == 1 ? "is" : "are");
}

Decision Refuse(Decision decision, Error error) {
  decision.kind = Decision::Kind::kRefuse;
  decision.refusal = std::move(error);
  return decision;
}

// Which places in a line are passed over at max_gpus_per_user: a ticket
// whose user's holdings and its count pass the cap, and every later ticket
// of that user. One user's tickets keep their order, or a stream of that
// user's small jobs would keep its bigger one at the cap for ever.
class CapCheck {
 public:
  CapCheck(const TurnInput& input, const std::vector<Entry>& line) : input_(input) {
    for (const Entry& entry : line) {
      if (Capped(entry)) first_capped_.try_emplace(entry.uid, entry.arrival);
    }
  }

  bool Capped(const Entry& entry) const {
    auto cap = input_.caps.find(entry.uid);
    if (cap == input_.caps.end() || !cap->second.max_gpus_per_user) return false;
    auto held = input_.held.find(entry.uid);
    return (held == input_.held.end() ? 0 : held->second) + entry.count >
           *cap->second.max_gpus_per_user;
  }

  bool PassedOver(const Entry& entry) const {
    auto it = first_capped_.find(entry.uid);
    return it != first_capped_.end() && entry.arrival >= it->second;
  }

 private:
  const TurnInput& input_;
  std::map<uint32_t, size_t> first_capped_;  // uid -> arrival of its first capped ticket
};

std::vector<Entry> LineOf(const TurnInput& input) {
  std::vector<Entry> line;
  for (const QueueTicket& ticket : input.waiting)
    line.push_back({&ticket, ticket.uid, std::max(ticket.count, 1), line.size()});
  return line;
}

// The places not passed over, in the order they are served.
std::vector<Entry> ServedOrder(std::vector<Entry> line, const TurnInput& input,
                               const CapCheck& caps) {
  std::erase_if(line, [&](const Entry& entry) { return caps.PassedOver(entry); });
  return input.order == QueueOrder::kFair ? FairOrder(line, input.held) : line;
}

}  // namespace

std::vector<size_t> ServiceOrder(const TurnInput& input) {
  const std::vector<Entry> line = LineOf(input);
  const CapCheck caps(input, line);
  std::vector<size_t> order;
  for (const Entry& entry : ServedOrder(line, input, caps)) order.push_back(entry.arrival);
  for (const Entry& entry : line) {
    if (caps.PassedOver(entry)) order.push_back(entry.arrival);
  }
  return order;
}

Turn DecideTurn(const TurnInput& input) {
  std::vector<Entry> line = LineOf(input);
  std::optional<Entry> me;
  // Our ticket is ours by its id and our uid, the first in line: anyone can
  // read our id in queue/ and write a ticket of theirs under it, later in
  // line, to make us wait behind ourselves.
  for (const Entry& entry : line) {
    if (input.mine && entry.ticket->id == *input.mine && entry.uid == input.uid) {
      me = entry;
      break;
    }
  }
  if (!me) {
    me = Entry{nullptr, input.uid, std::max(input.count, 1), line.size()};
    line.push_back(*me);
  }
  const bool any_user_cap =
      std::any_of(input.caps.begin(), input.caps.end(),
                  [](const auto& entry) { return entry.second.max_gpus_per_user.has_value(); });
  const CapCheck caps(input, line);
  Turn turn;
  if (caps.Capped(*me)) {
    turn.capped = true;
    return turn;
  }
  if (caps.PassedOver(*me)) {
    // Wait for our user's ticket just ahead to go: that is what moves us up.
    const Entry* previous = nullptr;
    for (const Entry& entry : line) {
      if (entry.uid != me->uid || entry.arrival >= me->arrival) continue;
      if (!previous) turn.first = *entry.ticket;
      previous = &entry;
      ++turn.ahead;
    }
    turn.watch = *previous->ticket;
    WatchTicket(*previous->ticket, &turn.watched);
    return turn;
  }
  const std::vector<Entry> order = ServedOrder(line, input, caps);
  auto place = std::find_if(order.begin(), order.end(),
                            [&](const Entry& entry) { return entry.arrival == me->arrival; });
  turn.ahead = static_cast<size_t>(place - order.begin());
  turn.ours = turn.ahead == 0;
  if (turn.ours) return turn;
  turn.first = *order.front().ticket;
  // Whose going moves us up: in fifo the ticket just ahead; in fair our own
  // user's previous one, else any user's first ahead of us. With a cap in
  // force, a ticket ahead may instead be passed over when its user's
  // holdings grow, which only the leases show.
  std::optional<Entry> predecessor;
  if (input.order == QueueOrder::kFifo) {
    predecessor = *(place - 1);
  } else {
    for (auto it = order.begin(); it != place; ++it) {
      if (it->uid == me->uid) predecessor = *it;
    }
  }
  if (predecessor && !any_user_cap) {
    turn.watch = *predecessor->ticket;
    WatchTicket(*predecessor->ticket, &turn.watched);
    return turn;
  }
  std::set<uint32_t> users_seen;
  for (auto it = order.begin(); it != place; ++it) {
    if (any_user_cap || users_seen.insert(it->uid).second) WatchTicket(*it->ticket, &turn.watched);
  }
  return turn;
}

Decision Decide(const DecisionInput& input) {
  Decision decision;
  decision.ever_servable = input.ever_servable;
  const QueueRequest& request = input.request;
  const int count = request.request.count;
  if (input.caps.max_gpus_per_job && count > *input.caps.max_gpus_per_job) {
    return Refuse(std::move(decision),
                  MakeError(ExitCode::kNoGpu,
                            fmt::format("asked for {}, more than one job may have here ({})",
                                        Gpus(count), input.per_job_rule)));
  }
  if (!input.job_lease_id) {
    if (input.caps.max_gpus_per_user && count > *input.caps.max_gpus_per_user) {
      return Refuse(std::move(decision),
                    MakeError(ExitCode::kNoGpu,
                              fmt::format("asked for {}, more than one user may hold here ({})",
                                          Gpus(count), input.per_user_rule)));
    }
    decision.turn = DecideTurn(input.turn);
    if (decision.turn.capped) {
      auto held = input.turn.held.find(input.turn.uid);
      const std::string at_cap = AtUserCap(held == input.turn.held.end() ? 0 : held->second, count,
                                           *input.caps.max_gpus_per_user, input.per_user_rule);
      if (!request.wait) {
        return Refuse(
            std::move(decision),
            MakeError(ExitCode::kNoGpu, at_cap + "; wait with --wait, or gpupin release"));
      }
      decision.kind = Decision::Kind::kQueue;
      decision.why_waiting = at_cap;
      decision.waiting_text = "waiting: " + at_cap;
      return decision;
    }
    if (!decision.turn.ours) {
      if (!input.have_ticket && !request.wait) {
        Error refusal = AlreadyWaiting(decision.turn);
        return Refuse(std::move(decision), std::move(refusal));
      }
      const std::string place =
          fmt::format("{} in queue ({} ahead: {}, {})", Ordinal(decision.turn.ahead + 1),
                      decision.turn.ahead, decision.turn.first->user, decision.turn.first->request);
      decision.kind = Decision::Kind::kQueue;
      decision.why_waiting = "still " + place;
      decision.waiting_text = "waiting: " + place;
      return decision;
    }
  }
  if (!input.policy) {
    if (std::optional<std::string> leased = AllLeased(input)) {
      decision.kind = Decision::Kind::kWait;
      decision.why_waiting = *leased;
      decision.waiting_text = "waiting: next in queue; " + *leased;
    }
    return decision;  // kLook unless leases alone say that waiting goes on
  }
  ChoiceFailure failure;
  Result<Selection> selection = ChooseGpus(*input.policy, &failure);
  if (!selection.ok()) {
    if (!input.fresh_look) return decision;  // kLook
    decision.verdicts = failure.verdicts;
    decision.ever_servable = decision.ever_servable || failure.waiting_can_help;
    if (selection.error().code != ExitCode::kNoGpu || !request.wait || !decision.ever_servable)
      return Refuse(std::move(decision), selection.error());
    decision.kind = Decision::Kind::kWait;
    decision.why_waiting = Blockers(selection.error().message);
    decision.waiting_text =
        input.job_lease_id
            ? "waiting for a card of job " + *input.job_lease_id + "; " + decision.why_waiting
            : "waiting: next in queue; " + decision.why_waiting;
    return decision;
  }
  decision.kind = Decision::Kind::kTake;
  decision.verdicts = selection->verdicts;
  decision.lease = LeaseFor(request, *input.policy, *selection);
  decision.selection = std::move(*selection);
  return decision;
}

}  // namespace gpupin
