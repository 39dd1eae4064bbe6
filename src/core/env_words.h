// Text split into words the way a shell splits a simple command: the
// environment given to `gpupin map --env 'A=B C=D'`, and the script of a
// `sh -c` that may only run gpupin (sys/procfs). Pure.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace gpupin {

// Splits `text` on unquoted whitespace. Within a word, '...' keeps every
// character literally, "..." keeps them but lets a backslash escape " and \,
// and outside quotes a backslash escapes the next character. Nothing else of
// the shell's syntax is known: `;` or `$X` stay characters of a word. Fails
// (ExitCode::kUsage) on an unterminated quote.
Result<std::vector<std::string>> SplitShellWords(std::string_view text);

// The words of SplitShellWords as an environment. Every word must
// be NAME=VALUE with NAME a shell variable name; a later word overrides an
// earlier one. Fails (ExitCode::kUsage, naming the word) on a word without
// '=', an invalid name or an unterminated quote.
Result<std::map<std::string, std::string>> ParseEnvWords(std::string_view text);

}  // namespace gpupin
