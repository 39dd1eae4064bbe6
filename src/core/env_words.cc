#include "core/env_words.h"

#include <fmt/format.h>

#include <cctype>
#include <vector>

namespace gpupin {
namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

bool IsValidName(std::string_view name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

Error UsageError(std::string message) { return MakeError(ExitCode::kUsage, std::move(message)); }

}  // namespace

Result<std::vector<std::string>> SplitShellWords(std::string_view text) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  size_t i = 0;
  while (i < text.size()) {
    char c = text[i];
    if (IsSpace(c)) {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
      ++i;
      continue;
    }
    in_word = true;
    if (c == '\'') {
      size_t close = text.find('\'', i + 1);
      if (close == std::string_view::npos)
        return UsageError(fmt::format("unterminated ' in '{}'", text));
      word.append(text.substr(i + 1, close - i - 1));
      i = close + 1;
    } else if (c == '"') {
      ++i;
      while (i < text.size() && text[i] != '"') {
        if (text[i] == '\\' && i + 1 < text.size() && (text[i + 1] == '"' || text[i + 1] == '\\'))
          ++i;
        word += text[i++];
      }
      if (i >= text.size()) return UsageError(fmt::format("unterminated \" in '{}'", text));
      ++i;
    } else if (c == '\\' && i + 1 < text.size()) {
      word += text[i + 1];
      i += 2;
    } else {
      word += c;
      ++i;
    }
  }
  if (in_word) words.push_back(std::move(word));
  return words;
}

Result<std::map<std::string, std::string>> ParseEnvWords(std::string_view text) {
  Result<std::vector<std::string>> words = SplitShellWords(text);
  if (!words.ok()) return words.error().OfOption("--env");
  std::map<std::string, std::string> environment;
  for (const std::string& word : *words) {
    size_t equals = word.find('=');
    if (equals == std::string::npos) {
      return OptionError(
          "--env",
          fmt::format("'{}' is not NAME=VALUE; write e.g. --env 'CUDA_VISIBLE_DEVICES=0,1'", word));
    }
    std::string name = word.substr(0, equals);
    if (!IsValidName(name))
      return OptionError("--env", fmt::format("'{}' is not a variable name (in '{}')", name, word));
    environment[name] = word.substr(equals + 1);
  }
  return environment;
}

}  // namespace gpupin
