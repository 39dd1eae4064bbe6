// The simulated libcuda.so.1: the few driver API calls that tell which
// devices a process sees, answered from the scenario and this process's own
// CUDA_VISIBLE_DEVICES / CUDA_DEVICE_ORDER, as the real driver reads them at
// cuInit. The device list is fixed at cuInit, like the real driver's.
#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "sim/cuda_devices.h"
#include "sim/scenario_source.h"
#include "sys/environment.h"

#define CUDA_EXPORT extern "C" __attribute__((visibility("default")))

using CUresult = int;
using CUdevice = int;
struct CUuuid {
  unsigned char bytes[16];
};

namespace gpupin::sim {
namespace {

enum : CUresult {
  CUDA_SUCCESS = 0,
  CUDA_ERROR_INVALID_VALUE = 1,
  CUDA_ERROR_NOT_INITIALIZED = 3,
  CUDA_ERROR_NO_DEVICE = 100,
  CUDA_ERROR_INVALID_DEVICE = 101,
  CUDA_ERROR_NOT_SUPPORTED = 801,
  CUDA_ERROR_SYSTEM_DRIVER_MISMATCH = 803,
  CUDA_ERROR_UNKNOWN = 999,
};

struct CudaError {
  CUresult code;
  const char* name;
  const char* text;
};

constexpr CudaError kErrors[] = {
    {CUDA_SUCCESS, "CUDA_SUCCESS", "no error"},
    {CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
    {CUDA_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED", "operation not supported"},
    {CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
     "system has unsupported display driver / cuda driver combination"},
    {CUDA_ERROR_UNKNOWN, "CUDA_ERROR_UNKNOWN", "unknown error"},
};

struct Device {
  std::string uuid;         // GPU-... or MIG-...
  std::string parent_uuid;  // the physical GPU's
  std::string name;
  std::string pci_bus_id;  // CUDA's form, "0000:3B:00.0"
};

struct State {
  std::mutex mu;
  bool initialised = false;
  std::vector<Device> devices;
};

// CUDA has no shutdown: the state lives until the library is unloaded (by
// dlclose or at exit), and is freed then.
State& TheState() {
  static State state;
  return state;
}

Result<Scenario> LoadFromEnv() {
  auto path = ScenarioPathFromEnv();
  if (!path) return path.error();
  return LoadScenario(*path);
}

std::vector<Device> Enumerate(const Scenario& s, const Resolution& resolution) {
  std::vector<Device> devices;
  for (const VisibleDevice& v : resolution.visible) {
    const SimGpu& gpu = s.gpus[v.gpu_index];
    Device d{v.uuid, gpu.uuid, gpu.name.value_or(""), ""};
    if (gpu.pci)
      d.pci_bus_id =
          fmt::format("{:04X}:{:02X}:{:02X}.0", gpu.pci->domain, gpu.pci->bus, gpu.pci->device);
    for (const auto& m : gpu.mig_instances) {
      if (v.mig_index == m.slot && m.name) d.name = *m.name;
    }
    devices.push_back(std::move(d));
  }
  return devices;
}

// GPUPIN_SIM_CUDA_TRACE names a file to which cuInit appends, in one
// write, the CUDA_* variables of the process (NAME=VALUE, one a line) and
// then a line "cuInit": tests see what gpupin hands the driver, such as
// which variables of an examined process a probe passes on.
void TraceInit() {
  const char* path = std::getenv("GPUPIN_SIM_CUDA_TRACE");
  if (!path || !*path) return;
  std::string text;
  for (const auto& [name, value] : ProcessEnvironment()) {
    if (name.starts_with("CUDA_")) text.append(name).append("=").append(value).append("\n");
  }
  text += "cuInit\n";
  int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) return;
  [[maybe_unused]] ssize_t written = write(fd, text.data(), text.size());
  close(fd);
}

CUresult Init(unsigned flags) {
  if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
  State& st = TheState();
  std::lock_guard lock(st.mu);
  if (st.initialised) return CUDA_SUCCESS;
  TraceInit();
  auto scenario = LoadFromEnv();
  if (!scenario) {
    std::fprintf(stderr, "gpupin-sim: %s\n", scenario.error().message.c_str());
    return CUDA_ERROR_UNKNOWN;
  }
  // Until the caller gives up and kills the process, as a driver stuck on
  // an unresponsive card does.
  while (scenario->cuda_init_hangs) pause();
  if (scenario->init_error) {
    return *scenario->init_error == NVML_ERROR_LIB_RM_VERSION_MISMATCH
               ? CUDA_ERROR_SYSTEM_DRIVER_MISMATCH
               : CUDA_ERROR_NO_DEVICE;
  }
  const Resolution resolution = ResolveCudaDevices(*scenario, VisibilityEnvFromProcess());
  if (CUresult refused = CudaInitResult(resolution); refused != CUDA_SUCCESS) return refused;
  st.devices = Enumerate(*scenario, resolution);
  st.initialised = true;
  return CUDA_SUCCESS;
}

// Runs `body` on the device `ordinal` after the checks every device call makes.
template <class F>
CUresult OnDevice(CUdevice ordinal, F&& body) {
  State& st = TheState();
  std::lock_guard lock(st.mu);
  if (!st.initialised) return CUDA_ERROR_NOT_INITIALIZED;
  if (ordinal < 0 || static_cast<size_t>(ordinal) >= st.devices.size())
    return CUDA_ERROR_INVALID_DEVICE;
  return body(st.devices[static_cast<size_t>(ordinal)]);
}

// CUDA truncates strings that do not fit rather than failing.
CUresult CopyTruncated(const std::string& value, char* out, int length) {
  if (!out || length <= 0) return CUDA_ERROR_INVALID_VALUE;
  size_t n = std::min(value.size(), static_cast<size_t>(length) - 1);
  std::memcpy(out, value.data(), n);
  out[n] = '\0';
  return CUDA_SUCCESS;
}

CUresult CopyUuid(const std::string& uuid, CUuuid* out) {
  if (!out) return CUDA_ERROR_INVALID_VALUE;
  auto bytes = UuidBytes(uuid);
  std::copy(bytes->begin(), bytes->end(), out->bytes);
  return CUDA_SUCCESS;
}

const CudaError* FindError(CUresult code) {
  for (const auto& e : kErrors) {
    if (e.code == code) return &e;
  }
  return nullptr;
}

}  // namespace
}  // namespace gpupin::sim

using namespace gpupin::sim;  // NOLINT: the exported C functions below are thin wrappers

CUDA_EXPORT CUresult cuInit(unsigned int flags) { return Init(flags); }

CUDA_EXPORT CUresult cuDriverGetVersion(int* version) {
  if (!version) return CUDA_ERROR_INVALID_VALUE;
  auto scenario = LoadFromEnv();
  if (!scenario || !scenario->cuda_driver_version) return CUDA_ERROR_NOT_SUPPORTED;
  *version = *scenario->cuda_driver_version;
  return CUDA_SUCCESS;
}

CUDA_EXPORT CUresult cuDeviceGetCount(int* count) {
  State& st = TheState();
  std::lock_guard lock(st.mu);
  if (!st.initialised) return CUDA_ERROR_NOT_INITIALIZED;
  if (!count) return CUDA_ERROR_INVALID_VALUE;
  *count = static_cast<int>(st.devices.size());
  return CUDA_SUCCESS;
}

CUDA_EXPORT CUresult cuDeviceGet(CUdevice* device, int ordinal) {
  return OnDevice(ordinal, [&](const Device&) {
    if (!device) return CUDA_ERROR_INVALID_VALUE;
    *device = ordinal;
    return CUDA_SUCCESS;
  });
}

CUDA_EXPORT CUresult cuDeviceGetName(char* name, int length, CUdevice device) {
  return OnDevice(device, [&](const Device& d) { return CopyTruncated(d.name, name, length); });
}

// The first version names a MIG instance by its parent GPU; _v2 by its own UUID.
CUDA_EXPORT CUresult cuDeviceGetUuid(CUuuid* uuid, CUdevice device) {
  return OnDevice(device, [&](const Device& d) { return CopyUuid(d.parent_uuid, uuid); });
}

CUDA_EXPORT CUresult cuDeviceGetUuid_v2(CUuuid* uuid, CUdevice device) {
  return OnDevice(device, [&](const Device& d) { return CopyUuid(d.uuid, uuid); });
}

CUDA_EXPORT CUresult cuDeviceGetPCIBusId(char* bus_id, int length, CUdevice device) {
  return OnDevice(device, [&](const Device& d) {
    return d.pci_bus_id.empty() ? CUDA_ERROR_NOT_SUPPORTED
                                : CopyTruncated(d.pci_bus_id, bus_id, length);
  });
}

CUDA_EXPORT CUresult cuGetErrorString(CUresult error, const char** text) {
  if (!text) return CUDA_ERROR_INVALID_VALUE;
  const CudaError* e = FindError(error);
  *text = e ? e->text : nullptr;
  return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUDA_EXPORT CUresult cuGetErrorName(CUresult error, const char** name) {
  if (!name) return CUDA_ERROR_INVALID_VALUE;
  const CudaError* e = FindError(error);
  *name = e ? e->name : nullptr;
  return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
