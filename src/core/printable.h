// Text from outside (other users' files, /proc, the command line) made safe
// to print on one line of a terminal.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace gpupin {

// `text` with every control character (a newline, the escape that starts a
// sequence able to rewrite a terminal, a C1 control, a bidirectional
// override, a line separator) and every character a terminal shows as
// nothing (the soft hyphen, a zero width space, a tag) and every byte that
// is not part of well-formed UTF-8 replaced by '?', cut to at most
// `max_bytes` (never inside a UTF-8 sequence) with "..." added when cut.
std::string Printable(std::string_view text, size_t max_bytes = 200);

// Printable, never cut: for a message or a value shown once, in full, where
// a cell's 200 bytes would hide what the user needs.
std::string PrintableWhole(std::string_view text);

}  // namespace gpupin
