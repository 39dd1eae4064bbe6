#include "sys/c_string_array.h"

#include <utility>

namespace gpupin {

CStringArray::CStringArray(std::vector<std::string> strings) : strings_(std::move(strings)) {
  pointers_.reserve(strings_.size() + 1);
  for (std::string& text : strings_) pointers_.push_back(text.data());
  pointers_.push_back(nullptr);
}

CStringArray EnvironmentBlock(const std::map<std::string, std::string>& variables) {
  std::vector<std::string> entries;
  entries.reserve(variables.size());
  for (const auto& [name, value] : variables) {
    std::string& entry = entries.emplace_back(name);
    entry.append("=").append(value);
  }
  return CStringArray(std::move(entries));
}

}  // namespace gpupin
