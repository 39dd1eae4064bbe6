#include "cli/ls.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "out/gpu_table.h"
#include "out/inventory_json.h"
#include "sys/interrupt.h"

namespace gpupin {
namespace {

struct LsOptions {
  double watch_seconds = 0;
};

std::string SourceLabel(const World& world) {
  return world.options().simulate ? fmt::format("simulated server {}", *world.options().simulate)
                                  : "";
}

// One frame of output: the table or a JSON document (one line when watching).
Result<std::string> Frame(World& world, GpuSource& gpus, bool compact_json) {
  Result<Inventory> inventory = gpus.Snapshot();
  if (!inventory.ok()) return inventory.error();
  if (world.options().json) {
    return InventoryToJson(*inventory).dump(compact_json ? -1 : 2) + "\n";
  }
  return RenderGpuTable(*inventory, {}, SourceLabel(world), world.terminal());
}

void WriteAll(const std::string& text) { std::fwrite(text.data(), 1, text.size(), stdout); }

// Redraws in place: the cursor goes home and every line overwrites the last
// frame's, clearing only what is left over, so nothing flickers.
std::string InPlace(const std::string& frame) {
  std::string out = "\x1b[H";
  size_t start = 0;
  while (start < frame.size()) {
    size_t end = frame.find('\n', start);
    if (end == std::string::npos) end = frame.size();
    out.append(frame, start, end - start);
    out += "\x1b[K\n";
    start = end + 1;
  }
  return out + "\x1b[J";
}

Result<int> Watch(World& world, GpuSource& gpus, double seconds) {
  InterruptGuard interrupt;
  bool in_place = world.terminal().stdout_color() && !world.options().json;
  if (in_place) WriteAll("\x1b[?25l\x1b[2J");
  do {
    Result<std::string> frame = Frame(world, gpus, true);
    if (!frame.ok()) {
      if (in_place) WriteAll("\x1b[?25h");
      return frame.error();
    }
    WriteAll(in_place ? InPlace(*frame) : *frame + (world.options().json ? "" : "\n"));
    std::fflush(stdout);
  } while (interrupt.Sleep(static_cast<int>(seconds * 1000)));
  if (in_place) WriteAll("\x1b[?25h");
  return 0;
}

}  // namespace

CommandSpec LsCommand() {
  return {"ls", "list every GPU: index, cuda:N, memory, utilization, processes, lease",
          [](CLI::App& app) {
            auto options = std::make_shared<LsOptions>();
            app.add_option("--watch", options->watch_seconds,
                           "refresh every SECONDS (default 2) until Ctrl-C")
                ->expected(0, 1)
                ->default_str("2")
                ->check(CLI::PositiveNumber)
                ->option_text("[SECONDS]");
            return [options, &app](World& world) -> Result<int> {
              Result<GpuSource*> gpus = world.Gpus();
              if (!gpus.ok()) return gpus.error();
              if (app.count("--watch") > 0) {
                return Watch(world, **gpus,
                             options->watch_seconds > 0 ? options->watch_seconds : 2);
              }
              Result<std::string> frame = Frame(world, **gpus, false);
              if (!frame.ok()) return frame.error();
              WriteAll(*frame);
              return 0;
            };
          }};
}

}  // namespace gpupin
