// toml++ is used header-only: the packaged shared library is built against
// the shared libstdc++, which gpupin (linked with the static one) must not
// load beside its own.
#define TOML_HEADER_ONLY 1
#include "cli/toml_config.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <toml++/toml.h>

#include <algorithm>
#include <cstdlib>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "core/printable.h"
#include "sys/nvml/nvml_source.h"

namespace gpupin {
namespace {

// Where a problem is: "FILE:LINE" (the file as given to --config).
class Place {
 public:
  static constexpr size_t kMaxProblem = 1000;

  explicit Place(std::string file) : file_(std::move(file)) {}
  const std::string& File() const { return file_; }
  std::string At(const toml::source_region& source) const {
    return fmt::format("{}:{}", file_, source.begin.line);
  }
  // One line whatever the file holds: the problem quotes keys and values of
  // the file, and toml++'s descriptions quote the character they stopped at,
  // a newline included.
  [[noreturn]] void Fail(const toml::source_region& source, const std::string& problem) const {
    throw CLI::ConfigError(fmt::format("{}: {}", At(source), Printable(problem, kMaxProblem)));
  }

 private:
  std::string file_;
};

// toml++ 3.3.0 (Debian 12) reaches __builtin_unreachable(), undefined
// behaviour, when it asks whether a code point in one of these ranges is
// whitespace (upstream issues #190 and #295, fixed in 2026 by pull request
// #305); fuzz/config_fuzz found it, and the ranges are every code point for
// which the library's is_non_ascii_horizontal_whitespace takes the switch's
// missing default. Each such character is parsed as a stand-in from the
// private use area, which the library answers correctly (not whitespace,
// like the original), and put back in what was read.
struct StandIns {
  uint32_t first;  // the misread range
  uint32_t last;
  uint32_t stand_in;  // for `first`; the rest follow in order
};
constexpr StandIns kStandIns[] = {{0xA1, 0x499, 0xE000},
                                  {0x2C5E, 0x2FFF, 0xE400},
                                  {0x3001, 0x3057, 0xE800},
                                  {0xFB26, 0xFEFE, 0xE900}};

void AppendUtf8(uint32_t code_point, std::string& out) {
  if (code_point < 0x800) {
    out += static_cast<char>(0xC0 | (code_point >> 6));
  } else {
    out += static_cast<char>(0xE0 | (code_point >> 12));
    out += static_cast<char>(0x80 | ((code_point >> 6) & 0x3F));
  }
  out += static_cast<char>(0x80 | (code_point & 0x3F));
}

// The two- or three-byte UTF-8 sequence at `at`, decoded, with its length;
// nullopt for anything else.
std::optional<std::pair<uint32_t, size_t>> DecodeAt(std::string_view text, size_t at) {
  auto continuation = [&](size_t i) {
    return i < text.size() && (static_cast<unsigned char>(text[i]) & 0xC0) == 0x80;
  };
  auto byte = [&](size_t i) { return static_cast<uint32_t>(static_cast<unsigned char>(text[i])); };
  if ((byte(at) & 0xE0) == 0xC0 && continuation(at + 1))
    return std::pair{((byte(at) & 0x1F) << 6) | (byte(at + 1) & 0x3F), size_t{2}};
  if ((byte(at) & 0xF0) == 0xE0 && continuation(at + 1) && continuation(at + 2)) {
    return std::pair{
        ((byte(at) & 0x0F) << 12) | ((byte(at + 1) & 0x3F) << 6) | (byte(at + 2) & 0x3F),
        size_t{3}};
  }
  return std::nullopt;
}

enum class Direction { kToStandIns, kBack };

// `text` with each misread code point replaced by its stand-in, or back.
// Going to stand-ins, a stand-in already in `text` could not be told apart
// when put back: its code point and line land in `clash`.
std::string Replace(std::string_view text, Direction direction,
                    std::optional<std::pair<uint32_t, size_t>>* clash = nullptr) {
  std::string out;
  size_t line = 1;
  for (size_t i = 0; i < text.size();) {
    if (text[i] == '\n') ++line;
    std::optional<std::pair<uint32_t, size_t>> decoded = DecodeAt(text, i);
    if (!decoded) {
      out += text[i++];
      continue;
    }
    auto [code_point, length] = *decoded;
    std::optional<uint32_t> replaced;
    for (const StandIns& range : kStandIns) {
      uint32_t stand_in_last = range.stand_in + (range.last - range.first);
      bool misread = code_point >= range.first && code_point <= range.last;
      bool stand_in = code_point >= range.stand_in && code_point <= stand_in_last;
      if (direction == Direction::kToStandIns && stand_in && clash && !*clash)
        *clash = std::pair{code_point, line};
      if (direction == Direction::kToStandIns && misread)
        replaced = range.stand_in + (code_point - range.first);
      if (direction == Direction::kBack && stand_in)
        replaced = range.first + (code_point - range.stand_in);
    }
    if (replaced) {
      AppendUtf8(*replaced, out);
    } else {
      out.append(text.substr(i, length));
    }
    i += length;
  }
  return out;
}

std::string PutBack(std::string_view text) { return Replace(text, Direction::kBack); }

// The option a key names: `max_used` and `max-used` are the same, in every
// file that gives options.
std::string OptionName(std::string_view key) {
  std::string name = PutBack(key);
  std::replace(name.begin(), name.end(), '_', '-');
  return name;
}

// The name a user runs the command by, for messages: "gpupin", "gpupin run".
std::string CommandName(const CLI::App& command) {
  return command.get_parent() ? "gpupin " + command.get_name() : "gpupin";
}

// One scalar as the text CLI11 converts; nullopt for a date, time, table
// or array.
std::optional<std::string> ScalarText(const toml::node& node) {
  if (const auto* text = node.as_string()) return PutBack(text->get());
  if (const auto* number = node.as_integer()) return std::to_string(number->get());
  if (const auto* number = node.as_floating_point()) return fmt::format("{}", number->get());
  if (const auto* flag = node.as_boolean()) return flag->get() ? "true" : "false";
  return std::nullopt;
}

// nullopt: the option stays as if not given (`wait = false`).
std::optional<CLI::ConfigItem> Item(const Place& place, const CLI::App& command,
                                    std::vector<std::string> parents, const std::string& name,
                                    const toml::node& value) {
  const CLI::Option* option = FindConfigOption(command, name);
  if (!option) {
    place.Fail(value.source(), fmt::format("{} has no option --{}; see {} --help",
                                           CommandName(command), name, CommandName(command)));
  }
  CLI::ConfigItem item;
  item.parents = std::move(parents);
  item.name = name;
  auto add = [&](const toml::node& element) {
    std::optional<std::string> text = ScalarText(element);
    if (!text) {
      place.Fail(
          element.source(),
          fmt::format("{}: give a string, number or true/false (or an array of them)", name));
    }
    item.inputs.push_back(std::move(*text));
  };
  // CLI11 would read "yes" or 2 as a flag's value and say nothing.
  if (option->get_items_expected_max() == 0 && !value.is_boolean()) {
    place.Fail(value.source(), fmt::format("{} is a switch: give true or false", name));
  }
  // true/false for an option that needs a value would reach that option's
  // own parser as "true", which names the option and not this line.
  if (value.is_boolean() && option->get_items_expected_max() > 0 &&
      option->get_expected_min() > 0) {
    place.Fail(value.source(),
               fmt::format("{} takes a value: give a string or number, not true/false", name));
  }
  // An option whose value may be left out (--wait[=DURATION]): true gives
  // it without one, as on the command line.
  if (const auto* flag = value.as_boolean();
      flag && option->get_expected_min() == 0 && option->get_items_expected_max() > 0) {
    if (!flag->get()) return std::nullopt;
    item.inputs.emplace_back();
    return item;
  }
  if (const toml::array* values = value.as_array()) {
    // CLI11 would quietly keep one of them.
    if (option->get_items_expected_max() <= 1) {
      place.Fail(value.source(), fmt::format("{} takes one value, not an array", name));
    }
    if (values->empty()) {
      place.Fail(value.source(), fmt::format("{}: an empty array gives no value", name));
    }
    for (const toml::node& element : *values) add(element);
  } else {
    add(value);
  }
  return item;
}

// What `find` finds among the commands built so far, else among them all.
template <class Find>
auto FindInEveryCommand(const BuildRestOfCommands& build_rest, Find find) {
  auto found = find();
  if (!found && build_rest) {
    build_rest();
    found = find();
  }
  return found;
}

const CLI::App* Subcommand(const CLI::App& app, const std::string& name,
                           const BuildRestOfCommands& build_rest) {
  return FindInEveryCommand(build_rest, [&]() -> const CLI::App* {
    std::vector<const CLI::App*> found =
        app.get_subcommands([&](const CLI::App* sub) { return sub->get_name() == name; });
    return found.empty() ? nullptr : found.front();
  });
}

// The sections ("[pick]") of the commands that have the option `name`.
std::vector<std::string> SectionsWith(const CLI::App& app, const BuildRestOfCommands& build_rest,
                                      const std::string& name) {
  if (build_rest) build_rest();
  std::vector<std::string> sections;
  for (const CLI::App* command : app.get_subcommands({})) {
    if (FindConfigOption(*command, name)) sections.push_back("[" + command->get_name() + "]");
  }
  return sections;
}

// Two keys of one table that name one setting, said at the later of the
// two, as the command line refuses an option given twice.
[[noreturn]] void FailGivenTwice(const Place& place, const toml::key& one, const toml::key& other) {
  const toml::key* earlier = &one;
  const toml::key* later = &other;
  if (later->source().begin.line < earlier->source().begin.line) std::swap(earlier, later);
  place.Fail(later->source(), fmt::format("{}: given twice, also as {} on line {}; give it once",
                                          PutBack(later->str()), PutBack(earlier->str()),
                                          earlier->source().begin.line));
}

// `max_used` and `max-used` name one setting: a table that has both gives
// it twice. Only the table's own keys: nested tables are checked by the
// caller.
void RefuseKeysGivenTwice(const Place& place, const toml::table& table) {
  std::map<std::string, const toml::key*> seen;
  for (const auto& [key, node] : table) {
    auto [first, fresh] = seen.emplace(OptionName(key.str()), &key);
    if (!fresh) FailGivenTwice(place, *first->second, key);
  }
}

// `n` and `count` are one option's short and long names: a table of
// options that has both gives that option twice (CLI11 would keep one of
// them, whichever sorts first).
class OptionsGiven {
 public:
  explicit OptionsGiven(const Place& place) : place_(place) {}
  void Add(const CLI::Option* option, const toml::key& key) {
    if (!option) return;
    auto [first, fresh] = seen_.emplace(option, &key);
    if (!fresh) FailGivenTwice(place_, *first->second, key);
  }

 private:
  const Place& place_;
  std::map<const CLI::Option*, const toml::key*> seen_;
};

// Every table of options in a config file: the top, each section, and each
// user's and group's rules under [limits]. The names of those users and
// groups are not options: john_doe and john-doe are two accounts.
void RefuseOptionsGivenTwice(const Place& place, const toml::table& file) {
  RefuseKeysGivenTwice(place, file);
  for (const auto& [name, node] : file) {
    const toml::table* section = node.as_table();
    if (!section) continue;
    RefuseKeysGivenTwice(place, *section);
    if (PutBack(name.str()) != "limits") continue;
    for (const char* who : {"users", "groups"}) {
      const toml::table* names = section->get_as<toml::table>(who);
      if (!names) continue;
      for (const auto& [account, rules] : *names) {
        if (const toml::table* own = rules.as_table()) RefuseKeysGivenTwice(place, *own);
      }
    }
  }
}

// `text` parsed as strict TOML; throws CLI::ConfigError naming the line.
toml::table ParseTable(const Place& place, std::string_view text) {
  std::optional<std::pair<uint32_t, size_t>> clash;
  std::string parsed = Replace(text, Direction::kToStandIns, &clash);
  if (clash) {
    throw CLI::ConfigError(fmt::format("{}:{}: U+{:04X} (a private use character) is not accepted",
                                       place.File(), clash->second, clash->first));
  }
  toml::table table;
  try {
    table = toml::parse(parsed);
  } catch (const toml::parse_error& error) {
    place.Fail(error.source(), PutBack(error.description()));
  }
  RefuseOptionsGivenTwice(place, table);
  return table;
}

// --help, --version and --config (by any of their names, `h` too): what
// they do is not a setting a file can give.
bool CommandLineOnly(const CLI::App& app, const CLI::App& command, const CLI::Option* option) {
  return option && (option == command.get_help_ptr() || option == app.get_version_ptr() ||
                    option == app.get_config_ptr());
}

// The option a [defaults] key stands for, and the command that has it:
// gpupin's own, else the first command's (the selection options are alike
// in every command that takes them). `max_used` and `max-used` are one key.
// The command is nullptr when the option is.
struct OwnedOption {
  const CLI::App* command = nullptr;
  const CLI::Option* option = nullptr;
  explicit operator bool() const { return option != nullptr; }
};

OwnedOption DefaultsOption(const CLI::App& app, const std::string& key,
                           const BuildRestOfCommands& build_rest) {
  if (const CLI::Option* option = FindConfigOption(app, key)) return {&app, option};
  return FindInEveryCommand(build_rest, [&]() -> OwnedOption {
    for (const CLI::App* command : app.get_subcommands({})) {
      if (const CLI::Option* option = FindConfigOption(*command, key)) return {command, option};
    }
    return {};
  });
}

std::vector<ConfigSetting> ReadDefaults(const Place& place, const CLI::App& app,
                                        const BuildRestOfCommands& build_rest,
                                        const toml::table& section) {
  std::vector<ConfigSetting> settings;
  OptionsGiven given(place);
  for (const auto& [key_node, value] : section) {
    const std::string key = OptionName(key_node.str());
    if (value.is_table()) {
      place.Fail(key_node.source(),
                 fmt::format("[defaults.{}]: sections do not nest; [defaults] gives each option "
                             "for every command that has it",
                             key));
    }
    auto [command, option] = DefaultsOption(app, key, build_rest);
    if (!option) {
      place.Fail(key_node.source(),
                 fmt::format("[defaults]: no option --{} to give a default for; see gpupin "
                             "--help and each command's --help",
                             key));
    }
    if (CommandLineOnly(app, *command, option)) {
      place.Fail(key_node.source(),
                 fmt::format("[defaults]: {} is not an option to give a default for", key));
    }
    given.Add(option, key_node);
    // `wait = false`: as if not given.
    if (std::optional<CLI::ConfigItem> item = Item(place, *command, {}, key, value)) {
      settings.push_back({"", key, std::move(item->inputs), place.File(),
                          static_cast<int>(key_node.source().begin.line)});
    }
  }
  return settings;
}

// A cap: a whole number of cards, 0 to 4096.
int CapValue(const Place& place, const std::string& key, const toml::node& value) {
  const auto* number = value.as_integer();
  if (!number || number->get() < 0 || number->get() > 4096)
    place.Fail(value.source(), fmt::format("{}: give a whole number of GPUs, 0 to 4096", key));
  return static_cast<int>(number->get());
}

// Sets the cap `key` names; false when it names none.
bool SetCap(const Place& place, const std::string& key, const toml::node& value, Caps& caps) {
  std::optional<int>* cap = key == "max_gpus_per_user"  ? &caps.max_gpus_per_user
                            : key == "max_gpus_per_job" ? &caps.max_gpus_per_job
                                                        : nullptr;
  if (!cap) return false;
  *cap = CapValue(place, key, value);
  return true;
}

void ReadCaps(const Place& place, const std::string& prefix, const toml::table& table, Caps& caps,
              std::map<std::string, int>& lines) {
  for (const auto& [key_node, value] : table) {
    const std::string key = PutBack(key_node.str());
    if (!SetCap(place, key, value, caps)) {
      place.Fail(key_node.source(),
                 fmt::format("[limits.{}]: no key '{}'; it takes max_gpus_per_user and "
                             "max_gpus_per_job",
                             prefix.substr(0, prefix.size() - 1), key));
    }
    lines[prefix + key] = static_cast<int>(key_node.source().begin.line);
  }
}

void ReadLimits(const Place& place, const toml::table& limits, HouseRules& rules) {
  for (const auto& [key_node, value] : limits) {
    const std::string key = PutBack(key_node.str());
    const int line = static_cast<int>(key_node.source().begin.line);
    if (key == "users" || key == "groups") {
      const toml::table* entries = value.as_table();
      if (!entries) {
        place.Fail(key_node.source(),
                   fmt::format("{}: write a section per {} instead, e.g. [limits.{}.NAME]", key,
                               key == "users" ? "user" : "group", key));
      }
      for (const auto& [name_node, entry] : *entries) {
        const std::string name = PutBack(name_node.str());
        const toml::table* caps = entry.as_table();
        if (!caps) {
          // `max_gpus_per_user = 1` right under [limits.users] is a cap
          // without the name it applies to, not a user of that name.
          if (name == "max_gpus_per_user" || name == "max_gpus_per_job") {
            place.Fail(name_node.source(),
                       fmt::format("{}.{}: a cap needs the {} it applies to: [limits.{}.NAME] "
                                   "with {} = …, or {} under [limits] for everyone",
                                   key, name, key == "users" ? "user" : "group", key, name, name));
          }
          place.Fail(name_node.source(), fmt::format("{}.{}: write it as a section [limits.{}.{}]",
                                                     key, name, key, name));
        }
        ReadCaps(place, fmt::format("{}.{}.", key, name), *caps,
                 (key == "users" ? rules.user_caps : rules.group_caps)[name], rules.lines);
      }
      continue;
    }
    if (key == "reserved") {
      const toml::array* cards = value.as_array();
      if (!cards) {
        place.Fail(value.source(),
                   "reserved: give an array of cards, NVML indices or UUID prefixes, e.g. "
                   "reserved = [\"3\"]");
      }
      for (const toml::node& card : *cards) {
        std::optional<std::string> id;
        if (const auto* text = card.as_string()) id = PutBack(text->get());
        if (const auto* number = card.as_integer(); number && number->get() >= 0)
          id = std::to_string(number->get());
        if (!id || id->empty() || id->find(',') != std::string::npos) {
          place.Fail(card.source(),
                     "reserved: each card is one NVML index or UUID prefix, such as \"3\" or "
                     "\"GPU-8f2a\"");
        }
        rules.reserved.push_back(*id);
      }
    } else if (key == "queue") {
      const auto* order = value.as_string();
      if (!order || (order->get() != "fair" && order->get() != "fifo"))
        place.Fail(value.source(), "queue: give \"fair\" or \"fifo\"");
      rules.queue = order->get() == "fifo" ? QueueOrder::kFifo : QueueOrder::kFair;
    } else if (!SetCap(place, key, value, rules.caps)) {
      place.Fail(key_node.source(),
                 fmt::format("[limits]: no key '{}'; the keys are max_gpus_per_user, "
                             "max_gpus_per_job, reserved, queue, and sections "
                             "[limits.users.NAME] and [limits.groups.NAME]",
                             key));
    }
    rules.lines[key] = line;
  }
}

}  // namespace

std::string VariableOf(const CLI::Option& option) {
  if (!option.get_envname().empty()) return option.get_envname();
  return option.check_lname("nvml") ? kNvmlLibraryVariable : "";
}

bool SetByEnvironment(const CLI::Option& option) {
  const std::string variable = VariableOf(option);
  const char* value = variable.empty() ? nullptr : std::getenv(variable.c_str());
  return value && *value;
}

std::vector<CLI::ConfigItem> TomlConfig::from_config(std::istream& input) const {
  const CLI::Option* config = app_.get_config_ptr();
  Place place(config && !config->results().empty() ? config->results().back() : "--config");
  std::string text{std::istreambuf_iterator<char>(input), std::istreambuf_iterator<char>()};
  toml::table table = ParseTable(place, text);
  std::vector<CLI::ConfigItem> read;
  const size_t first_recorded = read_ ? read_->size() : 0;
  // Every setting is recorded for `gpupin config`; CLI11 is given those it
  // applies.
  auto keep = [&](std::optional<CLI::ConfigItem> item, const toml::node& value,
                  bool applies = true) {
    if (!item) return;
    if (read_) {
      read_->push_back({item->parents.empty() ? "" : item->parents.front(), item->name,
                        item->inputs, place.File(), static_cast<int>(value.source().begin.line)});
    }
    if (applies) read.push_back(std::move(*item));
  };
  OptionsGiven global_options(place);
  for (const auto& [key, node] : table) {
    const std::string name = PutBack(key.str());
    const toml::table* section = node.as_table();
    if (!section) {
      const std::string option = OptionName(key.str());
      const CLI::Option* own = FindConfigOption(app_, option);
      if (CommandLineOnly(app_, app_, own)) {
        place.Fail(key.source(),
                   fmt::format("{}: given on the command line only, not in a file", option));
      }
      global_options.Add(own, key);
      if (!own) {
        if (std::vector<std::string> sections = SectionsWith(app_, build_rest_, option);
            !sections.empty()) {
          place.Fail(key.source(),
                     fmt::format("{} is not an option of gpupin itself: give it under the "
                                 "section of a command that has it, {}",
                                 option, fmt::join(sections, ", ")));
        }
      }
      // Shown by gpupin config, but left to the variable (CLI11 would read
      // the file's value first and the variable only for an option unset).
      keep(Item(place, app_, {}, option, node), node, !own || !SetByEnvironment(*own));
      continue;
    }
    if (name == "limits") {
      place.Fail(key.source(),
                 fmt::format("[limits]: limits belong to the admin, in {}; a --config file "
                             "gives defaults only",
                             admin_file_));
    }
    if (name == "defaults") {
      place.Fail(key.source(),
                 "[defaults]: that section is for the admin's file and your own "
                 "(~/.config/gpupin/config.toml); a --config file gives gpupin's own options at "
                 "the top and a command's under its section, [run], [pick], …");
    }
    const CLI::App* command = Subcommand(app_, name, build_rest_);
    if (!command) {
      place.Fail(key.source(),
                 fmt::format("[{}]: no such command; a section holds the options of one command, "
                             "such as [run] or [pick]",
                             name));
    }
    OptionsGiven command_options(place);
    for (const auto& [option_key, value] : *section) {
      const std::string option = OptionName(option_key.str());
      const CLI::Option* own = FindConfigOption(*command, option);
      if (CommandLineOnly(app_, *command, own)) {
        place.Fail(
            option_key.source(),
            fmt::format("[{}] {}: given on the command line only, not in a file", name, option));
      }
      command_options.Add(own, option_key);
      if (value.is_table()) {
        place.Fail(option_key.source(),
                   fmt::format("[{}.{}]: sections do not nest; put {}'s options under [{}]", name,
                               option, name, name));
      }
      // Only the command that runs reads its section: a value another
      // command would refuse is said when that command runs, not here.
      keep(Item(place, *command, {name}, option, value), value, command->parsed());
    }
  }
  // In the file's order, as `gpupin config` shows them (a table's keys come
  // sorted).
  if (read_) {
    std::stable_sort(
        read_->begin() + static_cast<std::ptrdiff_t>(first_recorded), read_->end(),
        [](const ConfigSetting& a, const ConfigSetting& b) { return a.line < b.line; });
  }
  return read;
}

Result<ConfigFileContent> ReadConfigFile(const CLI::App& app, std::string_view text,
                                         const std::string& file, ConfigFileKind kind,
                                         const std::string& admin_file,
                                         const BuildRestOfCommands& build_rest) {
  Place place(file);
  ConfigFileContent content;
  try {
    toml::table table = ParseTable(place, text);
    for (const auto& [key, node] : table) {
      const std::string name = PutBack(key.str());
      const toml::table* section = node.as_table();
      if (name == "limits" && kind == ConfigFileKind::kUser) {
        place.Fail(key.source(),
                   fmt::format("[limits]: limits belong to the admin, in {}; a user's file "
                               "gives defaults only",
                               admin_file));
      }
      if (name == "limits" && section) {
        content.rules.file = file;
        ReadLimits(place, *section, content.rules);
      } else if (name == "defaults" && section) {
        content.defaults = ReadDefaults(place, app, build_rest, *section);
      } else if (!section) {
        // A default written at the top, as in a --config file.
        place.Fail(
            key.source(),
            fmt::format("'{}': a setting at the top; in this file it goes under [defaults]{}", name,
                        kind == ConfigFileKind::kAdmin ? " (or, a rule, [limits])" : ""));
      } else {
        place.Fail(key.source(),
                   fmt::format("[{}]: not a section this file has; it has [defaults]{}", name,
                               kind == ConfigFileKind::kAdmin ? " and [limits]" : ""));
      }
    }
  } catch (const CLI::ConfigError& error) {
    return MakeError(ExitCode::kError, error.what());
  }
  return content;
}

std::string TomlConfig::to_config(const CLI::App* app, bool default_also, bool write_description,
                                  std::string prefix) const {
  return CLI::ConfigTOML().to_config(app, default_also, write_description, std::move(prefix));
}

}  // namespace gpupin
