// The lease file format (doc/state-dir.md): one JSON object per lease with a
// format_version. Readers reject an unknown version and any missing or
// mistyped field with a one-line message; they never throw.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "core/error.h"
#include "core/json_fields.h"
#include "core/lease.h"

namespace gpupin {

inline constexpr int kLeaseFormatVersion = 1;

std::string LeaseToJson(const Lease& lease);
Result<Lease> LeaseFromJson(std::string_view text);

// {"pid": N, "start_time_ticks": T}, shared with queue tickets.
nlohmann::json ProcessIdentityToJson(const ProcessIdentity& identity);
// Reads object field `key` as a ProcessIdentity; problems go to `fields`.
ProcessIdentity ReadProcessIdentity(FieldReader& fields, const char* key);

}  // namespace gpupin
