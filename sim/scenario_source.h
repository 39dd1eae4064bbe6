// The scenario file named by GPUPIN_SIM_SCENARIO, re-read whenever it
// changes (inode, size or mtime differ), so a test can change the server
// under a running gpupin. Not thread-safe: callers serialise.
#pragma once

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>

#include "core/error.h"
#include "sim/scenario.h"

namespace gpupin::sim {

// The value of GPUPIN_SIM_SCENARIO, or an Error that says it is unset.
Result<std::string> ScenarioPathFromEnv();

class ScenarioSource {
 public:
  explicit ScenarioSource(std::string path);

  // The scenario as the file says now. When a changed file does not parse,
  // the previous scenario stays in effect and the problem is reported once
  // on stderr; when no scenario was ever loaded, the Error is returned
  // instead, for the caller to report.
  Result<const Scenario*> Current();

  // The scenario as last read, without looking at the file; as Current()
  // when it was never read.
  Result<const Scenario*> Loaded();

  // Grows by one on every successful (re)load.
  uint64_t generation() const { return generation_; }
  const std::string& path() const { return path_; }
  const std::string& live_dir() const { return live_dir_; }

 private:
  struct Identity {
    dev_t dev = 0;
    ino_t ino = 0;
    off_t size = 0;
    long long mtime_ns = 0;
    bool operator==(const Identity&) const = default;
  };

  std::string path_;
  std::string live_dir_;
  std::optional<Identity> loaded_;
  std::optional<Identity> failed_;  // a file already found bad: not parsed again
  std::unique_ptr<Scenario> scenario_;
  std::string last_reported_;
  Error last_error_;
  uint64_t generation_ = 0;
};

}  // namespace gpupin::sim
