#include "cli/commands.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>

#include "cli/completion.h"
#include "cli/config.h"
#include "cli/config_files.h"
#include "cli/docker.h"
#include "cli/doctor.h"
#include "cli/env.h"
#include "cli/leases.h"
#include "cli/ls.h"
#include "cli/map.h"
#include "cli/pick.h"
#include "cli/ps.h"
#include "cli/run.h"
#include "cli/slurm.h"
#include "cli/toml_config.h"
#include "cli/version.h"
#include "core/printable.h"
#include "sys/interrupt.h"

namespace gpupin {
namespace {

size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

int PrintError(const Error& error) {
  // One line, whatever the message quotes (a value given, a file's content).
  std::fprintf(stderr, "gpupin: %s\n", PrintableWhole(error.message).c_str());
  return static_cast<int>(error.code);
}

// gpupin's global options as they may stand before the command, and
// whether the next word is their value (`--state-dir DIR`).
struct GlobalOptionWord {
  std::string_view name;
  bool takes_value;
};
constexpr GlobalOptionWord kGlobalOptionWords[] = {
    {"--simulate", true}, {"--nvml", true},     {"--state-dir", true}, {"--config", true},
    {"--json", false},    {"-q", false},        {"--quiet", false},    {"-v", false},
    {"--verbose", false}, {"--version", false}, {"-h", false},         {"--help", false}};

const GlobalOptionWord* GlobalOption(std::string_view word) {
  for (const GlobalOptionWord& option : kGlobalOptionWords) {
    if (option.name == word) return &option;
  }
  return nullptr;
}

bool TakesValue(std::string_view option) {
  const GlobalOptionWord* global = GlobalOption(option);
  return global && global->takes_value;
}

// Whether `word`, standing before the command, is none of the global
// options: `--simulat FILE ls` then takes FILE for the command.
bool UnknownLeadingOption(std::string_view word) {
  std::string_view name = word.substr(0, word.find('='));
  if (GlobalOption(name)) return false;
  // Short flags together: -qv.
  if (name.size() > 1 && name[0] == '-' && name[1] != '-')
    return name.find_first_not_of("qvh", 1) != std::string_view::npos;
  return true;
}

// The words before the command. Global options may stand before or after
// the command; the first word that is neither an option nor an option's
// value is the command.
struct LeadingWords {
  std::optional<std::string> command;
  // Among the options before it (or before "--"): `gpupin --version` with
  // no command and no help needs no command's options.
  bool version = false;
  bool help = false;
  // The first of them that is no global option.
  std::optional<std::string> unknown_option;
};

LeadingWords ReadLeadingWords(int argc, char** argv) {
  LeadingWords words;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--") break;
    if (arg.empty() || arg[0] != '-') {
      words.command = std::string(arg);
      break;
    }
    if (TakesValue(arg)) ++i;
    if (!words.unknown_option && UnknownLeadingOption(arg)) words.unknown_option = arg;
    words.version = words.version || arg == "--version";
    words.help = words.help || arg == "-h" || arg == "--help";
  }
  return words;
}

// Whether a command, or any command under it (as `gres` under `slurm`),
// takes words that are not options.
bool TakesArguments(const CLI::App& command) {
  if (!command.get_options([](const CLI::Option* o) { return o->get_positional(); }).empty())
    return true;
  const std::vector<const CLI::App*> nested = command.get_subcommands({});
  return std::any_of(nested.begin(), nested.end(),
                     [](const CLI::App* sub) { return TakesArguments(*sub); });
}

// Checked before CLI11 opens the file: a FIFO would block the open, and
// /dev/zero would be read until memory runs out.
std::string ConfigFileProblem(const std::string& path) {
  constexpr off_t kMaxBytes = 1 << 20;
  struct stat file {};
  // CLI11 puts "--config: " before the message.
  if (path.empty()) return "give a file name";
  if (stat(path.c_str(), &file) != 0) return fmt::format("{}: {}", path, std::strerror(errno));
  if (!S_ISREG(file.st_mode)) return fmt::format("{}: not a regular file", path);
  if (file.st_size > kMaxBytes)
    return fmt::format("{}: larger than 1 MiB; not a gpupin config file", path);
  return "";
}

constexpr const char* kGlobalOptionsReminder =
    "Global options, before or after the command: --json, --simulate FILE, --nvml PATH,\n"
    "--state-dir DIR, --config FILE, -q, -v (see gpupin --help).";

// A command's own help lists only its own options; the global ones work
// after it too, and `gpupin ls --help` is where a user looks for --json.
void AddGlobalOptionsReminder(CLI::App& command) {
  std::string footer = command.get_footer();
  command.footer(footer + (footer.empty() ? "" : "\n\n") + kGlobalOptionsReminder);
  for (CLI::App* nested : command.get_subcommands({})) AddGlobalOptionsReminder(*nested);
}

// Help without CLI11's notation for a negated flag (`--near, --no-near{false}`),
// and with what a command takes after "--" in its usage line.
class HelpFormatter : public CLI::Formatter {
 public:
  explicit HelpFormatter(std::map<std::string, std::string> usage_tails)
      : usage_tails_(std::move(usage_tails)) {}

  std::string make_usage(const CLI::App* app, std::string name) const override {
    std::string usage = CLI::Formatter::make_usage(app, std::move(name));
    auto tail = usage_tails_.find(app->get_name());
    if (tail == usage_tails_.end() || usage.empty() || usage.back() != '\n') return usage;
    usage.insert(usage.size() - 1, " " + tail->second);
    return usage;
  }

  // The option's own word (N, SIZE, DIR), never CLI11's type and range
  // ("INT:1..4096") nor its "Needs:" notes: each description says in words
  // what the option needs.
  std::string make_option_opts(const CLI::Option* option) const override {
    if (!option->get_option_text().empty()) return " " + option->get_option_text();
    if (option->get_type_size() == 0) return "";
    const std::string type = option->get_type_name();
    return " " + type.substr(0, type.find(':'));
  }

  std::string make_option_name(const CLI::Option* option, bool is_positional) const override {
    std::string name = CLI::Formatter::make_option_name(option, is_positional);
    for (size_t open = name.find('{'); open != std::string::npos; open = name.find('{', open)) {
      const size_t close = name.find('}', open);
      if (close == std::string::npos) break;
      name.erase(open, close - open + 1);
    }
    return name;
  }

 private:
  std::map<std::string, std::string> usage_tails_;
};

// The names an option of `command` (or a global one) can be typed with:
// "-n", "--count".
std::vector<std::string> OptionNames(const CLI::App& app, const CLI::App* command) {
  std::vector<std::string> names;
  for (const CLI::App* owner : {&app, command}) {
    if (owner == nullptr) continue;
    for (const CLI::Option* option : owner->get_options()) {
      for (const std::string& name : option->get_snames()) names.push_back("-" + name);
      for (const std::string& name : option->get_lnames()) names.push_back("--" + name);
    }
  }
  return names;
}

// An option given more times than it takes, said in gpupin's words rather
// than CLI11's ("--state-dir: At Most 1 required but received 2").
std::optional<std::string> RepeatedOption(const CLI::App& app, const CLI::App* command) {
  for (const CLI::App* owner : {&app, command}) {
    if (owner == nullptr) continue;
    for (const CLI::Option* option : owner->get_options()) {
      // A switch (--json) takes no value and is given once, as an option
      // with a value is: a second one is a slip, not a request for more.
      const size_t most = static_cast<size_t>(std::max(option->get_items_expected_max(), 1));
      if (option->count() <= most || option->get_lnames().empty()) continue;
      // A switch and its negation (--near --no-near) ask opposite things.
      const std::vector<std::string>& given = option->results();
      if (option->get_items_expected_max() == 0 && option->get_lnames().size() > 1 &&
          std::adjacent_find(given.begin(), given.end(), std::not_equal_to<>()) != given.end()) {
        std::vector<std::string> names;
        for (const std::string& name : option->get_lnames()) names.push_back("--" + name);
        return fmt::format("{} contradict each other; give one of them", fmt::join(names, " and "));
      }
      // A negation given twice (--no-near --no-near) is named as typed.
      const bool negation_typed = option->get_items_expected_max() == 0 &&
                                  option->get_lnames().size() > 1 && !option->as<bool>();
      return fmt::format("--{} given more than once; give it once",
                         option->get_lnames()[negation_typed ? 1 : 0]);
    }
  }
  return std::nullopt;
}

std::optional<Error> RepeatedOptionError(const CLI::App& app) {
  const std::vector<CLI::App*> chosen = app.get_subcommands();
  std::optional<std::string> repeated =
      RepeatedOption(app, chosen.empty() ? nullptr : chosen.front());
  if (!repeated) return std::nullopt;
  return MakeError(ExitCode::kUsage, *repeated);
}

// Words of a command given to run or docker without the "--" before it.
Error CommandBeforeSeparator(const CLI::App& app, const std::vector<std::string>& words) {
  const bool run = app.get_subcommands().front()->get_name() == "run";
  return MakeError(
      ExitCode::kUsage,
      fmt::format(
          "unexpected '{}': the command goes after '--', as in: {}", fmt::join(words, " "),
          run ? "gpupin run --wait -- python train.py" : "gpupin docker -- run --rm IMAGE CMD"));
}

// The option CLI11 names at the front of its message ("--count: …").
std::optional<std::string_view> OptionNamedFirst(std::string_view message) {
  const size_t colon = message.find(": ");
  if (!message.starts_with("-") || colon == std::string_view::npos) return std::nullopt;
  return message.substr(0, colon);
}

// Where to read about a mistake CLI11 describes in `message`: the help of
// the command typed (`see gpupin slurm gres --help`), unless the message
// begins with an option that command does not have (a global one).
std::string SeeHelp(const CLI::App& app, std::string_view message) {
  std::string path = "gpupin";
  const CLI::App* command = &app;
  for (std::vector<CLI::App*> chosen = app.get_subcommands(); !chosen.empty();
       chosen = chosen.front()->get_subcommands()) {
    command = chosen.front();
    path += " " + command->get_name();
  }
  if (message.starts_with("-")) {
    const std::string option(message.substr(0, message.find_first_of(": =")));
    if (!command->get_option_no_throw(option)) path = "gpupin";
  }
  return fmt::format("see {} --help", path);
}

// CLI11's "--count: '2.5': write a whole number ..." for a value that
// came from --config, not the command line: "FILE:LINE: count: --count: …".
std::optional<Error> ConfigValueRefused(const CLI::App& app, const std::string& message,
                                        std::shared_ptr<std::vector<ConfigSetting>> from_config,
                                        const std::vector<std::string>& typed) {
  const std::optional<std::string_view> option = OptionNamedFirst(message);
  if (!option) return std::nullopt;
  const std::vector<CLI::App*> chosen = app.get_subcommands();
  const CLI::App& command = chosen.empty() ? app : *chosen.front();
  Error refused{ExitCode::kUsage, message};
  refused.option = std::string(*option);
  ConfigSources sources;
  sources.config_option = std::move(from_config);
  sources.command_line = typed;
  Error at_line = AtConfigLine(refused, command, sources);
  if (at_line.message == message && !chosen.empty()) at_line = AtConfigLine(refused, app, sources);
  if (at_line.message == message) return std::nullopt;
  return at_line;
}

// -q keeps gpupin's notes back and -v adds its reasons: together they would
// print the reasons without the notes they explain. The one typed wins over
// a config file's; both typed, or both from files, is a mistake to point out.
Status SettleQuietAndVerbose(const CLI::App& app, const std::vector<std::string>& typed,
                             GlobalOptions& globals) {
  if (!globals.quiet || !globals.verbose) return Ok{};
  const bool typed_quiet = TypedOnCommandLine(*app.get_option("--quiet"), typed);
  const bool typed_verbose = TypedOnCommandLine(*app.get_option("--verbose"), typed);
  if (typed_quiet && typed_verbose)
    return MakeError(ExitCode::kUsage, "-q and -v pull opposite ways; give one of them");
  if (!typed_quiet && !typed_verbose) {
    return MakeError(ExitCode::kUsage,
                     "quiet and verbose are both set by config files; keep one, or type -q or -v "
                     "(gpupin -v config shows where each is set)");
  }
  (typed_quiet ? globals.verbose : globals.quiet) = false;
  return Ok{};
}

}  // namespace

const std::vector<CommandSpec>& AllCommands() {
  static const std::vector<CommandSpec> commands = {
      // clang-format off
      LsCommand(),
      PsCommand(),
      PickCommand(),
      RunCommand(),
      EnvCommand(),
      DockerCommand(),
      MapCommand(),
      DoctorCommand(),
      LeasesCommand(),
      ReleaseCommand(),
      SlurmCommand(),
      CompletionCommand(),
      // Last: it reads every other command's options as set up.
      ConfigCommand(),
      // clang-format on
  };
  return commands;
}

std::string SuggestCommand(std::string_view typed, const std::vector<std::string>& names) {
  std::string best;
  size_t best_distance = 3;  // farther than two edits is not a typo
  for (const std::string& name : names) {
    size_t distance = EditDistance(typed, name);
    if (name.starts_with(typed) && typed.size() >= 2) distance = std::min<size_t>(distance, 1);
    if (distance < best_distance) {
      best_distance = distance;
      best = name;
    }
  }
  return best;
}

int Dispatch(int argc, char** argv, const std::string& admin_config) {
  const std::vector<CommandSpec>& commands = AllCommands();
  const CommandSpec* named = nullptr;
  const LeadingWords leading = ReadLeadingWords(argc, argv);
  const std::optional<std::string>& command_word = leading.command;
  if (const std::optional<std::string>& word = command_word) {
    auto spec = std::find_if(commands.begin(), commands.end(),
                             [&](const CommandSpec& c) { return c.name == *word; });
    if (spec != commands.end()) {
      named = &*spec;
    } else if (const std::optional<std::string>& option = leading.unknown_option) {
      // The word taken for the command is more likely that option's value.
      std::vector<std::string> names;
      for (const GlobalOptionWord& global : kGlobalOptionWords) {
        if (global.name.starts_with("--")) names.emplace_back(global.name);
      }
      std::string suggestion = SuggestCommand(option->substr(0, option->find('=')), names);
      return PrintError(MakeError(
          ExitCode::kUsage,
          suggestion.empty()
              ? fmt::format("unknown option '{}'; see gpupin --help", *option)
              : fmt::format("unknown option '{}'; did you mean '{}'?", *option, suggestion)));
    } else {
      std::vector<std::string> names;
      names.reserve(commands.size());
      for (const CommandSpec& command : commands) names.emplace_back(command.name);
      std::string suggestion = SuggestCommand(*word, names);
      return PrintError(MakeError(
          ExitCode::kUsage,
          suggestion.empty()
              ? fmt::format("unknown command '{}'; see gpupin --help", *word)
              : fmt::format("unknown command '{}'; did you mean '{}'?", *word, suggestion)));
    }
  }

  const bool runs_command = named && named->runs_command;

  CLI::App app("gpupin: put programs on the right NVIDIA GPU of a shared server, and prove it",
               "gpupin");
  std::map<std::string, CommandRunner> runners;
  auto build = [&](const CommandSpec& command) {
    const std::string name(command.name);
    if (runners.contains(name)) return;
    CLI::App* sub = app.add_subcommand(name, std::string(command.summary));
    // CLI11 copies the parent's footer (gpupin's exit codes) into a new
    // command; each command's help has its own.
    sub->footer("");
    sub->fallthrough();
    runners[name] = command.setup(*sub);
    AddGlobalOptionsReminder(*sub);
  };
  const BuildRestOfCommands build_rest = [&] {
    for (const CommandSpec& command : commands) build(command);
  };
  std::map<std::string, std::string> usage_tails;
  for (const CommandSpec& command : commands) {
    if (!command.usage_tail.empty())
      usage_tails[std::string(command.name)] = std::string(command.usage_tail);
  }
  app.formatter(std::make_shared<HelpFormatter>(std::move(usage_tails)));
  app.set_version_flag("--version", VersionLine(GPUPIN_VERSION, kGitDescribe));
  app.require_subcommand(0, 1);
  GlobalOptions globals;
  app.add_flag("--json", globals.json, "machine-readable output (documented schema)");
  app.add_option("--simulate", globals.simulate, "use a simulated server described by FILE")
      ->option_text("FILE");
  app.add_option("--nvml", globals.nvml, "the libnvidia-ml to load (env GPUPIN_NVML_LIBRARY)")
      ->option_text("PATH")
      ->check(CLI::Validator(
          [](const std::string& path) { return path.empty() ? "give a path" : ""; }, "PATH"));
  // An empty value would quietly mean the default directory: leases there
  // and here would not see each other.
  app.add_option("--state-dir", globals.state_dir,
                 "shared state directory (env GPUPIN_STATE_DIR); its parts must be root's or "
                 "its owner's (doc/security.md)")
      ->envname("GPUPIN_STATE_DIR")
      ->option_text("DIR")
      ->check(CLI::Validator(
          [](const std::string& dir) { return dir.empty() ? "give a directory" : ""; }, "DIR"));
  // Defaults for any option, global or per command, from a TOML file (env
  // GPUPIN_CONFIG): `state-dir = "/run/gpupin"`, and per command a section,
  // e.g. `[run]` with `order = "1,2,3,0"`. The command line wins.
  app.set_config("--config", "",
                 "defaults for options, from a TOML file (env GPUPIN_CONFIG); an option that "
                 "does not exist there is an error")
      ->option_text("FILE")
      ->check(CLI::Validator(ConfigFileProblem, "FILE"));
  auto config_option_read = std::make_shared<std::vector<ConfigSetting>>();
  app.config_formatter(
      std::make_shared<TomlConfig>(app, config_option_read, admin_config, build_rest));
  app.add_flag("-q,--quiet", globals.quiet,
               "only errors on stderr (not with -v; a typed one wins over a config file's)");
  app.add_flag("-v,--verbose", globals.verbose, "explain what gpupin does and skips");

  // Only the command that runs is built: building every command's options
  // cost each start about a millisecond (bench/ls_vs_floor.sh). gpupin's
  // own help (no command named) lists them all; --version alone needs none.
  if (named && !named->reads_every_command) {
    build(*named);
  } else if (named || !leading.version || leading.help) {
    build_rest();
  }
  // CLI11 lists the commands itself, under "Subcommands:".
  app.footer(fmt::format(
      "Exit codes: 0 ok, 1 error, 2 usage, 3 no GPU available, 4 NVML/driver unavailable;\n"
      "`run` and `docker` exit with their command's status (127: not found or not\n"
      "started, 126: not an executable file).\n"
      "Config files: the admin's {} (defaults, and house rules for\n"
      "everyone) and your ~/.config/gpupin/config.toml ($XDG_CONFIG_HOME); gpupin config\n"
      "shows every setting and where it came from (doc/config.md).",
      admin_config));
  // For run and docker, everything after the first "--" is the user's
  // command, passed through untouched (CLI11 would otherwise let an option
  // with an optional value, such as --wait, swallow the separator).
  std::vector<std::string> own_args;
  std::vector<std::string> command_args;
  // For the other commands, the words after "--" are arguments, never options.
  std::vector<std::string> arguments_after_separator;
  bool after_separator = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (!after_separator && arg == "--") {
      after_separator = true;
      if (runs_command) continue;
    } else if (after_separator) {
      (runs_command ? command_args : arguments_after_separator).emplace_back(arg);
      if (runs_command) continue;
    }
    own_args.emplace_back(arg);
  }
  // CLI11 hands the words after "--" of a command that takes no arguments
  // back to the global options, so `ls -- --json` would print JSON.
  if (!arguments_after_separator.empty() && command_word) {
    if (!TakesArguments(*app.get_subcommand(*command_word))) {
      return PrintError(MakeError(
          ExitCode::kUsage, fmt::format("unexpected '{}'; see gpupin {} --help",
                                        fmt::join(arguments_after_separator, " "), *command_word)));
    }
  }
  const std::vector<std::string> typed_args = own_args;
  // Help and the version read no config file: a broken one (GPUPIN_CONFIG
  // exported long ago) must not hide them.
  const auto options_end = std::find(own_args.begin(), own_args.end(), "--");
  const bool help_or_version = std::any_of(own_args.begin(), options_end, [](const std::string& a) {
    return a == "-h" || a == "--help" || a == "--version";
  });
  if (help_or_version) {
    std::vector<std::string> without_config;
    for (size_t i = 0; i < own_args.size(); ++i) {
      if (own_args[i] == "--config") {
        ++i;
      } else if (!own_args[i].starts_with("--config=")) {
        without_config.push_back(own_args[i]);
      }
    }
    own_args = std::move(without_config);
  }
  // CLI11 reads no environment variable for its config option itself.
  const char* env_config = std::getenv("GPUPIN_CONFIG");
  if (env_config && *env_config && !help_or_version &&
      std::none_of(own_args.begin(), own_args.end(),
                   [](const std::string& a) { return a.starts_with("--config"); })) {
    // Named as what the user set, not as an option never typed.
    if (std::string problem = ConfigFileProblem(env_config); !problem.empty()) {
      return PrintError(MakeError(
          ExitCode::kUsage, fmt::format("GPUPIN_CONFIG: {}; point it at a gpupin config file, or "
                                        "unset it",
                                        problem)));
    }
    own_args.insert(own_args.begin(), {"--config", env_config});
  }
  std::reverse(own_args.begin(), own_args.end());
  try {
    app.parse(own_args);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::RequiredError& e) {
    // `gpupin slurm gress`: a command with commands of its own, and none of
    // them named.
    std::vector<CLI::App*> chosen = app.get_subcommands();
    std::vector<CLI::App*> nested = chosen.empty() ? chosen : chosen.front()->get_subcommands({});
    if (nested.empty()) {
      return PrintError(
          MakeError(ExitCode::kUsage, fmt::format("{}; {}", e.what(), SeeHelp(app, e.what()))));
    }
    std::vector<std::string> names;
    names.reserve(nested.size());
    for (const CLI::App* command : nested) names.push_back(command->get_name());
    const std::string parent = chosen.front()->get_name();
    const std::vector<std::string> typed = app.remaining(true);
    if (typed.empty()) {
      return PrintError(MakeError(ExitCode::kUsage, fmt::format("'{}' needs a command: {}", parent,
                                                                fmt::join(names, ", "))));
    }
    const std::string suggestion = SuggestCommand(typed.front(), names);
    return PrintError(
        MakeError(ExitCode::kUsage,
                  fmt::format("unknown command '{} {}'; {}", parent, typed.front(),
                              suggestion.empty()
                                  ? fmt::format("'{}' has: {}", parent, fmt::join(names, ", "))
                                  : fmt::format("did you mean '{} {}'?", parent, suggestion))));
  } catch (const CLI::ConfigError& e) {
    return PrintError(MakeError(ExitCode::kUsage, e.what()));
  } catch (const CLI::ExtrasError&) {
    const std::vector<std::string> remaining = app.remaining(true);
    const std::vector<CLI::App*> chosen = app.get_subcommands();
    const CLI::App* command = chosen.empty() ? nullptr : chosen.front();
    // `leases --al`: a mistyped option gets a suggestion as a command does.
    if (!remaining.empty() && remaining.front().starts_with("-") && remaining.front() != "-") {
      const std::string typed = remaining.front().substr(0, remaining.front().find('='));
      const std::string suggestion = SuggestCommand(typed, OptionNames(app, command));
      // Typed before the command's name, it was meant as one of gpupin's own.
      auto position = [&](const std::string& word) {
        return std::find(typed_args.begin(), typed_args.end(), word) - typed_args.begin();
      };
      const bool before_command =
          command && position(remaining.front()) < position(command->get_name());
      const std::string where = command && !before_command
                                    ? fmt::format("gpupin {}", command->get_name())
                                    : std::string("gpupin");
      return PrintError(MakeError(
          ExitCode::kUsage,
          suggestion.empty()
              ? fmt::format("unknown option '{}' of '{}'; see {} --help", typed, where, where)
              : fmt::format("unknown option '{}' of '{}'; did you mean '{}'?", typed, where,
                            suggestion)));
    }
    const std::string extras = fmt::format("'{}'", fmt::join(remaining, " "));
    // `gpupin run python train.py`: the separator forgotten.
    if (runs_command) return PrintError(CommandBeforeSeparator(app, remaining));
    return PrintError(
        MakeError(ExitCode::kUsage, fmt::format("unexpected {}; {}", extras, SeeHelp(app, ""))));
  } catch (const CLI::ArgumentMismatch& e) {
    if (std::optional<Error> repeated = RepeatedOptionError(app)) {
      // `gpupin run -n 1 python train.py -n 2`: the command's own option,
      // read as gpupin's for want of a separator.
      const std::vector<std::string> remaining = app.remaining(true);
      if (runs_command && !remaining.empty())
        return PrintError(CommandBeforeSeparator(app, remaining));
      return PrintError(*repeated);
    }
    // CLI11's "--simulate: 1 required TEXT missing": the value left out.
    const std::string_view what = e.what();
    const std::optional<std::string_view> option = OptionNamedFirst(what);
    if (option && what.ends_with(" missing")) {
      return PrintError(MakeError(
          ExitCode::kUsage, fmt::format("{} needs a value; {}", *option, SeeHelp(app, what))));
    }
    return PrintError(MakeError(ExitCode::kUsage, fmt::format("{}; {}", what, SeeHelp(app, what))));
  } catch (const CLI::ValidationError& e) {
    // A value from --config that its option refuses: said at the file's line.
    if (std::optional<Error> at_line =
            ConfigValueRefused(app, e.what(), config_option_read, typed_args))
      return PrintError(*at_line);
    return PrintError(
        MakeError(ExitCode::kUsage, fmt::format("{}; {}", e.what(), SeeHelp(app, e.what()))));
  } catch (const CLI::ParseError& e) {
    return PrintError(
        MakeError(ExitCode::kUsage, fmt::format("{}; {}", e.what(), SeeHelp(app, e.what()))));
  }
  std::vector<CLI::App*> chosen = app.get_subcommands();
  // CLI11 refuses a value given twice (ArgumentMismatch above), not a switch.
  if (std::optional<Error> repeated = RepeatedOptionError(app)) return PrintError(*repeated);
  if (chosen.empty()) {
    // The help for a newcomer who typed `gpupin` alone, and for a script's
    // log the one line every usage error has.
    std::fputs(app.help().c_str(), stdout);
    return PrintError(MakeError(ExitCode::kUsage, "no command given; gpupin --help lists them"));
  }
  // Read after parsing, so that --help and --version work whatever the
  // files hold; before any command runs, so that none runs without the
  // admin's rules.
  Result<ConfigSources> sources = LoadConfigFiles(app, admin_config, UserConfigPath(), build_rest);
  if (!sources.ok()) return PrintError(sources.error());
  sources->config_option = config_option_read;
  sources->command_line = typed_args;
  if (Status applied = ApplyFileDefaults(app, chosen.front(), *sources); !applied.ok())
    return PrintError(applied.error());
  if (Status chattiness = SettleQuietAndVerbose(app, typed_args, globals); !chattiness.ok())
    return PrintError(chattiness.error());
  World world(globals, Terminal::Detect(globals.json), std::move(command_args),
              std::move(*sources));
  Result<int> status = runners.at(chosen.front()->get_name())(world);
  if (!status.ok()) {
    const int code = PrintError(AtConfigLine(status.error(), *chosen.front(), world.config()));
    return status.error().signal ? DieBySignal(status.error().signal) : code;
  }
  return *status;
}

}  // namespace gpupin
