#include "core/json_fields.h"

#include <fmt/format.h>

#include <algorithm>

namespace gpupin {
namespace {

const nlohmann::json& EmptyObject() {
  static const nlohmann::json kEmpty = nlohmann::json::object();
  return kEmpty;
}

bool UnsignedAtMost(const nlohmann::json& value, uint64_t max) {
  // nlohmann stores non-negative integers as unsigned, negative ones as
  // integer; floats ("1.0") are not accepted where a count is expected.
  return value.is_number_unsigned() && value.get<uint64_t>() <= max;
}

std::string UnsignedDomain(uint64_t max) {
  return max == std::numeric_limits<uint64_t>::max()
             ? "must be a non-negative integer"
             : fmt::format("must be an integer from 0 to {}", max);
}

}  // namespace

Result<nlohmann::json> ParseVersionedObject(std::string_view text, int version,
                                            std::string_view what) {
  nlohmann::json json = nlohmann::json::parse(text.begin(), text.end(), nullptr, false);
  if (json.is_discarded()) {
    return MakeError(ExitCode::kError, fmt::format("{} is not valid JSON (truncated?)", what));
  }
  if (!json.is_object()) {
    return MakeError(ExitCode::kError, fmt::format("{} is not a JSON object", what));
  }
  auto it = json.find("format_version");
  if (it == json.end()) {
    return MakeError(ExitCode::kError, fmt::format("{} has no format_version", what));
  }
  if (!it->is_number_integer() || it->get<int64_t>() != version) {
    return MakeError(ExitCode::kError,
                     fmt::format("{} has format_version {}; this gpupin reads only version {}",
                                 what, it->dump(), version));
  }
  return json;
}

FieldReader::FieldReader(const nlohmann::json& object, std::string prefix)
    : object_(object), prefix_(std::move(prefix)) {}

void FieldReader::Fail(const char* key, std::string_view problem) {
  if (!error_) error_ = fmt::format("field '{}{}' {}", prefix_, key, problem);
}

const nlohmann::json* FieldReader::Find(const char* key, bool optional) {
  if (error_) return nullptr;
  auto it = object_.find(key);
  if (it == object_.end() || (optional && it->is_null())) {
    if (!optional) Fail(key, "is missing");
    return nullptr;
  }
  return &*it;
}

std::string FieldReader::String(const char* key) {
  const nlohmann::json* value = Find(key, false);
  if (value == nullptr) return {};
  if (!value->is_string()) {
    Fail(key, "must be a string");
    return {};
  }
  return value->get<std::string>();
}

std::optional<std::string> FieldReader::OptionalString(const char* key) {
  if (Find(key, true) == nullptr) return std::nullopt;
  std::string value = String(key);
  if (error_) return std::nullopt;
  return value;
}

uint64_t FieldReader::Unsigned(const char* key, uint64_t max) {
  const nlohmann::json* value = Find(key, false);
  if (value == nullptr) return 0;
  if (!UnsignedAtMost(*value, max)) {
    Fail(key, UnsignedDomain(max));
    return 0;
  }
  return value->get<uint64_t>();
}

std::optional<uint64_t> FieldReader::OptionalUnsigned(const char* key, uint64_t max) {
  if (Find(key, true) == nullptr) return std::nullopt;
  uint64_t value = Unsigned(key, max);
  if (error_) return std::nullopt;
  return value;
}

int64_t FieldReader::Integer(const char* key) {
  const nlohmann::json* value = Find(key, false);
  if (value == nullptr) return 0;
  bool fits = value->is_number_integer() &&
              (!value->is_number_unsigned() ||
               value->get<uint64_t>() <= uint64_t{std::numeric_limits<int64_t>::max()});
  if (!fits) {
    Fail(key, "must be an integer");
    return 0;
  }
  return value->get<int64_t>();
}

std::optional<int64_t> FieldReader::OptionalInteger(const char* key) {
  if (Find(key, true) == nullptr) return std::nullopt;
  int64_t value = Integer(key);
  if (error_) return std::nullopt;
  return value;
}

std::vector<std::string> FieldReader::StringArray(const char* key) {
  const nlohmann::json* value = Find(key, false);
  if (value == nullptr) return {};
  std::vector<std::string> result;
  if (value->is_array()) {
    for (const nlohmann::json& item : *value) {
      if (!item.is_string()) break;
      result.push_back(item.get<std::string>());
    }
  }
  if (!value->is_array() || result.size() != value->size()) {
    Fail(key, "must be an array of strings");
    return {};
  }
  return result;
}

std::vector<uint64_t> FieldReader::UnsignedArray(const char* key, uint64_t max) {
  const nlohmann::json* value = Find(key, false);
  if (value == nullptr) return {};
  std::vector<uint64_t> result;
  if (value->is_array()) {
    for (const nlohmann::json& item : *value) {
      if (!UnsignedAtMost(item, max)) break;
      result.push_back(item.get<uint64_t>());
    }
  }
  if (!value->is_array() || result.size() != value->size()) {
    Fail(key, fmt::format("must be an array of integers from 0 to {}", max));
    return {};
  }
  return result;
}

const nlohmann::json& FieldReader::Object(const char* key) {
  const nlohmann::json* value = Find(key, false);
  if (value == nullptr) return EmptyObject();
  if (!value->is_object()) {
    Fail(key, "must be an object");
    return EmptyObject();
  }
  return *value;
}

bool IsGpuUuidShaped(std::string_view uuid) {
  constexpr size_t kLongest = 96;
  return !uuid.empty() && uuid.size() <= kLongest &&
         std::all_of(uuid.begin(), uuid.end(), [](char c) { return c > ' ' && c < 0x7f; });
}

bool IsValidRecordId(std::string_view id) {
  if (id.empty() || id.size() > 128) return false;
  for (char c : id) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

}  // namespace gpupin
