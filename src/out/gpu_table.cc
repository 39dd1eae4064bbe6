#include "out/gpu_table.h"

#include <fmt/format.h>
#include <strings.h>

#include <algorithm>

#include "core/units.h"
#include "out/table.h"

namespace gpupin {
namespace {

constexpr const char* kMissing = "-";

template <class T>
std::string OrDash(const std::optional<T>& value, const char* format) {
  return value ? fmt::format(fmt::runtime(format), *value) : kMissing;
}

std::string MemoryCell(const std::optional<uint64_t>& used, const std::optional<uint64_t>& total,
                       const Terminal& terminal) {
  if (!total) return kMissing;
  std::string text = fmt::format("{}/{}", used ? FormatBytes(*used) : "?", FormatBytes(*total));
  if (!used) return text;
  // Colour says at a glance what the default policy says in words: above
  // 1 GiB a card is busy for an exclusive job, above 80 % for a shared one.
  if (*total > 0 && *used * 5 > *total * 4) return terminal.Paint(text, Color::kRed);
  if (*used > (1ULL << 30)) return terminal.Paint(text, Color::kYellow);
  return terminal.Paint(text, Color::kGreen);
}

std::string PowerCell(const Gpu& gpu) {
  if (!gpu.power_draw_mw) return kMissing;
  if (!gpu.power_limit_mw) return fmt::format("{}W", *gpu.power_draw_mw / 1000);
  return fmt::format("{}/{}W", *gpu.power_draw_mw / 1000, *gpu.power_limit_mw / 1000);
}

std::string ProcessCell(bool known, size_t count) { return known ? std::to_string(count) : "?"; }

std::string Summary(const Inventory& inventory, const std::string& source) {
  std::string line =
      fmt::format("{} GPU{}", inventory.gpus.size(), inventory.gpus.size() == 1 ? "" : "s");
  if (inventory.driver_version) line += fmt::format(" · driver {}", *inventory.driver_version);
  if (inventory.cuda_driver_version) {
    line += fmt::format(" · CUDA {}.{}", *inventory.cuda_driver_version / 1000,
                        (*inventory.cuda_driver_version % 1000) / 10);
  }
  if (inventory.nvml_version) line += fmt::format(" · NVML {}", *inventory.nvml_version);
  if (!source.empty()) line += " · " + source;
  return line + "\n";
}

}  // namespace

std::string ShortUuid(const std::string& uuid, const std::vector<Gpu>& among) {
  size_t prefix = uuid.find('-');
  if (prefix == std::string::npos) return uuid;
  size_t length = std::min(uuid.size(), prefix + 9);
  // As --only and --exclude match UUIDs: whatever the case.
  auto starts_alike = [&](const std::string& other, size_t n) {
    return other.size() >= n && strncasecmp(other.c_str(), uuid.c_str(), n) == 0;
  };
  auto shared = [&](size_t n) {
    return std::any_of(among.begin(), among.end(), [&](const Gpu& other) {
      return other.uuid != uuid && starts_alike(other.uuid, n);
    });
  };
  while (length < uuid.size() && (shared(length) || uuid[length - 1] == '-')) ++length;
  return uuid.substr(0, length);
}

std::string RenderGpuTable(const Inventory& inventory,
                           const std::map<uint32_t, GpuAnnotation>& annotations,
                           const std::string& source, const Terminal& terminal) {
  Table table({{"GPU", Align::kRight},
               {"CUDA"},
               {"NAME"},
               {"BUS ID"},
               {"UUID"},
               {"MEMORY", Align::kRight},
               {"UTIL", Align::kRight},
               {"TEMP", Align::kRight},
               {"POWER", Align::kRight},
               {"PROCS", Align::kRight},
               {"LEASE"}});
  for (const Gpu& gpu : inventory.gpus) {
    GpuAnnotation annotation;
    if (auto it = annotations.find(gpu.index); it != annotations.end()) annotation = it->second;
    std::string cuda =
        annotation.cuda_ordinal ? fmt::format("cuda:{}", *annotation.cuda_ordinal) : kMissing;
    if (!gpu.healthy()) {
      // The reason goes below the row: in a cell it would widen its column
      // for every other card.
      table.AddRow({std::to_string(gpu.index), cuda, gpu.name.empty() ? "?" : gpu.name,
                    gpu.pci_bus_id.empty() ? kMissing : gpu.pci_bus_id,
                    gpu.uuid.empty() ? kMissing : ShortUuid(gpu.uuid, inventory.gpus),
                    terminal.Paint("unhealthy", Color::kRed), kMissing, kMissing, kMissing,
                    kMissing, annotation.lease});
      table.AddNote("     └ " + terminal.Paint(*gpu.health_error, Color::kRed));
      continue;
    }
    table.AddRow({std::to_string(gpu.index), cuda, gpu.name, gpu.pci_bus_id,
                  ShortUuid(gpu.uuid, inventory.gpus),
                  MemoryCell(gpu.memory_used_bytes, gpu.memory_total_bytes, terminal),
                  OrDash(gpu.utilization_gpu_percent, "{}%"), OrDash(gpu.temperature_c, "{}C"),
                  PowerCell(gpu), ProcessCell(gpu.processes_known, gpu.processes.size()),
                  annotation.lease});
    for (size_t i = 0; i < gpu.mig_devices.size(); ++i) {
      const MigDevice& mig = gpu.mig_devices[i];
      const char* branch = i + 1 == gpu.mig_devices.size() ? "└" : "├";
      std::string memory =
          mig.memory_total_bytes
              ? fmt::format("{}/{}",
                            mig.memory_used_bytes ? FormatBytes(*mig.memory_used_bytes) : "?",
                            FormatBytes(*mig.memory_total_bytes))
              : kMissing;
      auto ordinal = annotation.mig_cuda_ordinals.find(mig.index);
      std::string mig_cuda = ordinal == annotation.mig_cuda_ordinals.end()
                                 ? kMissing
                                 : fmt::format("cuda:{}", ordinal->second);
      table.AddNote(fmt::format("     {} {:<7} {}  {}  {}  {} proc{}", branch, mig_cuda, mig.name,
                                mig.uuid, memory, mig.processes.size(),
                                mig.processes.size() == 1 ? "" : "s"));
    }
  }
  return Summary(inventory, source) + table.Render();
}

}  // namespace gpupin
