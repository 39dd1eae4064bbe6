#include "cli/version.h"

#include <fmt/format.h>

namespace gpupin {

std::string VersionLine(const char* project_version, const char* git_describe) {
  if (*git_describe == '\0') return fmt::format("gpupin {}", project_version);
  return fmt::format("gpupin {} ({})", project_version, git_describe);
}

}  // namespace gpupin
