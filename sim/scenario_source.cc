#include "sim/scenario_source.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "sim/live_registry.h"

namespace gpupin::sim {

Result<std::string> ScenarioPathFromEnv() {
  const char* path = std::getenv("GPUPIN_SIM_SCENARIO");
  if (!path || !*path)
    return MakeError(ExitCode::kNvmlUnavailable,
                     "GPUPIN_SIM_SCENARIO is not set; point it at a scenario file");
  return std::string(path);
}

ScenarioSource::ScenarioSource(std::string path)
    : path_(std::move(path)), live_dir_(LiveDir(path_)) {}

Result<const Scenario*> ScenarioSource::Current() {
  struct stat st {};
  if (stat(path_.c_str(), &st) != 0) {
    last_error_ = MakeError(ExitCode::kError, fmt::format("{}: {}", path_, std::strerror(errno)));
  } else {
    Identity now{st.st_dev, st.st_ino, st.st_size,
                 static_cast<long long>(st.st_mtim.tv_sec) * 1000000000LL + st.st_mtim.tv_nsec};
    if (loaded_ == now && scenario_) return scenario_.get();
    if (failed_ == now) return scenario_ ? Result<const Scenario*>(scenario_.get()) : last_error_;
    if (auto scenario = LoadScenario(path_)) {
      scenario_ = std::make_unique<Scenario>(std::move(*scenario));
      loaded_ = now;
      last_reported_.clear();
      ++generation_;
      return scenario_.get();
    } else {
      last_error_ = scenario.error();
      failed_ = now;
    }
  }
  // With no scenario yet, the failure is the caller's to report (nvmlInit).
  if (scenario_ && last_error_.message != last_reported_) {
    std::fprintf(stderr, "gpupin-sim: %s (keeping the previous scenario)\n",
                 last_error_.message.c_str());
    last_reported_ = last_error_.message;
  }
  if (scenario_) return scenario_.get();
  return last_error_;
}

Result<const Scenario*> ScenarioSource::Loaded() {
  if (scenario_) return scenario_.get();
  return Current();
}

}  // namespace gpupin::sim
