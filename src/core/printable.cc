#include "core/printable.h"

namespace gpupin {

std::string Printable(std::string_view text, size_t max_bytes) {
  std::string out;
  for (char c : text) {
    if (out.size() >= max_bytes) {
      // Cut inside a UTF-8 sequence (`c` continues it): drop its first part.
      if ((static_cast<unsigned char>(c) & 0xC0) == 0x80) {
        while (!out.empty() && (static_cast<unsigned char>(out.back()) & 0xC0) == 0x80)
          out.pop_back();
        if (!out.empty() && static_cast<unsigned char>(out.back()) >= 0xC0) out.pop_back();
      }
      return out + "...";
    }
    unsigned char byte = static_cast<unsigned char>(c);
    out += (byte < 0x20 || byte == 0x7f) ? '?' : c;
  }
  return out;
}

}  // namespace gpupin
