// gpupin-sim-workload: behaves like a CUDA application on the simulated
// server. It resolves CUDA_VISIBLE_DEVICES / CUDA_DEVICE_ORDER as CUDA would,
// holds SIZE bytes on each device it sees (as an entry in the live registry,
// so the simulated NVML lists it), logs start (when it holds them, and when
// its main began) and end as JSON lines, and exits like a CUDA program: 100
// when it sees no device, 101 when a device is named twice, 128+signal when
// stopped by SIGTERM or SIGINT.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "core/units.h"
#include "sim/cuda_devices.h"
#include "sim/live_registry.h"
#include "sim/nvml_return.h"
#include "sim/scenario_source.h"
#include "sys/environment.h"

namespace gpupin::sim {
namespace {

constexpr const char* kProgram = "gpupin-sim-workload";

struct Options {
  std::string mem = "1G";
  std::optional<double> seconds;
  std::optional<std::string> log;
  bool graphics = false;
  std::string name = kProgram;
  // Test hook: the GPUs to hold, whatever the environment says.
  std::optional<std::string> gpus;
};

int Fail(const std::string& message, int code = 1) {
  std::fprintf(stderr, "%s: %s\n", kProgram, message.c_str());
  return code;
}

long long NowMs() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

// One write() of one line with O_APPEND: lines of concurrent workloads never interleave.
void LogLine(const std::optional<std::string>& path, const nlohmann::json& event) {
  if (!path) return;
  int fd = open(path->c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    Fail("cannot open the log " + *path);
    return;
  }
  // A --name that is not UTF-8 is written with U+FFFD, not thrown over.
  std::string line = event.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  if (write(fd, line.data(), line.size()) != static_cast<ssize_t>(line.size()))
    Fail("cannot write the log " + *path);
  close(fd);
}

// Waits until `seconds` after `began` (forever when absent) or until
// SIGTERM/SIGINT, which the caller has blocked; returns the signal, or 0
// when the time ran out.
int Wait(std::chrono::steady_clock::time_point began, std::optional<double> seconds) {
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGINT);
  if (!seconds) {
    int signal = 0;
    sigwait(&stop, &signal);
    return signal;
  }
  auto deadline = began + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                              std::chrono::duration<double>(*seconds));
  while (true) {
    auto left = std::chrono::duration_cast<std::chrono::nanoseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return 0;
    timespec wait{static_cast<time_t>(left.count() / 1000000000),
                  static_cast<long>(left.count() % 1000000000)};
    int signal = sigtimedwait(&stop, nullptr, &wait);
    if (signal > 0) return signal;
  }
}

// When main began: a job's --seconds count from there, as its life does,
// so that its own start-up (reading the scenario, as cuInit would) is part
// of the job and not of the gap before it.
struct Began {
  std::chrono::steady_clock::time_point steady;
  long long unix_ms;
};

int Run(const Options& options, const Began& began) {
  auto bytes = ParseSize(options.mem);
  if (!bytes) return Fail("--mem: " + bytes.error().message, 2);
  if (options.seconds && !(*options.seconds >= 0)) return Fail("--seconds must be 0 or more", 2);
  auto path = ScenarioPathFromEnv();
  if (!path) return Fail(path.error().message);
  auto scenario = LoadScenario(*path);
  if (!scenario) return Fail(scenario.error().message);
  if (scenario->init_error)
    return Fail(std::string("CUDA driver initialisation failed (NVML: ") +
                NvmlReturnText(*scenario->init_error) + ")");

  VisibilityEnv env = VisibilityEnvFromProcess();
  // --gpus simulates CUDA_VISIBLE_DEVICES set after CUDA initialised: the
  // process runs on the GPUs CUDA saw at start, while /proc/PID/environ
  // shows the later value. The list is read like CUDA_VISIBLE_DEVICES under
  // PCI_BUS_ID, so NVML indices and UUIDs both work.
  VisibilityEnv at_init = env;
  if (options.gpus) at_init = {*options.gpus, "PCI_BUS_ID", {}, {}, {}, {}};
  Resolution resolution = ResolveCudaDevices(*scenario, at_init);
  switch (CudaInitResult(resolution)) {
    case 0:
      break;
    case 101:
      return Fail("invalid device ordinal (a device is named twice)", 101);
    default:
      return Fail("no CUDA-capable device is detected", 100);
  }

  // Blocked before registering, so a signal in between ends us cleanly below.
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGINT);
  sigprocmask(SIG_BLOCK, &stop, nullptr);

  LiveProcess me{getpid(),    ProcessStartTime(getpid()).value_or(0), {}, *bytes, options.graphics,
                 options.name};
  nlohmann::json indices = nlohmann::json::array();
  for (const VisibleDevice& d : resolution.visible) {
    me.uuids.push_back(d.uuid);
    indices.push_back(d.gpu_index);
  }
  std::string dir = LiveDir(*path);
  if (auto registered = RegisterLive(dir, me); !registered) return Fail(registered.error().message);

  LogLine(options.log, {{"event", "start"},
                        {"pid", me.pid},
                        {"t_ms", NowMs()},
                        {"main_ms", began.unix_ms},
                        {"uuids", me.uuids},
                        {"nvml_indices", indices},
                        {"cuda_visible_devices", env.cuda_visible_devices
                                                     ? nlohmann::json(*env.cuda_visible_devices)
                                                     : nlohmann::json(nullptr)},
                        {"name", options.name}});
  int signal = Wait(began.steady, options.seconds);
  UnregisterLive(dir, me);
  nlohmann::json end = {
      {"event", "end"}, {"pid", me.pid}, {"t_ms", NowMs()}, {"name", options.name}};
  if (signal) end["signal"] = signal;
  LogLine(options.log, end);
  return signal ? 128 + signal : 0;
}

}  // namespace
}  // namespace gpupin::sim

int main(int argc, char** argv) {
  const gpupin::sim::Began began{std::chrono::steady_clock::now(), gpupin::sim::NowMs()};
  gpupin::sim::Options options;
  CLI::App app{"A CUDA application on the simulated server: holds memory on the GPUs it sees."};
  app.add_option("--mem", options.mem, "memory to hold on each visible GPU (default 1G)");
  app.add_option("--seconds", options.seconds,
                 "how long to run, from the process's start (default: until killed)");
  app.add_option("--log", options.log, "append JSON lines for start and end to FILE");
  app.add_flag("--graphics", options.graphics,
               "be listed as a graphics process instead of compute");
  app.add_option("--name", options.name, "a name for the log and the registry");
  app.add_option("--gpus", options.gpus,
                 "hold these GPUs (NVML indices or UUIDs, comma-separated, one kind) whatever the "
                 "environment says: simulates CUDA_VISIBLE_DEVICES set after CUDA initialised");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    // --help and --version are ParseErrors that exit 0; the rest is a bad
    // option, exit 2 as documented, not CLI11's own code.
    const int status = app.exit(error);
    return status == 0 ? 0 : 2;
  }
  return gpupin::sim::Run(options, began);
}
