// Small pieces every --json answer is built from.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace gpupin {

// A value the driver or a record may lack: the value, or JSON null.
template <class T>
nlohmann::ordered_json OrNull(const std::optional<T>& value) {
  return value ? nlohmann::ordered_json(*value) : nlohmann::ordered_json(nullptr);
}

// Text NVML could not give (a lost GPU's name, UUID or bus id): null rather
// than "".
inline nlohmann::ordered_json TextOrNull(const std::string& text) {
  return text.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(text);
}

// The text of a --json answer. Non-ASCII is escaped, so that a U+009B (CSI)
// or U+202E in a process's or another user's command cannot reach a
// terminal, and bytes that are not UTF-8 (a name from /proc) are replaced
// where nlohmann would throw.
template <class Json>
std::string JsonText(const Json& json, int indent = 2) {
  return json.dump(indent, ' ', /*ensure_ascii=*/true, Json::error_handler_t::replace);
}

}  // namespace gpupin
