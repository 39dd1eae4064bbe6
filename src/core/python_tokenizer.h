// A Python tokenizer, enough to reason about statements without being fooled
// by strings, comments or line joining: names, numbers, operators, strings
// of every form (prefixes, triple quotes, f-strings with nested quotes as in
// Python 3.12), NEWLINE at the end of each logical line, INDENT/DEDENT.
// Comments and blank lines produce no tokens. Pure, and total: any bytes
// give a token stream (an unterminated string ends at its line or at the end
// of input), in time linear in the input.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpupin {

enum class PyTokenKind {
  kName,
  kNumber,
  kString,
  kOp,  // operators and punctuation; also any byte that starts no other token
  kNewline,
  kIndent,
  kDedent,
  kEnd,
};

struct PyToken {
  PyTokenKind kind = PyTokenKind::kEnd;
  std::string_view text;  // a view into the tokenized source, prefix and quotes included
  int line = 1;           // 1-based line where the token starts
  // Indentation depth of the token's logical line: 0 at module level, +1
  // for each INDENT still open.
  int indent_level = 0;
};

// Tokens end with exactly one kEnd; every INDENT is matched by a DEDENT.
// The views point into `source`, which must outlive the result.
std::vector<PyToken> TokenizePython(std::string_view source);

// The value of a string token when it is a constant: the text between the
// quotes, with the escapes of a non-raw string decoded (\\ \' \" \n \t \r
// \xHH; others kept as written). Nullopt for an f-string with a replacement
// field and for an unterminated string.
std::optional<std::string> PyStringValue(const PyToken& token);

// Number of lines of `source` as an editor counts them (\n, \r\n and \r end
// a line; a final line without a line break counts).
int PyLineCount(std::string_view source);

}  // namespace gpupin
