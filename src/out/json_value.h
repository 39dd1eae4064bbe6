// Small pieces every --json answer is built from.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>

namespace gpupin {

// A value the driver or a record may lack: the value, or JSON null.
template <class T>
nlohmann::ordered_json OrNull(const std::optional<T>& value) {
  return value ? nlohmann::ordered_json(*value) : nlohmann::ordered_json(nullptr);
}

}  // namespace gpupin
