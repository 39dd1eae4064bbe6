#include "cli/config_files.h"

#include <fmt/format.h>

#include <cstdlib>

#include "sys/source_file.h"

namespace gpupin {
namespace {

constexpr size_t kMaxConfigBytes = size_t{1} << 20;

Result<ConfigFileContent> ReadOne(const CLI::App& app, const std::string& path, ConfigFileKind kind,
                                  const std::string& admin_file,
                                  const BuildRestOfCommands& build_rest,
                                  std::string* ignored = nullptr) {
  Result<std::optional<std::string>> text = ReadConfigText(
      path, kMaxConfigBytes,
      kind == ConfigFileKind::kAdmin ? FileTrust::kRootOnly : FileTrust::kCallersOwn, ignored);
  if (!text.ok()) return text.error();
  if (!*text) return ConfigFileContent{};
  return ReadConfigFile(app, **text, path, kind, admin_file, build_rest);
}

// `message` said of the file line that gave `setting`.
Error AtSetting(const ConfigSetting& setting, ExitCode code, const std::string& message) {
  return MakeError(code,
                   fmt::format("{}:{}: {}: {}", setting.file, setting.line, setting.key, message));
}

}  // namespace

std::string UserConfigPath() {
  const char* xdg = std::getenv("XDG_CONFIG_HOME");
  // The XDG rule: a relative value is to be ignored.
  if (xdg && *xdg == '/') return fmt::format("{}/gpupin/config.toml", xdg);
  const char* home = std::getenv("HOME");
  if (home && *home) return fmt::format("{}/.config/gpupin/config.toml", home);
  return "";
}

Result<ConfigSources> LoadConfigFiles(const CLI::App& app, const std::string& admin_file,
                                      const std::string& user_file,
                                      const BuildRestOfCommands& build_rest) {
  ConfigSources sources;
  sources.admin_file = admin_file;
  sources.user_file = user_file;
  Result<ConfigFileContent> admin =
      ReadOne(app, admin_file, ConfigFileKind::kAdmin, admin_file, build_rest);
  if (!admin.ok()) return admin.error();
  sources.rules = std::move(admin->rules);
  sources.admin_defaults = std::move(admin->defaults);
  if (!user_file.empty()) {
    Result<ConfigFileContent> user = ReadOne(app, user_file, ConfigFileKind::kUser, admin_file,
                                             build_rest, &sources.user_file_ignored);
    if (!user.ok()) return user.error();
    sources.user_defaults = std::move(user->defaults);
  }
  return sources;
}

Status ApplyFileDefaults(CLI::App& app, CLI::App* command, ConfigSources& sources) {
  for (const std::vector<ConfigSetting>* settings :
       {&sources.user_defaults, &sources.admin_defaults}) {
    for (const ConfigSetting& setting : *settings) {
      CLI::Option* option = command ? FindConfigOption(*command, setting.key) : nullptr;
      if (!option) option = FindConfigOption(app, setting.key);
      if (!option || option->count() > 0 || SetByEnvironment(*option)) continue;
      try {
        // As CLI11 gives a config file's value to a switch, or to an option
        // whose value may be left out (wait = true).
        if (option->get_expected_min() == 0 && setting.inputs.size() <= 1) {
          option->add_result(option->get_flag_value(
              setting.key, setting.inputs.empty() ? "" : setting.inputs.front()));
        } else {
          option->add_result(setting.inputs);
        }
        option->run_callback();
        sources.applied.emplace("--" + option->get_lnames().front(), setting);
      } catch (const CLI::Error& error) {
        return AtSetting(setting, ExitCode::kError, error.what());
      }
    }
  }
  return Ok{};
}

bool TypedOnCommandLine(const CLI::Option& option, const std::vector<std::string>& words) {
  for (const std::string& word : words) {
    for (const std::string& name : option.get_lnames()) {
      if (word == "--" + name || word.starts_with("--" + name + "=")) return true;
    }
    for (const std::string& name : option.get_snames()) {
      if (word.size() >= 2 && word[0] == '-' && word[1] != '-' &&
          word.find(name) != std::string::npos)
        return true;
    }
  }
  return false;
}

Error AtConfigLine(Error error, const CLI::App& command, const ConfigSources& sources) {
  if (error.option.empty()) return error;
  const CLI::Option* option = command.get_option_no_throw(error.option);
  if (!option || TypedOnCommandLine(*option, sources.command_line)) return error;
  // The last one given wins, as CLI11 reads --config.
  const std::vector<ConfigSetting>& given = *sources.config_option;
  for (size_t i = given.size(); i-- > 0;) {
    if ((given[i].command.empty() || given[i].command == command.get_name()) &&
        FindConfigOption(command, given[i].key) == option)
      return AtSetting(given[i], ExitCode::kUsage, error.message);
  }
  auto applied = sources.applied.find(error.option);
  if (applied != sources.applied.end())
    return AtSetting(applied->second, ExitCode::kError, error.message);
  return error;
}

}  // namespace gpupin
