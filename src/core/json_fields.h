// Typed reading of the versioned JSON records gpupin keeps in the shared
// state directory (leases, queue tickets). Every file there may be written
// by another user, so a reader checks every field's presence and type and
// reports the first problem as one line, never by throwing.
#pragma once

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace gpupin {

// Parses `text` as a JSON object whose "format_version" equals `version`.
// `what` names the record in messages ("lease", "queue ticket").
Result<nlohmann::json> ParseVersionedObject(std::string_view text, int version,
                                            std::string_view what);

// Reads fields of one JSON object. The first problem is kept in error() and
// later reads return empty values, so a parser reads all fields and checks
// once at the end. Optional fields may be absent or null.
class FieldReader {
 public:
  // `prefix` qualifies field names in messages ("holder." gives "holder.pid").
  explicit FieldReader(const nlohmann::json& object, std::string prefix = "");

  std::string String(const char* key);
  std::optional<std::string> OptionalString(const char* key);
  uint64_t Unsigned(const char* key, uint64_t max = std::numeric_limits<uint64_t>::max());
  std::optional<uint64_t> OptionalUnsigned(const char* key,
                                           uint64_t max = std::numeric_limits<uint64_t>::max());
  int64_t Integer(const char* key);
  std::optional<int64_t> OptionalInteger(const char* key);
  std::vector<std::string> StringArray(const char* key);
  std::vector<uint64_t> UnsignedArray(const char* key,
                                      uint64_t max = std::numeric_limits<uint64_t>::max());
  // The nested object, or an empty object after recording an error.
  const nlohmann::json& Object(const char* key);

  // Records a problem found by the caller (e.g. a value out of its domain).
  void Fail(const char* key, std::string_view problem);
  const std::optional<std::string>& error() const { return error_; }

 private:
  const nlohmann::json* Find(const char* key, bool optional);

  const nlohmann::json& object_;
  std::string prefix_;
  std::optional<std::string> error_;
};

// Whether `id` can name a record file in the shared directory: 1 to 128 of
// [A-Za-z0-9_-], so it never is ".", "..", hidden, or holds a '/'.
bool IsValidRecordId(std::string_view id);

// Whether `uuid` is shaped like a UUID NVML gives ("GPU-" and 36
// characters, or a MIG form of up to about 60): 1 to 96 printable ASCII
// characters without spaces. Anything else in a record is not one, and
// would only widen every table that shows it.
bool IsGpuUuidShaped(std::string_view uuid);

}  // namespace gpupin
