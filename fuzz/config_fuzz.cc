// Feeds arbitrary text to the config readers (cli/toml_config) and traps
// when an invariant breaks. The --config reader either names only options
// that exist, or fails with a CLI::ConfigError that says where ("FILE:LINE:
// ..."); the admin's and a user's file reader either gives defaults for
// options that exist and sane limits, or one error line naming the file;
// never another exception, a crash or a hang.
#include <CLI/CLI.hpp>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "cli/toml_config.h"

namespace {

void Check(bool condition) {
  if (!condition) __builtin_trap();
}

// Shows the message that broke the invariant, for the finding's log.
void CheckMessage(bool condition, const std::string& message) {
  if (!condition) std::fprintf(stderr, "message: %s\n", message.c_str());
  Check(condition);
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

bool ExistsAnywhere(const Commands& commands, const std::string& name) {
  return Exists(commands.app, name) || Exists(*commands.pick, name);
}

constexpr const char* kAdminFile = "/etc/gpupin/config.toml";

void CheckCommandLineConfig(const Commands& commands, const std::string& text) {
  auto read = std::make_shared<std::vector<gpupin::ConfigSetting>>();
  gpupin::TomlConfig config(commands.app, read, kAdminFile);
  std::istringstream input(text);
  try {
    for (const CLI::ConfigItem& item : config.from_config(input)) {
      Check(item.parents.size() <= 1);
      const CLI::App& command = item.parents.empty() ? commands.app : *commands.pick;
      Check(item.parents.empty() || item.parents.front() == "pick");
      Check(Exists(command, item.name));
      Check(!item.name.empty());
    }
    for (const gpupin::ConfigSetting& setting : *read) Check(setting.line >= 1);
  } catch (const CLI::ConfigError& error) {
    const std::string message = error.what();
    CheckMessage(message.starts_with("--config:"), message);
  }
}

void CheckConfigFile(const Commands& commands, std::string_view text, gpupin::ConfigFileKind kind) {
  const std::string file = kind == gpupin::ConfigFileKind::kAdmin ? kAdminFile : "user.toml";
  auto content = gpupin::ReadConfigFile(commands.app, text, file, kind, kAdminFile);
  if (!content) {
    const std::string& message = content.error().message;
    CheckMessage(message.starts_with(file + ":") && message.find('\n') == std::string::npos,
                 message);
    return;
  }
  for (const gpupin::ConfigSetting& setting : content->defaults) {
    Check(ExistsAnywhere(commands, setting.key));
    Check(setting.file == file && setting.line >= 1);
  }
  const gpupin::HouseRules& rules = content->rules;
  if (kind == gpupin::ConfigFileKind::kUser) {
    Check(rules == gpupin::HouseRules{});
    return;
  }
  auto in_range = [](const std::optional<int>& cap) { return !cap || (*cap >= 0 && *cap <= 4096); };
  auto sane = [&](const gpupin::Caps& caps) {
    return in_range(caps.max_gpus_per_user) && in_range(caps.max_gpus_per_job);
  };
  Check(sane(rules.caps));
  for (const auto& [name, caps] : rules.user_caps) Check(!name.empty() && sane(caps));
  for (const auto& [name, caps] : rules.group_caps) Check(!name.empty() && sane(caps));
  for (const std::string& card : rules.reserved) Check(!card.empty());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Commands* commands = new Commands();
  const std::string text(reinterpret_cast<const char*>(data), size);
  CheckCommandLineConfig(*commands, text);
  CheckConfigFile(*commands, text, gpupin::ConfigFileKind::kAdmin);
  CheckConfigFile(*commands, text, gpupin::ConfigFileKind::kUser);
  return 0;
}
