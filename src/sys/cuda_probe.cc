#include "sys/cuda_probe.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>
#include <vector>

#include "core/probe_transcript.h"
#include "sys/c_string_array.h"

extern char** environ;

namespace gpupin {
namespace {

using json = nlohmann::json;

// The few CUDA driver API types the probe needs (cuda.h, stable since CUDA 2).
using CUresult = int;
using CUdevice = int;
struct CUuuid {
  unsigned char bytes[16];
};
constexpr CUresult kCudaSuccess = 0;

struct CudaApi {
  CUresult (*init)(unsigned int) = nullptr;
  CUresult (*driver_get_version)(int*) = nullptr;
  CUresult (*device_get_count)(int*) = nullptr;
  CUresult (*device_get)(CUdevice*, int) = nullptr;
  CUresult (*device_get_uuid)(CUuuid*, CUdevice) = nullptr;
  CUresult (*device_get_pci_bus_id)(char*, int, CUdevice) = nullptr;
  CUresult (*device_get_name)(char*, int, CUdevice) = nullptr;
  CUresult (*get_error_name)(CUresult, const char**) = nullptr;
};

template <class F>
void Bind(void* library, const char* symbol, F* slot) {
  *slot = reinterpret_cast<F>(dlsym(library, symbol));
}

// The child's side: one JSON object per line on `fd`.
class Reporter {
 public:
  explicit Reporter(int fd) : fd_(fd) {}
  void Send(const json& event) {
    const std::string line = event.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
    size_t written = 0;
    while (written < line.size()) {
      const ssize_t n = write(fd_, line.data() + written, line.size() - written);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) _exit(3);  // the parent is gone; nobody to tell
      written += static_cast<size_t>(n);
    }
  }

 private:
  int fd_;
};

json CudaCall(const CudaApi& api, const char* call, CUresult result) {
  json event = {{"event", "error"}, {"call", call}, {"result", result}};
  const char* name = nullptr;
  if (api.get_error_name != nullptr && api.get_error_name(result, &name) == kCudaSuccess &&
      name != nullptr) {
    event["name"] = name;
  }
  return event;
}

json ProbeDevice(const CudaApi& api, int ordinal) {
  json device = {{"event", "device"}, {"ordinal", ordinal}, {"errors", json::array()}};
  auto failed = [&](const char* call, CUresult result) {
    device["errors"].push_back(std::string(call) + ": " + DescribeCudaError(result));
  };
  CUdevice handle = 0;
  if (const CUresult r = api.device_get(&handle, ordinal); r != kCudaSuccess) {
    failed("cuDeviceGet", r);
    return device;
  }
  CUuuid uuid{};
  if (const CUresult r = api.device_get_uuid(&uuid, handle); r == kCudaSuccess) {
    device["uuid"] = FormatCudaUuid(uuid.bytes);
  } else {
    failed("cuDeviceGetUuid", r);
  }
  char text[256] = {};
  if (const CUresult r = api.device_get_pci_bus_id(text, sizeof text - 1, handle);
      r == kCudaSuccess) {
    device["pci_bus_id"] = std::string(text);
  } else {
    failed("cuDeviceGetPCIBusId", r);
  }
  std::memset(text, 0, sizeof text);
  if (const CUresult r = api.device_get_name(text, sizeof text - 1, handle); r == kCudaSuccess) {
    device["name"] = std::string(text);
  } else {
    failed("cuDeviceGetName", r);
  }
  return device;
}

[[noreturn]] void RunChild(const std::string& libcuda_path, int fd) {
  Reporter out(fd);
  void* library = dlopen(libcuda_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* why = dlerror();
    out.Send({{"event", "unavailable"},
              {"detail", "cannot load " + libcuda_path + ": " + (why ? why : "unknown reason")}});
    _exit(0);
  }
  CudaApi api;
  Bind(library, "cuInit", &api.init);
  Bind(library, "cuDriverGetVersion", &api.driver_get_version);
  Bind(library, "cuDeviceGetCount", &api.device_get_count);
  Bind(library, "cuDeviceGet", &api.device_get);
  // _v2 gives a MIG instance's own UUID; the first version its parent's.
  Bind(library, "cuDeviceGetUuid_v2", &api.device_get_uuid);
  if (api.device_get_uuid == nullptr) Bind(library, "cuDeviceGetUuid", &api.device_get_uuid);
  Bind(library, "cuDeviceGetPCIBusId", &api.device_get_pci_bus_id);
  Bind(library, "cuDeviceGetName", &api.device_get_name);
  Bind(library, "cuGetErrorName", &api.get_error_name);
  for (const auto& [symbol, present] :
       {std::pair{"cuInit", api.init != nullptr},
        std::pair{"cuDeviceGetCount", api.device_get_count != nullptr},
        std::pair{"cuDeviceGet", api.device_get != nullptr},
        std::pair{"cuDeviceGetUuid", api.device_get_uuid != nullptr},
        std::pair{"cuDeviceGetPCIBusId", api.device_get_pci_bus_id != nullptr},
        std::pair{"cuDeviceGetName", api.device_get_name != nullptr}}) {
    if (!present) {
      out.Send({{"event", "unavailable"},
                {"detail", libcuda_path + " lacks " + symbol + "; it is no CUDA driver library"}});
      _exit(0);
    }
  }
  out.Send({{"event", "loaded"}});
  if (const CUresult r = api.init(0); r != kCudaSuccess) {
    out.Send(CudaCall(api, "cuInit", r));
    _exit(0);
  }
  out.Send({{"event", "initialised"}});
  int version = 0;
  if (api.driver_get_version != nullptr && api.driver_get_version(&version) == kCudaSuccess) {
    out.Send({{"event", "driver_version"}, {"value", version}});
  }
  int count = 0;
  if (const CUresult r = api.device_get_count(&count); r != kCudaSuccess) {
    out.Send(CudaCall(api, "cuDeviceGetCount", r));
    _exit(0);
  }
  out.Send({{"event", "count"}, {"value", count}});
  for (int ordinal = 0; ordinal < count; ++ordinal) out.Send(ProbeDevice(api, ordinal));
  out.Send({{"event", "done"}});
  _exit(0);
}

// The parent's side: what the child says, until it closes the pipe or the
// deadline passes (then it is killed), and how it ended.
void Collect(int fd, pid_t child, std::chrono::milliseconds timeout, ProbeTranscript* transcript) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  char buffer[4096];
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      transcript->MarkTimedOut();
      kill(child, SIGKILL);
      break;
    }
    pollfd p{fd, POLLIN, 0};
    const int ready = poll(&p, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) continue;  // the deadline check above ends it
    const ssize_t n = read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // EOF: the child is done (or died)
    transcript->Append(std::string_view(buffer, static_cast<size_t>(n)));
  }
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  transcript->SetWaitStatus(status);
}

}  // namespace

std::string FormatCudaUuid(const unsigned char (&bytes)[16]) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string text = "GPU-";
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) text += '-';
    text += kHex[bytes[i] >> 4];
    text += kHex[bytes[i] & 0xf];
  }
  return text;
}

Result<ProbeResult> ProbeCuda(const ProbeOptions& options) {
  // Everything the child needs is prepared before fork, so that the child
  // only swaps `environ` and goes straight to dlopen.
  CStringArray environment = EnvironmentBlock(options.environment);

  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    return MakeError(ExitCode::kError, std::string("cannot create a pipe for the CUDA probe: ") +
                                           std::strerror(errno));
  }
  const pid_t child = fork();
  if (child < 0) {
    const int error = errno;
    close(fds[0]);
    close(fds[1]);
    return MakeError(ExitCode::kError,
                     std::string("cannot start the CUDA probe process: ") + std::strerror(error));
  }
  if (child == 0) {
    close(fds[0]);
    environ = environment.data();
    RunChild(options.libcuda_path, fds[1]);
  }
  close(fds[1]);
  ProbeTranscript transcript;
  Collect(fds[0], child, options.timeout, &transcript);
  close(fds[0]);
  return transcript.Interpret(options.timeout);
}

}  // namespace gpupin
