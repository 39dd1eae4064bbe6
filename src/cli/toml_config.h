// gpupin's reader for --config files: strict TOML (toml++), checked against
// the options that exist. CLI11's own reader passes over a syntax error, an
// unterminated string or a misspelt option in silence, so a typo in a
// lab-wide config quietly did nothing; here each is an error naming the
// file and line.
#pragma once

#include <CLI/CLI.hpp>
#include <istream>
#include <string>
#include <vector>

namespace gpupin {

class TomlConfig : public CLI::Config {
 public:
  // `app` is the root command: top-level keys are its options, and a
  // section [name] holds the options of its subcommand `name`.
  explicit TomlConfig(const CLI::App& app) : app_(app) {}

  // Throws CLI::ConfigError (a CLI::ParseError, which the caller of
  // App::parse handles) for a syntax error, a section that is not a
  // command, an option that does not exist or a value of no option's kind.
  std::vector<CLI::ConfigItem> from_config(std::istream& input) const override;

  // Writing a config is CLI11's TOML writer; gpupin never offers it.
  std::string to_config(const CLI::App* app, bool default_also, bool write_description,
                        std::string prefix) const override;

 private:
  const CLI::App& app_;
};

}  // namespace gpupin
