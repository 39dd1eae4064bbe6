#include "core/wrapper_command.h"

#include <algorithm>
#include <array>
#include <string_view>

#include "core/env_words.h"

namespace gpupin {
namespace {

bool IsShell(std::string_view program) {
  std::string_view name = program.substr(program.rfind('/') + 1);
  if (name.starts_with('-')) name.remove_prefix(1);  // a login shell
  constexpr std::array kShells = {"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash"};
  return std::find(kShells.begin(), kShells.end(), name) != kShells.end();
}

// `-c`, or a cluster of single-letter options that holds it (`-ec`, `-lc`).
bool IsScriptOption(std::string_view word) {
  if (word.size() < 2 || word[0] != '-' || word[1] == '-') return false;
  word.remove_prefix(1);
  return word.find('c') != std::string_view::npos &&
         std::all_of(word.begin(), word.end(), [](char c) { return c >= 'a' && c <= 'z'; });
}

}  // namespace

bool OnlyRunsCommand(const std::vector<std::string>& parent,
                     const std::vector<std::string>& child) {
  if (child.empty()) return false;
  if (parent.size() > child.size() &&
      std::equal(child.begin(), child.end(), parent.end() - static_cast<long>(child.size())))
    return true;
  // sh -c SCRIPT [NAME ARGS...]: the script runs with its own $0 and $@.
  if (parent.size() < 3 || !IsShell(parent[0]) || !IsScriptOption(parent[1])) return false;
  Result<std::vector<std::string>> words = SplitShellWords(parent[2]);
  return words.ok() && *words == child;
}

}  // namespace gpupin
