// Lowercase hexadecimal, as the kernel, container runtimes and gpupin's own
// random names write it.
#pragma once

#include <string_view>

namespace gpupin {

// Whether `text` is `digits` characters of 0-9 and a-f (not A-F).
bool IsLowerHex(std::string_view text, size_t digits);

}  // namespace gpupin
