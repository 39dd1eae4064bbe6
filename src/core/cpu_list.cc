#include "core/cpu_list.h"

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

}  // namespace gpupin
