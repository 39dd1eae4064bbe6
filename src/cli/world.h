// Everything a command may touch, built once in main from the global options
// and handed down. Expensive parts (NVML) open on first use, so `gpupin
// --help` or `gpupin leases` never load a driver.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/config_files.h"
#include "core/error.h"
#include "core/house_rules.h"
#include "out/terminal.h"
#include "sys/gpu_source.h"
#include "sys/lease_store.h"
#include "sys/procfs.h"
#include "sys/state_dir.h"

namespace gpupin {

struct GlobalOptions {
  bool json = false;
  std::optional<std::string> simulate;  // scenario file
  std::optional<std::string> nvml;      // library path
  std::optional<std::string> state_dir;
  bool quiet = false;
  bool verbose = false;
};

class World {
 public:
  World(GlobalOptions options, Terminal terminal, std::vector<std::string> command_args = {},
        ConfigSources config = {});
  ~World();

  const GlobalOptions& options() const { return options_; }
  const Terminal& terminal() const { return terminal_; }
  const ProcFs& procfs() const { return procfs_; }
  // The words after "--" on gpupin's command line: the command that run and
  // docker start.
  const std::vector<std::string>& command_args() const { return command_args_; }
  // The config files read (cli/config_files.h) and the admin's house rules,
  // read once in main: every command and the queue decision see the same.
  const ConfigSources& config() const { return config_; }
  const HouseRules& rules() const { return config_.rules; }

  // The GPUs: the simulated server for --simulate, else the NVML library
  // named by --nvml / GPUPIN_NVML_LIBRARY, else the driver's. Opened once.
  Result<GpuSource*> Gpus();

  // Under --simulate, puts the scenario in the environment that the
  // simulated libraries and gpupin's children read, without opening NVML:
  // a job forked before gpupin opens NVML still sees the simulated server.
  // Nothing to do otherwise.
  Status ExportSimulatedServer();

  // The shared state directory's leases and queue (--state-dir, else
  // GPUPIN_STATE_DIR, else /run/gpupin or /tmp/gpupin). Opened once; files
  // it skips are reported under -v.
  Result<LeaseStore*> Leases();

  // The state directory itself (chosen as for Leases()), for what is kept
  // there beside leases: the driver's numbering (sys/driver_order_file.h).
  // Opened once.
  Result<const StateDir*> StateRoot();

  // For commands that only read the state directory (ls, ps, leases,
  // release, config): one named with --state-dir or GPUPIN_STATE_DIR that
  // does not exist is an error (ExitCode::kError), since a mistyped path
  // would show every card unleased. Leases() would create it.
  Status RequireExistingStateDir() const;
  // Whether the state directory this gpupin would use does not exist yet:
  // then there is nothing in it to read, and a command that only looks
  // (doctor, completion) must not create it by calling Leases().
  bool StateDirMissing() const;

  // Diagnostics on stderr: Note unless -q, Verbose only with -v.
  void Note(std::string_view line) const;
  void Verbose(std::string_view line) const;

 private:
  GlobalOptions options_;
  Terminal terminal_;
  ProcFs procfs_;
  std::vector<std::string> command_args_;
  ConfigSources config_;
  std::unique_ptr<GpuSource> gpus_;
  std::optional<LeaseStore> leases_;
  std::optional<StateDir> state_root_;
};

// Absolute path of a file that ships beside the gpupin executable (the
// simulated libraries), or in ../lib/gpupin for an installed copy.
std::optional<std::string> FindCompanionFile(const std::string& name);

// The libcuda a CUDA probe (sys/cuda_probe.h) loads: under --simulate the
// simulated one beside gpupin, else the driver's libcuda.so.1. Fails
// (kNvmlUnavailable) when the simulated one is not installed.
Result<std::string> ProbeLibcudaPath(const World& world);

}  // namespace gpupin
