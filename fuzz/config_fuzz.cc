// Feeds arbitrary text to the --config reader (cli/toml_config) and traps
// when an invariant breaks: it either names only options that exist, or
// fails with a CLI::ConfigError that says where ("FILE:LINE: ..."); never
// another exception, a crash or a hang.
#include <CLI/CLI.hpp>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "cli/toml_config.h"

namespace {

void Check(bool condition) {
  if (!condition) __builtin_trap();
}

// The shape of gpupin's command line: global options and one command.
struct Commands {
  CLI::App app;
  std::string simulate;
  bool verbose = false;
  std::vector<std::string> order;
  std::string mem;
  CLI::App* pick = nullptr;

  Commands() {
    app.add_option("--simulate", simulate);
    app.add_flag("-v,--verbose", verbose);
    pick = app.add_subcommand("pick");
    pick->add_option("--order", order);
    pick->add_option("--mem", mem);
    app.set_config("--config");
  }
};

bool Exists(const CLI::App& command, const std::string& name) {
  return command.get_option_no_throw("--" + name) || command.get_option_no_throw("-" + name) ||
         command.get_option_no_throw(name);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Commands* commands = new Commands();
  gpupin::TomlConfig config(commands->app);
  std::istringstream input(std::string(reinterpret_cast<const char*>(data), size));
  try {
    for (const CLI::ConfigItem& item : config.from_config(input)) {
      Check(item.parents.size() <= 1);
      const CLI::App& command = item.parents.empty() ? commands->app : *commands->pick;
      Check(item.parents.empty() || item.parents.front() == "pick");
      Check(Exists(command, item.name));
      Check(!item.name.empty());
    }
  } catch (const CLI::ConfigError& error) {
    std::string message = error.what();
    Check(message.starts_with("--config:"));
  }
  return 0;
}
