// Shell completion scripts (bash, zsh, fish), written from a description of
// gpupin's command line that cli/completion.cc reads off the command table:
// whatever the table holds completes, with nothing to keep in sync by hand.
#pragma once

#include <string>
#include <vector>

namespace gpupin {

// What an option's value, or a command's other words, complete to.
enum class CompletionValue {
  kNone,       // a flag, or a command without arguments
  kText,       // anything: nothing to offer
  kChoices,    // one of a fixed set
  kFile,       // a file name
  kDirectory,  // a directory name
  kGpuIds,     // GPU ids, comma-separated (`gpupin completion --list gpus`)
  kLeaseIds,   // the user's lease ids (`gpupin completion --list leases`)
};

struct CompletableOption {
  std::vector<std::string> names;  // as typed: "-n", "--count"
  std::string help;
  CompletionValue value = CompletionValue::kNone;
  // `--wait [=DURATION]`: the next word is no value of it when completing.
  bool value_optional = false;
  std::vector<std::string> choices;  // for kChoices
};

struct CompletableCommand {
  std::vector<std::string> path;  // {} for gpupin itself, {"slurm", "gres"}
  std::string summary;
  std::vector<CompletableOption> options;
  CompletionValue arguments = CompletionValue::kNone;
  std::vector<std::string> argument_choices;  // for kChoices
  // `run -- COMMAND`: the words after "--" are a command line of the user's.
  bool runs_command = false;
};

// `commands` lists gpupin itself first (empty path, its options the global
// ones, valid after any command), then every command and nested command.
std::string BashCompletion(const std::vector<CompletableCommand>& commands);
std::string ZshCompletion(const std::vector<CompletableCommand>& commands);
std::string FishCompletion(const std::vector<CompletableCommand>& commands);

}  // namespace gpupin
