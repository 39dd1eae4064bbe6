// Asks the CUDA driver itself which devices a program would see, without
// gpupin ever initialising CUDA: a forked child sets the environment under
// examination, dlopens libcuda, calls cuInit and lists the devices, and
// reports back through a pipe. The child is killed when the driver hangs.
#pragma once

#include <chrono>
#include <map>
#include <string>

#include "core/error.h"
#include "core/probe_comparison.h"

namespace gpupin {

struct ProbeOptions {
  // "libcuda.so.1" on a real machine; a path to the simulated library in tests.
  std::string libcuda_path = "libcuda.so.1";
  // The child's COMPLETE environment (start from ProcessEnvironment() and
  // change what is being examined): CUDA reads it during cuInit.
  std::map<std::string, std::string> environment;
  // How long the driver may take, load to last device, before the child is killed.
  std::chrono::milliseconds timeout{5000};
};

// Every driver-side outcome (no libcuda, cuInit errors, a hang, a crash) is
// a ProbeResult value with its status and detail. Fails only when the probe
// process cannot be started (pipe or fork failing).
Result<ProbeResult> ProbeCuda(const ProbeOptions& options);

// 16 raw bytes -> "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" (lower-case hex).
std::string FormatCudaUuid(const unsigned char (&bytes)[16]);

}  // namespace gpupin
