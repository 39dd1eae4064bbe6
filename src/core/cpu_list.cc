#include "core/cpu_list.h"

#include <algorithm>
#include <charconv>
#include <climits>

namespace gpupin {

std::string FormatCpuList(std::span<const unsigned long> mask) {
  constexpr size_t kBitsPerWord = sizeof(unsigned long) * CHAR_BIT;
  const size_t cpu_count = mask.size() * kBitsPerWord;
  auto is_set = [&](size_t cpu) {
    return (mask[cpu / kBitsPerWord] >> (cpu % kBitsPerWord)) & 1UL;
  };

  std::string text;
  size_t cpu = 0;
  while (cpu < cpu_count) {
    if (!is_set(cpu)) {
      ++cpu;
      continue;
    }
    const size_t first = cpu;
    while (cpu + 1 < cpu_count && is_set(cpu + 1)) ++cpu;
    if (!text.empty()) text += ',';
    text += std::to_string(first);
    if (cpu > first) text += '-' + std::to_string(cpu);
    ++cpu;
  }
  return text;
}

std::string FormatCpuIds(const std::set<uint32_t>& ids) {
  constexpr size_t kBitsPerWord = sizeof(unsigned long) * CHAR_BIT;
  std::vector<unsigned long> mask(ids.empty() ? 0 : *ids.rbegin() / kBitsPerWord + 1);
  for (uint32_t id : ids) mask[id / kBitsPerWord] |= 1UL << (id % kBitsPerWord);
  return FormatCpuList(mask);
}

std::optional<std::vector<uint32_t>> ParseCpuList(std::string_view text) {
  std::set<uint32_t> ids;
  auto number = [](std::string_view digits) -> std::optional<uint32_t> {
    uint32_t value = 0;
    auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (error != std::errc() || end != digits.data() + digits.size() || value >= kMaxCpuId)
      return std::nullopt;
    return value;
  };
  while (!text.empty()) {
    size_t comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    if (comma != std::string_view::npos && text.empty()) return std::nullopt;  // "0,"
    size_t dash = item.find('-');
    std::optional<uint32_t> first = number(item.substr(0, dash));
    std::optional<uint32_t> last =
        dash == std::string_view::npos ? first : number(item.substr(dash + 1));
    if (!first || !last || *last < *first) return std::nullopt;
    for (uint32_t id = *first; id <= *last; ++id) ids.insert(id);
  }
  return std::vector<uint32_t>(ids.begin(), ids.end());
}

}  // namespace gpupin
