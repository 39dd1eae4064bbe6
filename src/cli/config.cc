#include "cli/config.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include "cli/machine_state.h"
#include "core/policy.h"
#include "core/printable.h"
#include "core/units.h"
#include "out/inventory_json.h"
#include "out/json_value.h"
#include "out/table.h"
#include "sys/procfs.h"
#include "sys/state_dir.h"
#include "sys/user_groups.h"

namespace gpupin {
namespace {

// One setting as `gpupin config` shows it.
struct SettingRow {
  std::string key;  // "state-dir", or "run.order" for a --config section's
  std::string value;
  std::string from;
};

// An option's key in the files: its long name, else its short one.
std::string KeyOf(const CLI::Option& option) {
  if (!option.get_lnames().empty()) return option.get_lnames().front();
  if (!option.get_snames().empty()) return option.get_snames().front();
  return option.get_name();
}

bool Listed(const CLI::Option& option) {
  const std::string key = KeyOf(option);
  return !option.get_positional() && key != "help" && key != "help-all" && key != "version" &&
         key != "config";
}

std::string Place(const ConfigSetting& setting) {
  return fmt::format("{}:{}", setting.file, setting.line);
}

// The values given to `key`, as typed; an option whose value may be left
// out and was (`wait = true`, `--wait`) says so.
std::string Joined(const std::string& key, const std::vector<std::string>& inputs) {
  if (inputs.size() == 1 && inputs.front().empty()) return fmt::format("as --{} alone", key);
  return fmt::format("{}", fmt::join(inputs, ","));
}

// The setting of a file that gives `key` (`max_used` and `max-used` alike).
const ConfigSetting* FileSetting(const std::vector<ConfigSetting>& settings, const CLI::App& owner,
                                 const CLI::Option& option) {
  // The last one given wins.
  for (size_t i = settings.size(); i-- > 0;) {
    if (settings[i].command.empty() && FindConfigOption(owner, settings[i].key) == &option)
      return &settings[i];
  }
  return nullptr;
}

// The values a file's setting gives its option, as the option's own name
// reads them: `no-near = true` is near false.
std::vector<std::string> ValueOfKey(const CLI::Option& option, const ConfigSetting& setting) {
  const bool negated_name = setting.key != KeyOf(option) && option.check_fname(setting.key);
  if (!negated_name || setting.inputs.size() != 1) return setting.inputs;
  return {option.get_flag_value(setting.key, setting.inputs.front())};
}

// What set a global option that was given, strongest first: the command
// line, the environment, --config, the files' defaults.
std::string GivenFrom(const CLI::App& app, const CLI::Option& option,
                      const ConfigSources& sources) {
  if (TypedOnCommandLine(option, sources.command_line)) return "command line";
  if (SetByEnvironment(option)) return "environment " + VariableOf(option);
  if (const ConfigSetting* read = FileSetting(*sources.config_option, app, option))
    return "--config " + Place(*read);
  for (const auto* settings : {&sources.user_defaults, &sources.admin_defaults}) {
    if (const ConfigSetting* set = FileSetting(*settings, app, option)) return Place(*set);
  }
  return "command line";
}

// What an option means when nobody sets it, where its variable's own
// default ("", 0) would say nothing or mislead.
std::optional<std::string> DefaultMeaning(const std::string& key) {
  if (key == "max-used") {
    return fmt::format("{}, shared: {}%", FormatBytes(kDefaultExclusiveMaxUsedBytes),
                       kDefaultSharedMaxUsedPercent);
  }
  if (key == "max-util") return fmt::format("{}%, shared: none", kDefaultExclusiveMaxUtilPercent);
  if (key == "near") return "on; off with --order";
  if (key == "watch") return "off; --watch alone: 2";
  if (key == "verify") return "off; --verify alone: 10s";
  if (key == "state-dir") return ChooseStateDirPath(std::nullopt);
  return std::nullopt;
}

std::vector<SettingRow> Settings(const CLI::App& app, const ConfigSources& sources,
                                 const std::map<std::string, std::string>& built_in) {
  std::vector<SettingRow> rows;
  std::set<std::string> seen;
  auto built_in_value = [&](const std::string& key) {
    if (std::optional<std::string> meaning = DefaultMeaning(key)) return *meaning;
    auto it = built_in.find(key);
    // An option with no value of its own ("" or an empty list "[]").
    return it == built_in.end() || it->second.empty() || it->second == "[]" ? std::string("-")
                                                                            : it->second;
  };
  for (const CLI::Option* option : app.get_options()) {
    if (!Listed(*option)) continue;
    const std::string key = KeyOf(*option);
    seen.insert(key);
    if (option->count() > 0) {
      rows.push_back({key, Joined(key, option->results()), GivenFrom(app, *option, sources)});
    } else if (SetByEnvironment(*option)) {
      // GPUPIN_NVML_LIBRARY is read where the library is opened, not by
      // CLI11, which does not count it given.
      rows.push_back(
          {key, std::getenv(VariableOf(*option).c_str()), "environment " + VariableOf(*option)});
    } else {
      rows.push_back({key, built_in_value(key), "built in"});
    }
  }
  for (const CLI::App* command : app.get_subcommands({})) {
    for (const CLI::Option* option : command->get_options()) {
      const std::string key = KeyOf(*option);
      if (!Listed(*option) || !seen.insert(key).second) continue;
      SettingRow row{key, built_in_value(key), "built in"};
      for (const auto* settings : {&sources.admin_defaults, &sources.user_defaults}) {
        if (const ConfigSetting* set = FileSetting(*settings, *command, *option))
          row = {key, Joined(key, ValueOfKey(*option, *set)), Place(*set)};
      }
      rows.push_back(std::move(row));
    }
  }
  for (const ConfigSetting& read : *sources.config_option) {
    if (!read.command.empty()) {
      rows.push_back({read.command + "." + read.key, Joined(read.key, read.inputs),
                      "--config " + Place(read)});
    }
  }
  return rows;
}

std::string RuleFrom(const HouseRules& rules, const std::string& key) {
  auto line = rules.lines.find(key);
  return line == rules.lines.end() ? "built in" : fmt::format("{}:{}", rules.file, line->second);
}

std::string CapText(const std::optional<int>& cap) {
  return cap ? std::to_string(*cap) : "no limit";
}

std::vector<SettingRow> Limits(const HouseRules& rules) {
  std::vector<SettingRow> rows = {
      {"queue", rules.queue == QueueOrder::kFifo ? "fifo" : "fair", RuleFrom(rules, "queue")},
      {"max_gpus_per_user", CapText(rules.caps.max_gpus_per_user),
       RuleFrom(rules, "max_gpus_per_user")},
      {"max_gpus_per_job", CapText(rules.caps.max_gpus_per_job),
       RuleFrom(rules, "max_gpus_per_job")},
      {"reserved",
       rules.reserved.empty() ? "none" : fmt::format("{}", fmt::join(rules.reserved, ",")),
       RuleFrom(rules, "reserved")},
  };
  for (const auto& [kind, entries] :
       {std::pair{"users", &rules.user_caps}, std::pair{"groups", &rules.group_caps}}) {
    for (const auto& [name, caps] : *entries) {
      for (const auto& [cap_key, cap] : {std::pair{"max_gpus_per_user", caps.max_gpus_per_user},
                                         std::pair{"max_gpus_per_job", caps.max_gpus_per_job}}) {
        if (!cap) continue;
        std::string key = fmt::format("{}.{}.{}", kind, name, cap_key);
        rows.push_back({key, std::to_string(*cap), RuleFrom(rules, key)});
      }
    }
  }
  return rows;
}

struct Holdings {
  std::string user;
  int held = 0;
  AppliedCap cap;
  std::optional<std::string> unknown;  // why the holdings could not be counted
};

Holdings CallerHoldings(World& world) {
  const uint32_t uid = getuid();
  Holdings holdings{UserName(uid),
                    0,
                    CapFor(world.rules(), CapKind::kPerUser, UserName(uid),
                           GroupsTheRulesCap(world.rules(), uid)),
                    {}};
  Result<LeaseStore*> store = world.Leases();
  if (!store.ok()) {
    holdings.unknown = store.error().message;
    return holdings;
  }
  Inventory inventory;
  if (Result<GpuSource*> gpus = world.Gpus(); gpus.ok()) {
    if (Result<Inventory> snapshot = (*gpus)->Snapshot(gpu_facts::kProcesses); snapshot.ok())
      inventory = std::move(*snapshot);
  }
  LivenessFacts facts = MakeLivenessFacts(inventory, world.procfs());
  std::vector<Lease> live;
  Status read = (*store)->Transact([&](LeaseTransaction& txn) -> Status {
    live = txn.LiveLeases(facts);
    return Ok{};
  });
  if (!read.ok()) {
    holdings.unknown = read.error().message;
    return holdings;
  }
  holdings.held = CardsHeldByUser(live)[uid];
  return holdings;
}

nlohmann::ordered_json RowsJson(const std::vector<SettingRow>& rows) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const SettingRow& row : rows)
    out.push_back({{"key", row.key}, {"value", row.value}, {"from", row.from}});
  return out;
}

std::string RowsText(const std::vector<SettingRow>& rows) {
  Table table({{"SETTING"}, {"VALUE"}, {"FROM"}});
  for (const SettingRow& row : rows)
    table.AddRow({Printable(row.key), Printable(row.value), Printable(row.from)});
  return table.Render();
}

std::string FileState(const std::string& path, const std::string& ignored = "") {
  if (path.empty()) return "none (neither XDG_CONFIG_HOME nor HOME is set)";
  if (!ignored.empty()) return fmt::format("{} (not read: {})", path, ignored);
  return access(path.c_str(), F_OK) == 0 ? path : path + " (none)";
}

Result<int> ShowConfig(World& world, const CLI::App& app,
                       const std::map<std::string, std::string>& built_in) {
  if (Status exists = world.RequireExistingStateDir(); !exists.ok()) return exists.error();
  const ConfigSources& sources = world.config();
  std::vector<SettingRow> settings = Settings(app, sources, built_in);
  std::vector<SettingRow> limits = Limits(world.rules());
  Holdings holdings = CallerHoldings(world);
  if (world.options().json) {
    nlohmann::ordered_json you = {
        {"user", holdings.user},
        {"gpus_held", holdings.unknown ? nlohmann::ordered_json(nullptr)
                                       : nlohmann::ordered_json(holdings.held)},
        {"max_gpus_per_user", OrNull(holdings.cap.limit)},
        {"rule", holdings.cap.limit
                     ? nlohmann::ordered_json(DescribeCap(world.rules(), holdings.cap))
                     : nlohmann::ordered_json(nullptr)}};
    nlohmann::ordered_json out = {{"schema_version", kJsonSchemaVersion},
                                  {"files",
                                   {{"admin", sources.admin_file},
                                    {"user", TextOrNull(sources.user_file)},
                                    {"user_not_read", TextOrNull(sources.user_file_ignored)}}},
                                  {"settings", RowsJson(settings)},
                                  {"limits", RowsJson(limits)},
                                  {"you", you}};
    std::printf("%s\n", JsonText(out).c_str());
    return 0;
  }
  std::printf("files: admin %s, user %s\n\n%s\nhouse rules:\n%s\n",
              Printable(FileState(sources.admin_file)).c_str(),
              Printable(FileState(sources.user_file, sources.user_file_ignored)).c_str(),
              RowsText(settings).c_str(), RowsText(limits).c_str());
  if (holdings.unknown) {
    std::printf("you (%s): holdings unknown: %s\n", Printable(holdings.user).c_str(),
                Printable(*holdings.unknown).c_str());
  } else {
    std::printf(
        "you (%s): hold %d GPU%s; the most you may hold: %s\n", Printable(holdings.user).c_str(),
        holdings.held, holdings.held == 1 ? "" : "s",
        Printable(holdings.cap.limit ? DescribeCap(world.rules(), holdings.cap) : "no limit")
            .c_str());
  }
  return 0;
}

// Each option's built-in default as text, read before parsing changes the
// variables behind them. CLI11 keeps such text only on request, and then
// shows it in --help: it is taken and put back.
std::map<std::string, std::string> BuiltInDefaults(CLI::App& app) {
  std::map<std::string, std::string> defaults;
  auto take = [&](CLI::Option* option) {
    const std::string key = KeyOf(*option);
    if (!Listed(*option) || defaults.contains(key)) return;
    const std::string shown = option->get_default_str();
    option->capture_default_str();
    defaults[key] = option->get_default_str();
    option->default_str(shown);
  };
  for (CLI::Option* option : app.get_options({})) take(option);
  for (CLI::App* command : app.get_subcommands({})) {
    for (CLI::Option* option : command->get_options({})) take(option);
  }
  return defaults;
}

}  // namespace

CommandSpec ConfigCommand() {
  return {
      "config", "show every setting in effect, where it came from, and your GPUs against your cap",
      [](CLI::App& command) {
        command.footer(
            "Settings come from, weakest first: gpupin's built-in defaults, the admin's\n"
            "/etc/gpupin/config.toml ([defaults]; its [limits] bind everyone, root too),\n"
            "your $XDG_CONFIG_HOME/gpupin/config.toml (~/.config/gpupin/config.toml;\n"
            "[defaults] only), --config FILE / GPUPIN_CONFIG, the environment, and the\n"
            "command line. See doc/config.md.");
        CLI::App& app = *command.get_parent();
        auto built_in = std::make_shared<std::map<std::string, std::string>>(BuiltInDefaults(app));
        return [&app, built_in](World& world) { return ShowConfig(world, app, *built_in); };
      },
      /*runs_command=*/false,
      /*reads_every_command=*/true};
}

}  // namespace gpupin
