#include "core/printable.h"

#include <optional>

namespace gpupin {
namespace {

struct CodePoint {
  char32_t value;
  size_t length;  // bytes of its UTF-8 sequence
};

// The well-formed UTF-8 sequence at the start of `text` (RFC 3629: no
// overlong forms, no surrogates, nothing above U+10FFFF), or nullopt.
std::optional<CodePoint> DecodeUtf8(std::string_view text) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(0);
  if (lead < 0x80) return CodePoint{lead, 1};
  size_t length = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2;
  if (lead < 0xC2 || lead > 0xF4 || text.size() < length) return std::nullopt;
  char32_t value = lead & (0x7F >> length);
  for (size_t i = 1; i < length; ++i) {
    if ((byte(i) & 0xC0) != 0x80) return std::nullopt;
    value = (value << 6) | (byte(i) & 0x3F);
  }
  const char32_t smallest[] = {0, 0, 0x80, 0x800, 0x10000};
  if (value < smallest[length] || value > 0x10FFFF || (value >= 0xD800 && value <= 0xDFFF))
    return std::nullopt;
  return CodePoint{value, length};
}

// What can move the cursor, start an escape sequence, break the line or
// reorder the text around it: C0 and C1 controls (U+009B is a CSI by
// itself), the line and paragraph separators, and the bidirectional
// controls (U+202E shows what follows it backwards).
bool Unsafe(char32_t c) {
  return c < 0x20 || (c >= 0x7F && c <= 0x9F) || c == 0x061C || c == 0x200E || c == 0x200F ||
         (c >= 0x2028 && c <= 0x202E) || (c >= 0x2066 && c <= 0x2069);
}

// What a terminal shows as nothing, so that text can hide in plain sight:
// "ro\u00adot" and "ro\u200bot" both read "root". The soft hyphen, zero
// width spaces and joiners, invisible operators, the byte order mark,
// fillers and variation selectors, interlinear annotation marks, shorthand
// format controls, and tags (with the rest of the plane's E0000-E0FFF,
// which Unicode keeps default-ignorable).
bool Invisible(char32_t c) {
  return c == 0x00AD || c == 0x034F || c == 0x115F || c == 0x1160 || c == 0x17B4 || c == 0x17B5 ||
         (c >= 0x180B && c <= 0x180F) || (c >= 0x200B && c <= 0x200D) ||
         (c >= 0x2060 && c <= 0x2065) || (c >= 0x206A && c <= 0x206F) || c == 0x3164 ||
         (c >= 0xFE00 && c <= 0xFE0F) || c == 0xFEFF || c == 0xFFA0 ||
         (c >= 0xFFF9 && c <= 0xFFFB) || (c >= 0x1BCA0 && c <= 0x1BCA3) ||
         (c >= 0x1D173 && c <= 0x1D17A) || (c >= 0xE0000 && c <= 0xE0FFF);
}

}  // namespace

std::string Printable(std::string_view text, size_t max_bytes) {
  std::string out;
  while (!text.empty()) {
    std::optional<CodePoint> next = DecodeUtf8(text);
    const size_t consumed = next ? next->length : 1;
    const std::string_view piece = next && !Unsafe(next->value) && !Invisible(next->value)
                                       ? text.substr(0, consumed)
                                       : std::string_view("?");
    if (out.size() + piece.size() > max_bytes) return out + "...";
    out += piece;
    text.remove_prefix(consumed);
  }
  return out;
}

std::string PrintableWhole(std::string_view text) { return Printable(text, std::string::npos); }

}  // namespace gpupin
