// The environment given to `gpupin map --env 'A=B C=D'`: one string split
// into words the way a shell would split a simple assignment list. Pure.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "core/error.h"

namespace gpupin {

// Splits `text` on unquoted whitespace. Within a word, '...' keeps every
// character literally, "..." keeps them but lets a backslash escape " and \,
// and outside quotes a backslash escapes the next character. Every word must
// be NAME=VALUE with NAME a shell variable name; a later word overrides an
// earlier one. Fails (ExitCode::kUsage, naming the word) on a word without
// '=', an invalid name or an unterminated quote.
Result<std::map<std::string, std::string>> ParseEnvWords(std::string_view text);

}  // namespace gpupin
