// Feeds arbitrary text to ParseEnvWords (`gpupin map --env`) and traps when
// an invariant breaks: every name it returns is a shell variable name, a
// failure is a usage error with a message, and text without quotes or
// backslashes splits exactly like a naive split on whitespace.
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>

#include "core/env_words.h"

namespace gpupin {
namespace {

void Check(bool condition) {
  if (!condition) __builtin_trap();
}

bool IsShellName(const std::string& name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

// The answer for text with no quoting at all, split the obvious way.
std::optional<std::map<std::string, std::string>> NaiveSplit(const std::string& text) {
  std::map<std::string, std::string> env;
  std::istringstream words(text);
  std::string word;
  while (words >> word) {
    size_t equals = word.find('=');
    if (equals == std::string::npos || !IsShellName(word.substr(0, equals))) return std::nullopt;
    env[word.substr(0, equals)] = word.substr(equals + 1);
  }
  return env;
}

}  // namespace
}  // namespace gpupin

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gpupin;
  std::string text(reinterpret_cast<const char*>(data), size);
  Result<std::map<std::string, std::string>> env = ParseEnvWords(text);
  if (env.ok()) {
    for (const auto& [name, value] : *env) Check(IsShellName(name));
  } else {
    Check(env.error().code == ExitCode::kUsage && !env.error().message.empty());
  }
  // Without quoting, and without the two blanks istream splits on and the
  // parser does not (\v, \f).
  bool plain = text.find_first_of(std::string_view("'\"\\\v\f")) == std::string::npos;
  if (plain) {
    std::optional<std::map<std::string, std::string>> expected = NaiveSplit(text);
    Check(env.ok() == expected.has_value());
    if (expected) Check(*env == *expected);
  }
  return 0;
}
