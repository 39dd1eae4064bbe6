#include "cli/completion.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "cli/machine_state.h"

namespace gpupin {
namespace {

std::vector<std::string> Split(std::string_view text, char separator) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    const size_t end = text.find(separator, start);
    parts.emplace_back(text.substr(start, end - start));
    if (end == std::string_view::npos) return parts;
    start = end + 1;
  }
}

// What the value text of --help (`IDS`, `free|util|index`,
// `TEXT:{bash,zsh}`) says an option or argument takes.
CompletionValue ClassifyValue(const std::string& text, std::vector<std::string>& choices) {
  const size_t open = text.find('{');
  const size_t close = text.rfind('}');
  if (open != std::string::npos && close != std::string::npos && close > open) {
    choices = Split(std::string_view(text).substr(open + 1, close - open - 1), ',');
    return CompletionValue::kChoices;
  }
  if (text.find('|') != std::string::npos &&
      std::all_of(text.begin(), text.end(), [](char c) { return std::islower(c) || c == '|'; })) {
    choices = Split(text, '|');
    return CompletionValue::kChoices;
  }
  if (text.find("LEASE-ID") != std::string::npos) return CompletionValue::kLeaseIds;
  if (text.find("IDS") != std::string::npos) return CompletionValue::kGpuIds;
  if (text.find("FILE") != std::string::npos || text.find("PATH") != std::string::npos)
    return CompletionValue::kFile;
  if (text.find("DIR") != std::string::npos) return CompletionValue::kDirectory;
  return CompletionValue::kText;
}

std::string ValueText(const CLI::Option& option) {
  return option.get_option_text().empty() ? option.get_type_name() : option.get_option_text();
}

void Describe(const CLI::App& app, std::vector<std::string> path,
              const std::vector<std::string>& runs_command,
              std::vector<CompletableCommand>& commands) {
  CompletableCommand command;
  command.path = path;
  command.summary = app.get_description();
  command.runs_command = path.size() == 1 && std::find(runs_command.begin(), runs_command.end(),
                                                       path.front()) != runs_command.end();
  for (const CLI::Option* option : app.get_options()) {
    if (option->get_group().empty()) continue;  // hidden
    std::vector<std::string> choices;
    const CompletionValue value = option->get_type_size() == 0
                                      ? CompletionValue::kNone
                                      : ClassifyValue(ValueText(*option), choices);
    if (option->get_positional()) {
      command.arguments = value;
      command.argument_choices = choices;
      continue;
    }
    CompletableOption completable{
        .help = option->get_description(),
        .value = value,
        .value_optional = value != CompletionValue::kNone && option->get_expected_min() == 0,
        .choices = choices};
    for (const std::string& name : option->get_snames()) completable.names.push_back("-" + name);
    for (const std::string& name : option->get_lnames()) completable.names.push_back("--" + name);
    command.options.push_back(std::move(completable));
  }
  commands.push_back(std::move(command));
  for (const CLI::App* nested : app.get_subcommands({})) {
    std::vector<std::string> nested_path = path;
    nested_path.push_back(nested->get_name());
    Describe(*nested, nested_path, runs_command, commands);
  }
}

Result<int> ListIds(World& world, const std::string& what) {
  if (what == "gpus") {
    Result<GpuSource*> gpus = world.Gpus();
    if (!gpus.ok()) return gpus.error();
    // The indices are part of every GPU's identity: no other fact is needed.
    Result<Inventory> inventory = (*gpus)->Snapshot(GpuFacts{0});
    if (!inventory.ok()) return inventory.error();
    for (const Gpu& gpu : inventory->gpus) std::printf("%u\n", gpu.index);
    return 0;
  }
  // Completing a word must not create the state directory.
  if (world.StateDirMissing()) return 0;
  Result<LeaseStore*> store = world.Leases();
  if (!store.ok()) return store.error();
  Result<std::vector<Lease>> leases = (*store)->ReadLeases();
  if (!leases.ok()) return leases.error();
  // `release` ends only the user's own, and only what still holds.
  const auto uid = static_cast<uint32_t>(getuid());
  const LivenessFacts facts = MakeLivenessFacts(Inventory{}, world.procfs());
  for (const Lease& lease : *leases) {
    if (lease.uid == uid && EvaluateLease(lease, facts) == LeaseState::kLive)
      std::printf("%s\n", lease.id.c_str());
  }
  return 0;
}

}  // namespace

std::vector<CompletableCommand> DescribeCommandLine(const CLI::App& app,
                                                    const std::vector<std::string>& runs_command) {
  std::vector<CompletableCommand> commands;
  Describe(app, {}, runs_command, commands);
  return commands;
}

CommandSpec CompletionCommand() {
  return {"completion",
          "print the completion script for bash, zsh or fish, e.g. "
          "source <(gpupin completion bash)",
          [](CLI::App& app) {
            auto shell = std::make_shared<std::string>();
            auto list = std::make_shared<std::string>();
            app.add_option("shell", *shell, "the shell the script is for")
                ->option_text("bash|zsh|fish")
                ->check(CLI::IsMember({"bash", "zsh", "fish"}));
            app.add_option("--list", *list,
                           "instead, print the ids the scripts complete, one a line: the GPUs' "
                           "indices, or your lease ids")
                ->option_text("gpus|leases")
                ->check(CLI::IsMember({"gpus", "leases"}));
            return [shell, list, &app](World& world) -> Result<int> {
              if (!list->empty()) return ListIds(world, *list);
              if (shell->empty()) {
                return MakeError(ExitCode::kUsage,
                                 "give a shell: gpupin completion bash, zsh or fish");
              }
              std::vector<std::string> runs_command;
              for (const CommandSpec& command : AllCommands()) {
                if (command.runs_command) runs_command.emplace_back(command.name);
              }
              const std::vector<CompletableCommand> commands =
                  DescribeCommandLine(*app.get_parent(), runs_command);
              const std::string script = *shell == "bash"  ? BashCompletion(commands)
                                         : *shell == "zsh" ? ZshCompletion(commands)
                                                           : FishCompletion(commands);
              std::fputs(script.c_str(), stdout);
              return 0;
            };
          },
          /*runs_command=*/false,
          /*reads_every_command=*/true};
}

}  // namespace gpupin
