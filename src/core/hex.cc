#include "core/hex.h"

#include <algorithm>

namespace gpupin {

bool IsLowerHex(std::string_view text, size_t digits) {
  return text.size() == digits && std::all_of(text.begin(), text.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

}  // namespace gpupin
