#include "sys/environment.h"

#include <unistd.h>

#include <cstdlib>

namespace gpupin {

std::map<std::string, std::string> ProcessEnvironment() {
  std::map<std::string, std::string> environment;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string text(*entry);
    const size_t equals = text.find('=');
    // A malformed entry without '=' names no variable a getenv could find.
    if (equals == std::string::npos) continue;
    environment.emplace(text.substr(0, equals), text.substr(equals + 1));
  }
  return environment;
}

// Six getenv calls, not a copy of the whole environment: ls and every queued
// job read these.
VisibilityEnv VisibilityEnvFromProcess() {
  return VisibilityEnvFrom([](const char* name) -> std::optional<std::string> {
    const char* value = std::getenv(name);
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  });
}

}  // namespace gpupin
