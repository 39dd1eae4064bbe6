#include "sys/sysfs_cpu.h"

#include <fmt/format.h>

#include <charconv>
#include <cstdlib>

#include "core/cpu_list.h"
#include "sys/source_file.h"

namespace gpupin {

namespace {

// sysfs files are one line; the limit only guards against a hostile root.
constexpr size_t kMaxSysfsFileBytes = size_t{64} * 1024;

Result<std::string> ReadLine(const std::string& path) {
  Result<std::string> text = ReadSourceFile(path, kMaxSysfsFileBytes);
  if (!text.ok()) return MakeError(ExitCode::kError, text.error().message);
  std::string line = *text;
  while (!line.empty() && (line.back() == '\n' || line.back() == ' ')) line.pop_back();
  return line;
}

Result<std::vector<uint32_t>> ReadList(const std::string& path) {
  Result<std::string> line = ReadLine(path);
  if (!line.ok()) return line.error();
  std::optional<std::vector<uint32_t>> ids = ParseCpuList(*line);
  if (!ids || ids->empty())
    return MakeError(ExitCode::kError, fmt::format("{}: not a CPU list: \"{}\"", path, *line));
  return *ids;
}

// physical_package_id is -1 where the platform does not tell: then every
// CPU reads -1, one socket, which is what Slurm would see too.
Result<uint32_t> ReadPackage(const std::string& path) {
  Result<std::string> line = ReadLine(path);
  if (!line.ok()) return line.error();
  int32_t value = 0;
  auto [end, error] = std::from_chars(line->data(), line->data() + line->size(), value);
  if (error != std::errc() || end != line->data() + line->size())
    return MakeError(ExitCode::kError, fmt::format("{}: not a number: \"{}\"", path, *line));
  return static_cast<uint32_t>(value);
}

}  // namespace

std::string SysfsRoot() {
  const char* root = std::getenv("GPUPIN_SYSFS_ROOT");
  return root && *root ? root : "/sys";
}

Result<CpuTopology> ReadCpuTopology(const std::string& sysfs_root) {
  const std::string cpu_dir = sysfs_root + "/devices/system/cpu";
  Result<std::vector<uint32_t>> online = ReadList(cpu_dir + "/online");
  if (!online.ok()) return online.error();
  CpuTopology topology;
  for (uint32_t cpu : *online) {
    const std::string dir = fmt::format("{}/cpu{}/topology/", cpu_dir, cpu);
    Result<uint32_t> package = ReadPackage(dir + "physical_package_id");
    if (!package.ok()) return package.error();
    Result<std::vector<uint32_t>> siblings = ReadList(dir + "core_cpus_list");
    if (!siblings.ok()) siblings = ReadList(dir + "thread_siblings_list");
    if (!siblings.ok()) return siblings.error();
    topology.push_back({cpu, *package, siblings->front()});
  }
  return topology;
}

}  // namespace gpupin
