#include "core/lease_json.h"

#include <algorithm>
#include <climits>

#include "core/docker_args.h"

namespace gpupin {

nlohmann::json ProcessIdentityToJson(const ProcessIdentity& identity) {
  return {{"pid", identity.pid}, {"start_time_ticks", identity.start_time_ticks}};
}

ProcessIdentity ReadProcessIdentity(FieldReader& fields, const char* key) {
  FieldReader holder(fields.Object(key), std::string(key) + ".");
  ProcessIdentity identity;
  identity.pid = static_cast<int>(holder.Unsigned("pid", INT_MAX));
  identity.start_time_ticks = holder.Unsigned("start_time_ticks");
  if (!holder.error() && identity.pid == 0) holder.Fail("pid", "must be a positive integer");
  if (holder.error()) fields.Fail(key, "is invalid: " + *holder.error());
  return identity;
}

std::string LeaseToJson(const Lease& lease) {
  nlohmann::json json = {
      {"format_version", kLeaseFormatVersion},
      {"id", lease.id},
      {"gpu_uuids", lease.gpu_uuids},
      {"holder", ProcessIdentityToJson(lease.holder)},
      {"uid", lease.uid},
      {"user", lease.user},
      {"command", lease.command},
      {"created_unix_ms", lease.created_unix_ms},
      {"shared_bytes", nullptr},
      {"reservation_deadline_unix_ms", nullptr},
      {"reservation_baseline_pids", lease.reservation_baseline_pids},
      {"container_id", nullptr},
  };
  if (lease.holder_session) json["holder_session"] = *lease.holder_session;
  if (lease.holder_start_stack) json["holder_start_stack"] = *lease.holder_start_stack;
  if (lease.shared_bytes) json["shared_bytes"] = *lease.shared_bytes;
  if (lease.reservation_deadline_unix_ms) {
    json["reservation_deadline_unix_ms"] = *lease.reservation_deadline_unix_ms;
  }
  if (lease.container_id) json["container_id"] = *lease.container_id;
  // Invalid UTF-8 in a command line is replaced rather than thrown on.
  return json.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

Result<Lease> LeaseFromJson(std::string_view text) {
  Result<nlohmann::json> json = ParseVersionedObject(text, kLeaseFormatVersion, "lease");
  if (!json) return json.error();
  FieldReader fields(*json);
  Lease lease;
  lease.id = fields.String("id");
  lease.gpu_uuids = fields.StringArray("gpu_uuids");
  lease.holder = ReadProcessIdentity(fields, "holder");
  lease.uid = static_cast<uint32_t>(fields.Unsigned("uid", UINT32_MAX));
  lease.user = fields.String("user");
  lease.command = fields.String("command");
  lease.created_unix_ms = fields.Integer("created_unix_ms");
  lease.shared_bytes = fields.OptionalUnsigned("shared_bytes");
  lease.reservation_deadline_unix_ms = fields.OptionalInteger("reservation_deadline_unix_ms");
  for (uint64_t pid : fields.UnsignedArray("reservation_baseline_pids", UINT32_MAX)) {
    lease.reservation_baseline_pids.push_back(static_cast<uint32_t>(pid));
  }
  lease.container_id = fields.OptionalString("container_id");
  if (std::optional<uint64_t> session = fields.OptionalUnsigned("holder_session", INT32_MAX))
    lease.holder_session = static_cast<int>(*session);
  lease.holder_start_stack = fields.OptionalUnsigned("holder_start_stack");
  if (!fields.error() && !IsValidRecordId(lease.id)) {
    fields.Fail("id", "must be 1 to 128 letters, digits, '-' or '_'");
  }
  if (!fields.error() && lease.gpu_uuids.empty()) fields.Fail("gpu_uuids", "names no GPU");
  if (!fields.error() &&
      !std::all_of(lease.gpu_uuids.begin(), lease.gpu_uuids.end(), IsGpuUuidShaped))
    fields.Fail("gpu_uuids", "holds something that is not a GPU UUID");
  if (!fields.error() && lease.container_id && !IsContainerId(*lease.container_id))
    fields.Fail("container_id", "is not a docker container id (64 hex digits)");
  if (fields.error()) return MakeError(ExitCode::kError, "lease: " + *fields.error());
  return lease;
}

}  // namespace gpupin
