// The config files every gpupin reads (doc/config.md): the admin's
// (/etc/gpupin/config.toml: defaults and the house rules) and the user's
// ($XDG_CONFIG_HOME/gpupin/config.toml: defaults), below --config,
// GPUPIN_CONFIG, the environment and the command line.
#pragma once

#include <CLI/CLI.hpp>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cli/toml_config.h"
#include "core/error.h"
#include "core/house_rules.h"

namespace gpupin {

struct ConfigSources {
  std::string admin_file;  // where the admin's file is looked for
  std::string user_file;   // where the user's is; empty without HOME
  // Why the user's file, which exists, counts as none (another user's);
  // empty when it is read or missing.
  std::string user_file_ignored;
  HouseRules rules;  // from the admin's file; no rules without one
  std::vector<ConfigSetting> admin_defaults;
  std::vector<ConfigSetting> user_defaults;
  // What --config FILE (or GPUPIN_CONFIG) gave, filled while parsing.
  std::shared_ptr<std::vector<ConfigSetting>> config_option =
      std::make_shared<std::vector<ConfigSetting>>();
  // gpupin's own words as typed (the command's after "--" left out).
  std::vector<std::string> command_line;
  // The setting of the user's or the admin's file that gave an option its
  // value, by the option's name ("--max-used"); filled by ApplyFileDefaults.
  std::map<std::string, ConfigSetting> applied;
};

// $XDG_CONFIG_HOME/gpupin/config.toml, else ~/.config/gpupin/config.toml;
// empty when neither variable is set.
std::string UserConfigPath();

// Reads both files (a missing one gives nothing). `app`, completed by
// `build_rest` where a key needs it, holds every option and command to
// check [defaults] against. Fails (ExitCode::kError, one line) on a file
// that cannot be trusted or read, or that is not valid.
Result<ConfigSources> LoadConfigFiles(const CLI::App& app, const std::string& admin_file,
                                      const std::string& user_file,
                                      const BuildRestOfCommands& build_rest = {});

// After parsing: each option of `command` (may be null) and of gpupin
// itself that nothing set (command line, --config, environment) takes its
// default from the user's file, else the admin's.
Status ApplyFileDefaults(CLI::App& app, CLI::App* command, ConfigSources& sources);

// Whether `option` is among the words typed (`--max-used 2G`,
// `--max-used=2G`, `-n2`).
bool TypedOnCommandLine(const CLI::Option& option, const std::vector<std::string>& words);

// `error` as said of the config file whose value for one of `command`'s
// options it refuses ("FILE:LINE: max-used: --max-used: invalid size"), as
// that file's other mistakes are: exit 1 for the user's and the admin's
// file, 2 for --config's. Unchanged when the value was typed or no option
// is named.
Error AtConfigLine(Error error, const CLI::App& command, const ConfigSources& sources);

}  // namespace gpupin
