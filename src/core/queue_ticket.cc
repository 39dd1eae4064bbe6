#include "core/queue_ticket.h"

#include <climits>
#include <nlohmann/json.hpp>

#include "core/json_fields.h"
#include "core/lease_json.h"

namespace gpupin {
namespace {

// More cards than any machine has; keeps the count an int.
constexpr uint64_t kMaxTicketCount = 1 << 20;

}  // namespace

std::string TicketToJson(const QueueTicket& ticket) {
  nlohmann::json json = {
      {"format_version", kTicketFormatVersion},
      {"id", ticket.id},
      {"seq", ticket.seq},
      {"holder", ProcessIdentityToJson(ticket.holder)},
      {"uid", ticket.uid},
      {"user", ticket.user},
      {"command", ticket.command},
      {"request", ticket.request},
      {"count", ticket.count},
      {"created_unix_ms", ticket.created_unix_ms},
  };
  if (ticket.waiter) json["waiter"] = ProcessIdentityToJson(*ticket.waiter);
  return json.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

Result<QueueTicket> TicketFromJson(std::string_view text) {
  Result<nlohmann::json> json = ParseVersionedObject(text, kTicketFormatVersion, "queue ticket");
  if (!json) return json.error();
  FieldReader fields(*json);
  QueueTicket ticket;
  ticket.id = fields.String("id");
  ticket.seq = fields.Unsigned("seq", kMaxTicketSeq);
  ticket.holder = ReadProcessIdentity(fields, "holder");
  ticket.uid = static_cast<uint32_t>(fields.Unsigned("uid", UINT32_MAX));
  ticket.user = fields.String("user");
  ticket.command = fields.String("command");
  ticket.request = fields.String("request");
  ticket.created_unix_ms = fields.Integer("created_unix_ms");
  ticket.count = static_cast<int>(fields.OptionalUnsigned("count", kMaxTicketCount).value_or(1));
  if (json->contains("waiter") && !json->at("waiter").is_null())
    ticket.waiter = ReadProcessIdentity(fields, "waiter");
  if (!fields.error() && !IsValidRecordId(ticket.id)) {
    fields.Fail("id", "must be 1 to 128 letters, digits, '-' or '_'");
  }
  // No gpupin waits for no card: such a ticket would only hold the line.
  if (!fields.error() && ticket.count == 0) fields.Fail("count", "must be at least 1");
  if (fields.error()) return MakeError(ExitCode::kError, "queue ticket: " + *fields.error());
  return ticket;
}

}  // namespace gpupin
