#include "sys/environment.h"

#include <unistd.h>

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

VisibilityEnv VisibilityEnvFromProcess() { return VisibilityEnvFromMap(ProcessEnvironment()); }

}  // namespace gpupin
