#include "cli/world.h"

#include <fmt/format.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>

#include "core/printable.h"
#include "sys/nvml/nvml_source.h"

namespace gpupin {

World::World(GlobalOptions options, Terminal terminal, std::vector<std::string> command_args,
             ConfigSources config)
    : options_(std::move(options)),
      terminal_(terminal),
      command_args_(std::move(command_args)),
      config_(std::move(config)) {}

World::~World() = default;

std::optional<std::string> FindCompanionFile(const std::string& name) {
  std::error_code ec;
  std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return std::nullopt;
  for (const auto& dir : {exe.parent_path(), exe.parent_path() / ".." / "lib" / "gpupin"}) {
    std::filesystem::path candidate = dir / name;
    if (std::filesystem::exists(candidate, ec))
      return std::filesystem::weakly_canonical(candidate, ec).string();
  }
  return std::nullopt;
}

Result<std::string> ProbeLibcudaPath(const World& world) {
  if (!world.options().simulate) return std::string("libcuda.so.1");
  std::optional<std::string> library = FindCompanionFile("libgpupin-sim-cuda.so");
  if (!library) {
    return MakeError(ExitCode::kNvmlUnavailable,
                     "the simulated libcuda libgpupin-sim-cuda.so is not installed beside gpupin; "
                     "rebuild with scripts/build");
  }
  return *library;
}

Status World::ExportSimulatedServer() {
  if (!options_.simulate) return Ok{};
  std::error_code ec;
  std::filesystem::path scenario = std::filesystem::absolute(*options_.simulate, ec);
  if (ec || access(scenario.c_str(), R_OK) != 0) {
    return MakeError(ExitCode::kUsage,
                     fmt::format("cannot read simulated server '{}'; give a scenario file such as "
                                 "examples/lab-8gpu.json",
                                 *options_.simulate));
  }
  // The simulated libraries and the workloads started under gpupin read
  // the scenario from the environment, which children inherit.
  setenv("GPUPIN_SIM_SCENARIO", scenario.c_str(), 1);
  return Ok{};
}

Result<GpuSource*> World::Gpus() {
  if (gpus_) return gpus_.get();
  NvmlOptions nvml;
  if (options_.simulate) {
    if (Status exported = ExportSimulatedServer(); !exported.ok()) return exported.error();
    std::optional<std::string> library = FindCompanionFile("libgpupin-sim-nvml.so");
    if (!library) {
      return MakeError(
          ExitCode::kNvmlUnavailable,
          "the simulated NVML library libgpupin-sim-nvml.so is not installed beside gpupin; "
          "rebuild with scripts/build");
    }
    nvml.library_path = options_.nvml ? options_.nvml : library;
    nvml.simulated = true;
  } else {
    nvml.library_path = options_.nvml;
  }
  Result<std::unique_ptr<GpuSource>> opened = OpenNvml(nvml);
  if (!opened.ok()) return opened.error();
  gpus_ = std::move(opened.value());
  return gpus_.get();
}

Result<LeaseStore*> World::Leases() {
  if (leases_) return &*leases_;
  std::string path = ChooseStateDirPath(options_.state_dir);
  Result<StateDir> root = StateDir::Open(path);
  if (!root.ok()) return root.error();
  Result<LeaseStore> store =
      LeaseStore::Open(std::move(*root), [this](const std::string& line) { Verbose(line); });
  if (!store.ok()) return store.error();
  leases_.emplace(std::move(*store));
  return &*leases_;
}

Result<const StateDir*> World::StateRoot() {
  if (state_root_) return &*state_root_;
  Result<StateDir> root = StateDir::Open(ChooseStateDirPath(options_.state_dir));
  if (!root.ok()) return root.error();
  state_root_.emplace(std::move(*root));
  return &*state_root_;
}

Status World::RequireExistingStateDir() const {
  if (!options_.state_dir || !StateDirMissing()) return Ok{};
  return MakeError(ExitCode::kError,
                   fmt::format("state directory {} does not exist; check --state-dir or "
                               "GPUPIN_STATE_DIR (gpupin creates it when it first takes a GPU)",
                               *options_.state_dir));
}

bool World::StateDirMissing() const {
  struct stat info {};
  return lstat(ChooseStateDirPath(options_.state_dir).c_str(), &info) != 0 && errno == ENOENT;
}

// Notes quote what others wrote (file names in the state directory, GPU
// names, commands): escaped like every other line gpupin prints.
void World::Note(std::string_view line) const {
  if (!options_.quiet) std::fprintf(stderr, "gpupin: %s\n", PrintableWhole(line).c_str());
}

void World::Verbose(std::string_view line) const {
  if (options_.verbose) std::fprintf(stderr, "gpupin: %s\n", PrintableWhole(line).c_str());
}

}  // namespace gpupin
