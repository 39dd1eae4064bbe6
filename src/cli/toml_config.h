// gpupin's reader for --config files: strict TOML (toml++), checked against
// the options that exist. CLI11's own reader passes over a syntax error, an
// unterminated string or a misspelt option in silence, so a typo in a
// lab-wide config quietly did nothing; here each is an error naming the
// file and line.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <istream>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "core/house_rules.h"

namespace gpupin {

// One value a config file gives an option: its key as written (`max_used`
// or `max-used`), the inputs CLI11 converts, and where it was written.
struct ConfigSetting {
  std::string command;  // the section of a --config file ([run]); empty: any
  std::string key;
  std::vector<std::string> inputs;
  std::string file;
  int line = 0;
};

// The variable of the environment that sets a global option, where one
// does: GPUPIN_STATE_DIR, read by CLI11 as the option's envname, and
// GPUPIN_NVML_LIBRARY, read where the library is opened (so that it does
// not replace --simulate's library). Empty for every other option.
std::string VariableOf(const CLI::Option& option);

// Whether the variable of `option` is set and not empty (an empty one
// counts as unset): the environment is stronger than every file, --config
// too, and weaker than the command line (doc/config.md).
bool SetByEnvironment(const CLI::Option& option);

// The option `name` stands for in a config file, found as CLI11 finds it.
template <class App>
auto* FindConfigOption(App& command, const std::string& name) {
  if (auto* option = command.get_option_no_throw("--" + name)) return option;
  if (name.size() == 1) {
    if (auto* option = command.get_option_no_throw("-" + name)) return option;
  }
  return command.get_option_no_throw(name);
}

// Adds to the root command every command not built yet. A gpupin process
// builds only the command it runs (every command's options cost each start
// about a millisecond); a file that names another command's section, or a
// [defaults] key only another command has, is checked against them all.
// Empty: the root command already holds every command.
using BuildRestOfCommands = std::function<void()>;

class TomlConfig : public CLI::Config {
 public:
  // `app` is the root command: top-level keys are its options, and a
  // section [name] holds the options of its subcommand `name`. Each value
  // read is also appended to `*read` (for `gpupin config`); `admin_file`
  // is where limits belong, for the message about a [limits] section.
  TomlConfig(const CLI::App& app, std::shared_ptr<std::vector<ConfigSetting>> read,
             std::string admin_file, BuildRestOfCommands build_rest = {})
      : app_(app),
        read_(std::move(read)),
        admin_file_(std::move(admin_file)),
        build_rest_(std::move(build_rest)) {}

  // Throws CLI::ConfigError (a CLI::ParseError, which the caller of
  // App::parse handles) for a syntax error, a section that is not a
  // command, an option that does not exist or a value of no option's kind.
  std::vector<CLI::ConfigItem> from_config(std::istream& input) const override;

  // Writing a config is CLI11's TOML writer; gpupin never offers it.
  std::string to_config(const CLI::App* app, bool default_also, bool write_description,
                        std::string prefix) const override;

 private:
  const CLI::App& app_;
  std::shared_ptr<std::vector<ConfigSetting>> read_;
  std::string admin_file_;
  BuildRestOfCommands build_rest_;
};

enum class ConfigFileKind { kAdmin, kUser };

// What the admin's or a user's config file holds (doc/config.md).
struct ConfigFileContent {
  // [defaults]: each key an option of gpupin or of any of its commands.
  std::vector<ConfigSetting> defaults;
  // [limits], the admin's file only; `file` and `lines` say where.
  HouseRules rules;
};

// Reads `text`, the content of `file`. Fails (ExitCode::kError, one line
// "FILE:LINE: problem") on a syntax error, an unknown section or key, a
// value of the wrong kind, or, in a user's file, a [limits] section:
// limits belong to the admin's `admin_file`.
Result<ConfigFileContent> ReadConfigFile(const CLI::App& app, std::string_view text,
                                         const std::string& file, ConfigFileKind kind,
                                         const std::string& admin_file,
                                         const BuildRestOfCommands& build_rest = {});

}  // namespace gpupin
