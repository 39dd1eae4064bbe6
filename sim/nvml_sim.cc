// The simulated libnvidia-ml: every exported function has the real NVML
// ABI (sys/nvml/nvml_abi.h) and answers from the scenario file plus the live
// registry, following NVML's return protocols (facts §5.7). The variant
// libraries are this same code linked with smaller export lists.
#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "sim/live_cache.h"
#include "sim/nvml_return.h"
#include "sim/scenario_source.h"

// A handle: which GPU (NVML index) and which MIG slot (-1: the whole GPU).
// Handles are created once per (GPU, slot) and stay valid pointers across
// scenario reloads, until the last nvmlShutdown (as NVML's own).
struct nvmlDevice_st {
  uint32_t gpu = 0;
  int32_t mig_slot = -1;
};

#define NVML_EXPORT extern "C" __attribute__((visibility("default")))

namespace gpupin::sim {
namespace {

constexpr unsigned kNoInstance = 0xFFFFFFFFu;

enum class ProcessKind { kCompute, kGraphics, kMps };

// The two-call protocol's state for one handle and one list: after an
// INSUFFICIENT_SIZE answer the next fetch sees the scenario's extra
// processes (grow_processes_on_fetch), and keeps seeing them.
struct Growth {
  bool pending = false;
  bool grown = false;
};

struct State {
  int init_count = 0;
  std::unique_ptr<ScenarioSource> source;
  std::unique_ptr<LiveCache> live;
  uint64_t generation = 0;
  std::map<std::pair<uint32_t, int32_t>, std::unique_ptr<nvmlDevice_st>> handles;
  std::set<const nvmlDevice_st*> known;
  std::map<std::pair<const nvmlDevice_st*, ProcessKind>, Growth> growth;
};

// The state lives from the first nvmlInit to the last nvmlShutdown (or the
// failed nvmlInit that leaves nobody initialised): a library that is then
// dlclosed leaves nothing behind, and one that is never shut down keeps its
// state until exit, when a static destructor could race a late call.
// g_mu is constant-initialised and trivially destructible, so it is usable
// at any time, even during exit.
std::mutex g_mu;
State* g_state = nullptr;  // guarded by g_mu
// Why the last nvmlInit could not load the scenario (guarded by g_mu): the
// caller says it, in one line of its own, through gpupinSimLoadError.
std::string g_load_error;

// GPUPIN_SIM_NVML_TRACE names a file to which every NVML call made is
// appended, one function name a line: tests count what a command asks the
// driver for. Opened at the first call (guarded by g_mu), never closed: the
// process's exit does.
int g_trace_fd = -2;  // -2: not opened yet; -1: no trace

void Trace(const char* name) {
  if (g_trace_fd == -2) {
    const char* path = std::getenv("GPUPIN_SIM_NVML_TRACE");
    g_trace_fd = path && *path
                     ? open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0644)
                     : -1;
  }
  if (g_trace_fd < 0) return;
  std::string line = std::string(name) + "\n";
  // One write per line with O_APPEND: lines of concurrent processes do not mix.
  [[maybe_unused]] ssize_t written = write(g_trace_fd, line.data(), line.size());
}

State& TheState() {
  if (g_state == nullptr) g_state = new State;
  return *g_state;
}

void ReleaseStateIfUnused() {
  if (g_state != nullptr && g_state->init_count == 0) {
    delete g_state;
    g_state = nullptr;
  }
}

nvmlDevice_t HandleFor(State& st, uint32_t gpu, int32_t mig_slot) {
  auto& slot = st.handles[{gpu, mig_slot}];
  if (!slot) {
    slot = std::make_unique<nvmlDevice_st>(nvmlDevice_st{gpu, mig_slot});
    st.known.insert(slot.get());
  }
  return slot.get();
}

// What a handle means in the current scenario.
struct Target {
  nvmlDevice_t handle = nullptr;
  uint32_t index = 0;
  const SimGpu* gpu = nullptr;
  const SimMigInstance* mig = nullptr;  // set for a MIG handle
};

struct Call {
  State& st;
  const Scenario& s;
};

// Whether a call looks at the scenario file and the live registry again.
// Calls that take no device (init, counting, handle lookups, system
// queries) do: every caller makes one at the start of each look at the
// server. Calls on a handle answer from what that look found: looking at
// the files on each of them cost a snapshot of 8 busy GPUs ~900 system
// calls, where a driver answers an ioctl.
enum class Recheck { kYes, kNo };

// Runs `body` for a call: checks init, re-reads a changed scenario (unless
// told not to look), applies configured faults.
template <class F>
nvmlReturn_t SystemCall(const char* name, F&& body, Recheck recheck = Recheck::kYes) {
  std::lock_guard lock(g_mu);
  Trace(name);
  if (g_state == nullptr || g_state->init_count == 0 || !g_state->source)
    return NVML_ERROR_UNINITIALIZED;
  State& st = *g_state;
  auto scenario = recheck == Recheck::kYes ? st.source->Current() : st.source->Loaded();
  if (recheck == Recheck::kYes) st.live->List();
  if (!scenario) return NVML_ERROR_UNKNOWN;
  if (st.generation != st.source->generation()) {
    st.generation = st.source->generation();
    st.growth.clear();
  }
  const Scenario& s = **scenario;
  if (auto error = ConfiguredError(s.errors, name)) return *error;
  return body(Call{st, s});
}

nvmlReturn_t Resolve(const Call& c, const char* name, nvmlDevice_t handle, Target* t) {
  if (!handle || !c.st.known.contains(handle)) return NVML_ERROR_INVALID_ARGUMENT;
  // A GPU that a reload removed has fallen off the bus.
  if (handle->gpu >= c.s.gpus.size()) return NVML_ERROR_GPU_IS_LOST;
  t->handle = handle;
  t->index = handle->gpu;
  t->gpu = &c.s.gpus[handle->gpu];
  if (handle->mig_slot >= 0) {
    for (const auto& m : t->gpu->mig_instances) {
      if (static_cast<int32_t>(m.slot) == handle->mig_slot) t->mig = &m;
    }
    // The instance was destroyed: NVML invalidates its handles.
    if (!t->mig || !t->gpu->mig_enabled.value_or(false)) return NVML_ERROR_INVALID_ARGUMENT;
  }
  if (t->gpu->lost) return NVML_ERROR_GPU_IS_LOST;
  if (auto error = ConfiguredError(t->gpu->errors, name)) return *error;
  return NVML_SUCCESS;
}

template <class F>
nvmlReturn_t DeviceCall(const char* name, nvmlDevice_t handle, F&& body) {
  return SystemCall(
      name,
      [&](const Call& c) {
        Target t;
        if (nvmlReturn_t r = Resolve(c, name, handle, &t); r != NVML_SUCCESS) return r;
        return body(c, t);
      },
      Recheck::kNo);
}

nvmlReturn_t CopyString(const std::optional<std::string>& value, char* out, unsigned length) {
  if (!value) return NVML_ERROR_NOT_SUPPORTED;
  if (!out) return NVML_ERROR_INVALID_ARGUMENT;
  if (length < value->size() + 1) return NVML_ERROR_INSUFFICIENT_SIZE;
  std::memcpy(out, value->c_str(), value->size() + 1);
  return NVML_SUCCESS;
}

template <class T, class V>
nvmlReturn_t Put(const std::optional<V>& value, T* out) {
  if (!out) return NVML_ERROR_INVALID_ARGUMENT;
  if (!value) return NVML_ERROR_NOT_SUPPORTED;
  *out = static_cast<T>(*value);
  return NVML_SUCCESS;
}

bool UsesDevice(const LiveProcess& p, const std::string& uuid) {
  return std::find(p.uuids.begin(), p.uuids.end(), uuid) != p.uuids.end();
}

// Whether a live process holds memory on the device: a whole GPU includes
// its MIG instances.
bool HoldsMemoryOn(const LiveProcess& p, const Target& t) {
  if (t.mig) return UsesDevice(p, t.mig->uuid);
  return UsesDevice(p, t.gpu->uuid) ||
         std::any_of(t.gpu->mig_instances.begin(), t.gpu->mig_instances.end(),
                     [&](const SimMigInstance& m) { return UsesDevice(p, m.uuid); });
}

// The device's memory with live workloads added: {total, reserved, used}.
std::optional<SimMemory> MemoryNow(const Call& c, const Target& t) {
  const auto& base = t.mig ? t.mig->memory : t.gpu->memory;
  if (!base) return std::nullopt;
  SimMemory m = *base;
  for (const auto& p : c.st.live->Last()) {
    if (HoldsMemoryOn(p, t)) m.used_bytes += p.used_memory_bytes;
  }
  m.used_bytes = std::min(m.used_bytes, m.total_bytes - std::min(m.total_bytes, m.reserved_bytes));
  return m;
}

struct Entry {
  uint32_t pid = 0;
  unsigned long long used = kNvmlValueNotAvailable;
  unsigned gi = kNoInstance;
  unsigned ci = kNoInstance;
};

bool OfKind(bool compute, bool graphics, ProcessKind kind) {
  return kind == ProcessKind::kCompute ? compute : kind == ProcessKind::kGraphics && graphics;
}

void AddStatic(const std::vector<SimProcess>& processes, ProcessKind kind,
               const SimMigInstance* mig, std::vector<Entry>& out) {
  for (const auto& p : processes) {
    if (!OfKind(p.compute, p.graphics, kind)) continue;
    Entry e{p.pid, p.used_memory_bytes.value_or(kNvmlValueNotAvailable)};
    if (mig) {
      e.gi = mig->gpu_instance_id.value_or(kNoInstance);
      e.ci = mig->compute_instance_id.value_or(kNoInstance);
    }
    out.push_back(e);
  }
}

void AddLive(const std::vector<LiveProcess>& live, const std::string& uuid, ProcessKind kind,
             const SimMigInstance* mig, std::vector<Entry>& out) {
  for (const auto& p : live) {
    if (!UsesDevice(p, uuid) || !OfKind(!p.graphics, p.graphics, kind)) continue;
    Entry e{static_cast<uint32_t>(p.pid), p.used_memory_bytes};
    if (mig) {
      e.gi = mig->gpu_instance_id.value_or(kNoInstance);
      e.ci = mig->compute_instance_id.value_or(kNoInstance);
    }
    out.push_back(e);
  }
}

// The processes on a device now. A whole GPU in MIG mode lists those of its
// instances too, as NVML does for a privileged caller.
std::vector<Entry> ProcessesNow(const Call& c, const Target& t, ProcessKind kind, bool grown) {
  std::vector<Entry> out;
  if (kind == ProcessKind::kMps) return out;
  const auto& live = c.st.live->Last();
  if (t.mig) {
    AddStatic(t.mig->processes, kind, t.mig, out);
    AddLive(live, t.mig->uuid, kind, t.mig, out);
  } else {
    AddStatic(t.gpu->processes, kind, nullptr, out);
    AddLive(live, t.gpu->uuid, kind, nullptr, out);
    for (const auto& m : t.gpu->mig_instances) {
      AddStatic(m.processes, kind, &m, out);
      AddLive(live, m.uuid, kind, &m, out);
    }
  }
  if (grown) {
    // Processes that "started" between the count call and the fetch. Their
    // pids are above any real pid_max default so they never name a real process.
    for (uint32_t k = 0; k < c.s.grow_processes_on_fetch; ++k)
      out.push_back(Entry{5000000 + t.index * 1000 + k, 256ULL << 20});
  }
  return out;
}

void WriteEntry(const Entry& e, size_t stride, unsigned char* at) {
  if (stride == sizeof(nvmlProcessInfo_v1_t)) {
    nvmlProcessInfo_v1_t v1{e.pid, e.used};
    std::memcpy(at, &v1, sizeof v1);
  } else if (stride == sizeof(nvmlProcessInfo_v2_t)) {
    nvmlProcessInfo_v2_t v2{e.pid, e.used, e.gi, e.ci};
    std::memcpy(at, &v2, sizeof v2);
  } else {
    nvmlProcessInfo_v3_wide_t v3{e.pid, e.used, e.gi, e.ci, 0};
    std::memcpy(at, &v3, sizeof v3);
  }
}

// stride 0: the scenario's _v3 stride.
nvmlReturn_t GetProcesses(const char* name, nvmlDevice_t handle, unsigned* count, void* infos,
                          size_t stride, ProcessKind kind) {
  return DeviceCall(name, handle, [&](const Call& c, const Target& t) -> nvmlReturn_t {
    if (!count || (!infos && *count != 0)) return NVML_ERROR_INVALID_ARGUMENT;
    Growth& growth = c.st.growth[{t.handle, kind}];
    if (infos && growth.pending && c.s.grow_processes_on_fetch > 0) growth.grown = true;
    auto entries = ProcessesNow(c, t, kind, growth.grown);
    if (!infos && entries.empty()) return NVML_SUCCESS;
    if (*count < entries.size()) {
      *count = static_cast<unsigned>(entries.size());
      growth.pending = true;
      return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    size_t step = stride ? stride : c.s.process_stride;
    for (size_t i = 0; i < entries.size(); ++i)
      WriteEntry(entries[i], step, static_cast<unsigned char*>(infos) + i * step);
    *count = static_cast<unsigned>(entries.size());
    return NVML_SUCCESS;
  });
}

void FillPci(const SimPci& pci, nvmlPciInfo_t* out) {
  std::memset(out, 0, sizeof *out);
  fmt::format_to_n(out->busIdLegacy, sizeof out->busIdLegacy - 1, "{:04X}:{:02X}:{:02X}.0",
                   pci.domain & 0xffff, pci.bus, pci.device);
  out->domain = pci.domain;
  out->bus = pci.bus;
  out->device = pci.device;
  out->pciDeviceId = pci.pci_device_id;
  std::memcpy(out->busId, pci.bus_id.c_str(), std::min(pci.bus_id.size(), sizeof out->busId - 1));
}

nvmlReturn_t GetPciInfo(const char* name, nvmlDevice_t handle, nvmlPciInfo_t* pci) {
  return DeviceCall(name, handle, [&](const Call&, const Target& t) -> nvmlReturn_t {
    if (!pci) return NVML_ERROR_INVALID_ARGUMENT;
    if (!t.gpu->pci) return NVML_ERROR_NOT_SUPPORTED;
    FillPci(*t.gpu->pci, pci);
    return NVML_SUCCESS;
  });
}

nvmlReturn_t InitLocked(const char* name) {
  State& st = TheState();
  // A first init (again after the last shutdown) reads the environment
  // afresh, so one process can open several scenarios in turn.
  g_load_error.clear();
  if (st.init_count == 0) {
    auto path = ScenarioPathFromEnv();
    if (!path) {
      g_load_error = path.error().message;
      return NVML_ERROR_UNKNOWN;
    }
    st.source = std::make_unique<ScenarioSource>(*path);
    st.live = std::make_unique<LiveCache>(st.source->live_dir());
  }
  auto scenario = st.source->Current();
  if (!scenario) {
    g_load_error = scenario.error().message;
    return NVML_ERROR_UNKNOWN;
  }
  if ((*scenario)->init_error) return *(*scenario)->init_error;
  if (auto error = ConfiguredError((*scenario)->errors, name)) return *error;
  if (st.init_count == 0 && (*scenario)->nvml_init_ms > 0)
    std::this_thread::sleep_for(std::chrono::milliseconds((*scenario)->nvml_init_ms));
  ++st.init_count;
  return NVML_SUCCESS;
}

nvmlReturn_t Init(const char* name) {
  std::lock_guard lock(g_mu);
  Trace(name);
  nvmlReturn_t result = InitLocked(name);
  ReleaseStateIfUnused();
  return result;
}

nvmlReturn_t GetCount(const char* name, unsigned* count) {
  return SystemCall(name,
                    [&](const Call& c) { return Put(std::optional(c.s.gpus.size()), count); });
}

nvmlReturn_t GetHandleByIndex(const char* name, unsigned index, nvmlDevice_t* device) {
  return SystemCall(name, [&](const Call& c) -> nvmlReturn_t {
    if (!device || index >= c.s.gpus.size()) return NVML_ERROR_INVALID_ARGUMENT;
    if (auto error = ConfiguredError(c.s.gpus[index].errors, name)) return *error;
    *device = HandleFor(c.st, index, -1);
    return NVML_SUCCESS;
  });
}

nvmlReturn_t GetHandleByPciBusId(const char* name, const char* bus_id, nvmlDevice_t* device) {
  return SystemCall(name, [&](const Call& c) -> nvmlReturn_t {
    if (!bus_id || !device) return NVML_ERROR_INVALID_ARGUMENT;
    auto wanted = ParsePciBusId(bus_id);
    if (!wanted) return NVML_ERROR_INVALID_ARGUMENT;
    for (uint32_t i = 0; i < c.s.gpus.size(); ++i) {
      if (c.s.gpus[i].pci && c.s.gpus[i].pci->bus_id == wanted->bus_id) {
        *device = HandleFor(c.st, i, -1);
        return NVML_SUCCESS;
      }
    }
    return NVML_ERROR_NOT_FOUND;
  });
}

}  // namespace
}  // namespace gpupin::sim

using namespace gpupin::sim;  // NOLINT: the exported C functions below are thin wrappers

// Not NVML: why the last nvmlInit failed to load the scenario ("" when it
// did not fail so). No real driver has the symbol.
NVML_EXPORT const char* gpupinSimLoadError() {
  std::lock_guard lock(g_mu);
  return g_load_error.c_str();
}

NVML_EXPORT nvmlReturn_t nvmlInit() { return Init("nvmlInit"); }
NVML_EXPORT nvmlReturn_t nvmlInit_v2() { return Init("nvmlInit_v2"); }
NVML_EXPORT nvmlReturn_t nvmlInitWithFlags(unsigned int) { return Init("nvmlInitWithFlags"); }

NVML_EXPORT nvmlReturn_t nvmlShutdown() {
  std::lock_guard lock(g_mu);
  Trace("nvmlShutdown");
  if (g_state != nullptr && g_state->init_count > 0) --g_state->init_count;
  ReleaseStateIfUnused();
  return NVML_SUCCESS;
}

NVML_EXPORT const char* nvmlErrorString(nvmlReturn_t result) { return NvmlReturnText(result); }

NVML_EXPORT nvmlReturn_t nvmlSystemGetDriverVersion(char* version, unsigned int length) {
  return SystemCall("nvmlSystemGetDriverVersion",
                    [&](const Call& c) { return CopyString(c.s.driver_version, version, length); });
}

NVML_EXPORT nvmlReturn_t nvmlSystemGetNVMLVersion(char* version, unsigned int length) {
  return SystemCall("nvmlSystemGetNVMLVersion",
                    [&](const Call& c) { return CopyString(c.s.nvml_version, version, length); });
}

NVML_EXPORT nvmlReturn_t nvmlSystemGetCudaDriverVersion(int* version) {
  return SystemCall("nvmlSystemGetCudaDriverVersion",
                    [&](const Call& c) { return Put(c.s.cuda_driver_version, version); });
}

NVML_EXPORT nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int* version) {
  return SystemCall("nvmlSystemGetCudaDriverVersion_v2",
                    [&](const Call& c) { return Put(c.s.cuda_driver_version, version); });
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetCount(unsigned int* count) {
  return GetCount("nvmlDeviceGetCount", count);
}
NVML_EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* count) {
  return GetCount("nvmlDeviceGetCount_v2", count);
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int index, nvmlDevice_t* device) {
  return GetHandleByIndex("nvmlDeviceGetHandleByIndex", index, device);
}
NVML_EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t* device) {
  return GetHandleByIndex("nvmlDeviceGetHandleByIndex_v2", index, device);
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetHandleByUUID(const char* uuid, nvmlDevice_t* device) {
  return SystemCall("nvmlDeviceGetHandleByUUID", [&](const Call& c) -> nvmlReturn_t {
    if (!uuid || !device) return NVML_ERROR_INVALID_ARGUMENT;
    for (uint32_t i = 0; i < c.s.gpus.size(); ++i) {
      const SimGpu& g = c.s.gpus[i];
      if (g.uuid == uuid) {
        *device = HandleFor(c.st, i, -1);
        return NVML_SUCCESS;
      }
      for (const auto& m : g.mig_instances) {
        if (m.uuid == uuid && g.mig_enabled.value_or(false)) {
          *device = HandleFor(c.st, i, static_cast<int32_t>(m.slot));
          return NVML_SUCCESS;
        }
      }
    }
    return NVML_ERROR_NOT_FOUND;
  });
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetHandleByPciBusId(const char* bus_id, nvmlDevice_t* device) {
  return GetHandleByPciBusId("nvmlDeviceGetHandleByPciBusId", bus_id, device);
}
NVML_EXPORT nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char* bus_id,
                                                          nvmlDevice_t* device) {
  return GetHandleByPciBusId("nvmlDeviceGetHandleByPciBusId_v2", bus_id, device);
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t device, unsigned int* index) {
  return DeviceCall("nvmlDeviceGetIndex", device, [&](const Call&, const Target& t) {
    return Put(std::optional(t.mig ? t.mig->slot : t.index), index);
  });
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetPciInfo(nvmlDevice_t device, nvmlPciInfo_t* pci) {
  return GetPciInfo("nvmlDeviceGetPciInfo", device, pci);
}
NVML_EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v2(nvmlDevice_t device, nvmlPciInfo_t* pci) {
  return GetPciInfo("nvmlDeviceGetPciInfo_v2", device, pci);
}
NVML_EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t* pci) {
  return GetPciInfo("nvmlDeviceGetPciInfo_v3", device, pci);
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char* name, unsigned int length) {
  return DeviceCall("nvmlDeviceGetName", device, [&](const Call&, const Target& t) {
    return CopyString(t.mig ? t.mig->name : t.gpu->name, name, length);
  });
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char* uuid, unsigned int length) {
  return DeviceCall("nvmlDeviceGetUUID", device, [&](const Call&, const Target& t) {
    return CopyString(std::optional(t.mig ? t.mig->uuid : t.gpu->uuid), uuid, length);
  });
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t* memory) {
  return DeviceCall("nvmlDeviceGetMemoryInfo", device,
                    [&](const Call& c, const Target& t) -> nvmlReturn_t {
                      if (!memory) return NVML_ERROR_INVALID_ARGUMENT;
                      auto m = MemoryNow(c, t);
                      if (!m) return NVML_ERROR_NOT_SUPPORTED;
                      // v1 counts driver-reserved memory as used.
                      memory->total = m->total_bytes;
                      memory->used = m->used_bytes + m->reserved_bytes;
                      memory->free = m->total_bytes - memory->used;
                      return NVML_SUCCESS;
                    });
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, nvmlMemory_v2_t* memory) {
  return DeviceCall("nvmlDeviceGetMemoryInfo_v2", device,
                    [&](const Call& c, const Target& t) -> nvmlReturn_t {
                      if (!memory) return NVML_ERROR_INVALID_ARGUMENT;
                      if (memory->version != kNvmlMemoryV2Version)
                        return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
                      auto m = MemoryNow(c, t);
                      if (!m) return NVML_ERROR_NOT_SUPPORTED;
                      memory->total = m->total_bytes;
                      memory->reserved = m->reserved_bytes;
                      memory->used = m->used_bytes;
                      memory->free = m->total_bytes - m->reserved_bytes - m->used_bytes;
                      return NVML_SUCCESS;
                    });
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device,
                                                       nvmlUtilization_t* utilization) {
  return DeviceCall("nvmlDeviceGetUtilizationRates", device,
                    [&](const Call&, const Target& t) -> nvmlReturn_t {
                      // Not supported on MIG instances nor on a GPU in MIG mode (facts §5.6).
                      if (t.mig || t.gpu->mig_enabled.value_or(false))
                        return NVML_ERROR_NOT_SUPPORTED;
                      return Put(t.gpu->utilization, utilization);
                    });
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device, unsigned int sensor,
                                                  unsigned int* temp) {
  return DeviceCall("nvmlDeviceGetTemperature", device,
                    [&](const Call&, const Target& t) -> nvmlReturn_t {
                      if (sensor != kNvmlTemperatureGpu) return NVML_ERROR_INVALID_ARGUMENT;
                      return Put(t.gpu->temperature_c, temp);
                    });
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int* power_mw) {
  return DeviceCall("nvmlDeviceGetPowerUsage", device, [&](const Call&, const Target& t) {
    return Put(t.gpu->power_draw_mw, power_mw);
  });
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t device,
                                                         unsigned int* limit_mw) {
  return DeviceCall("nvmlDeviceGetEnforcedPowerLimit", device, [&](const Call&, const Target& t) {
    return Put(t.gpu->power_limit_mw, limit_mw);
  });
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetPowerManagementLimit(nvmlDevice_t device,
                                                           unsigned int* limit_mw) {
  return DeviceCall("nvmlDeviceGetPowerManagementLimit", device, [&](const Call&, const Target& t) {
    return Put(t.gpu->power_limit_mw, limit_mw);
  });
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetComputeMode(nvmlDevice_t device, int* mode) {
  return DeviceCall("nvmlDeviceGetComputeMode", device,
                    [&](const Call&, const Target& t) { return Put(t.gpu->compute_mode, mode); });
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetPersistenceMode(nvmlDevice_t device, unsigned int* mode) {
  return DeviceCall("nvmlDeviceGetPersistenceMode", device, [&](const Call&, const Target& t) {
    return Put(t.gpu->persistence_mode, mode);
  });
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t device, int* major,
                                                            int* minor) {
  return DeviceCall("nvmlDeviceGetCudaComputeCapability", device,
                    [&](const Call&, const Target& t) -> nvmlReturn_t {
                      if (!major || !minor) return NVML_ERROR_INVALID_ARGUMENT;
                      if (!t.gpu->compute_capability) return NVML_ERROR_NOT_SUPPORTED;
                      *major = t.gpu->compute_capability->first;
                      *minor = t.gpu->compute_capability->second;
                      return NVML_SUCCESS;
                    });
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetNumGpuCores(nvmlDevice_t device, unsigned int* cores) {
  return DeviceCall("nvmlDeviceGetNumGpuCores", device,
                    [&](const Call&, const Target& t) -> nvmlReturn_t {
                      if (t.mig) return NVML_ERROR_NOT_SUPPORTED;
                      return Put(t.gpu->cores, cores);
                    });
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetMinorNumber(nvmlDevice_t device, unsigned int* minor) {
  return DeviceCall("nvmlDeviceGetMinorNumber", device,
                    [&](const Call&, const Target& t) { return Put(t.gpu->minor_number, minor); });
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetNumaNodeId(nvmlDevice_t device, unsigned int* node) {
  return DeviceCall("nvmlDeviceGetNumaNodeId", device,
                    [&](const Call&, const Target& t) { return Put(t.gpu->numa_node, node); });
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetBoardId(nvmlDevice_t device, unsigned int* board) {
  return DeviceCall("nvmlDeviceGetBoardId", device,
                    [&](const Call&, const Target& t) { return Put(t.gpu->board_id, board); });
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetMultiGpuBoard(nvmlDevice_t device, unsigned int* multi) {
  return DeviceCall("nvmlDeviceGetMultiGpuBoard", device, [&](const Call&, const Target& t) {
    return Put(t.gpu->multi_gpu_board, multi);
  });
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetCpuAffinity(nvmlDevice_t device, unsigned int size,
                                                  unsigned long* set) {
  return DeviceCall("nvmlDeviceGetCpuAffinity", device,
                    [&](const Call&, const Target& t) -> nvmlReturn_t {
                      if (size == 0 || !set) return NVML_ERROR_INVALID_ARGUMENT;
                      if (!t.gpu->cpu_affinity) return NVML_ERROR_NOT_SUPPORTED;
                      constexpr unsigned kBits = sizeof(unsigned long) * 8;
                      std::fill(set, set + size, 0UL);
                      for (uint32_t cpu : *t.gpu->cpu_affinity) {
                        if (cpu / kBits < size) set[cpu / kBits] |= 1UL << (cpu % kBits);
                      }
                      return NVML_SUCCESS;
                    });
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t device, unsigned int* current,
                                              unsigned int* pending) {
  return DeviceCall("nvmlDeviceGetMigMode", device,
                    [&](const Call&, const Target& t) -> nvmlReturn_t {
                      if (!current || !pending) return NVML_ERROR_INVALID_ARGUMENT;
                      if (t.mig || !t.gpu->mig_enabled) return NVML_ERROR_NOT_SUPPORTED;
                      *current = *pending = *t.gpu->mig_enabled ? kNvmlMigEnable : 0;
                      return NVML_SUCCESS;
                    });
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t device, unsigned int* count) {
  return DeviceCall("nvmlDeviceGetMaxMigDeviceCount", device, [&](const Call&, const Target& t) {
    // 0 when MIG is unsupported or disabled.
    return Put(
        std::optional(t.gpu->mig_enabled.value_or(false) && !t.mig ? t.gpu->mig_max_devices : 0u),
        count);
  });
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t device,
                                                             unsigned int index,
                                                             nvmlDevice_t* mig) {
  return DeviceCall("nvmlDeviceGetMigDeviceHandleByIndex", device,
                    [&](const Call& c, const Target& t) -> nvmlReturn_t {
                      if (!mig || t.mig) return NVML_ERROR_INVALID_ARGUMENT;
                      if (!t.gpu->mig_enabled.value_or(false)) return NVML_ERROR_NOT_SUPPORTED;
                      if (index >= t.gpu->mig_max_devices) return NVML_ERROR_INVALID_ARGUMENT;
                      for (const auto& m : t.gpu->mig_instances) {
                        if (m.slot == index) {
                          *mig = HandleFor(c.st, t.index, static_cast<int32_t>(index));
                          return NVML_SUCCESS;
                        }
                      }
                      return NVML_ERROR_NOT_FOUND;
                    });
}

NVML_EXPORT nvmlReturn_t nvmlDeviceIsMigDeviceHandle(nvmlDevice_t device, unsigned int* is_mig) {
  return DeviceCall("nvmlDeviceIsMigDeviceHandle", device, [&](const Call&, const Target& t) {
    return Put(std::optional(t.mig != nullptr), is_mig);
  });
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetDeviceHandleFromMigDeviceHandle(nvmlDevice_t mig,
                                                                      nvmlDevice_t* device) {
  return DeviceCall("nvmlDeviceGetDeviceHandleFromMigDeviceHandle", mig,
                    [&](const Call& c, const Target& t) -> nvmlReturn_t {
                      if (!t.mig || !device) return NVML_ERROR_INVALID_ARGUMENT;
                      *device = HandleFor(c.st, t.index, -1);
                      return NVML_SUCCESS;
                    });
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetGpuInstanceId(nvmlDevice_t device, unsigned int* id) {
  return DeviceCall("nvmlDeviceGetGpuInstanceId", device,
                    [&](const Call&, const Target& t) -> nvmlReturn_t {
                      if (!t.mig) return NVML_ERROR_INVALID_ARGUMENT;
                      return Put(t.mig->gpu_instance_id, id);
                    });
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetComputeInstanceId(nvmlDevice_t device, unsigned int* id) {
  return DeviceCall("nvmlDeviceGetComputeInstanceId", device,
                    [&](const Call&, const Target& t) -> nvmlReturn_t {
                      if (!t.mig) return NVML_ERROR_INVALID_ARGUMENT;
                      return Put(t.mig->compute_instance_id, id);
                    });
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetTopologyCommonAncestor(nvmlDevice_t first,
                                                             nvmlDevice_t second, int* level) {
  return DeviceCall(
      "nvmlDeviceGetTopologyCommonAncestor", first,
      [&](const Call& c, const Target& a) -> nvmlReturn_t {
        Target b;
        if (nvmlReturn_t r = Resolve(c, "nvmlDeviceGetTopologyCommonAncestor", second, &b);
            r != NVML_SUCCESS)
          return r;
        if (!level) return NVML_ERROR_INVALID_ARGUMENT;
        if (a.mig || b.mig) return NVML_ERROR_NOT_SUPPORTED;
        auto same = [](const auto& x, const auto& y) { return x && y && *x == *y; };
        const SimGpu& x = *a.gpu;
        const SimGpu& y = *b.gpu;
        if (a.index == b.index ||
            (same(x.board_id, y.board_id) && x.multi_gpu_board.value_or(false) &&
             y.multi_gpu_board.value_or(false)))
          *level = 0;
        else if (same(x.pcie_switch, y.pcie_switch))
          *level = 10;
        else if (same(x.host_bridge, y.host_bridge))
          *level = 30;
        else if (same(x.numa_node, y.numa_node))
          *level = 40;
        else
          *level = 50;
        return NVML_SUCCESS;
      });
}

namespace gpupin::sim {
namespace {

// The peer on `link`, or the code the NVLink calls answer.
nvmlReturn_t NvLinkPeer(const Target& t, unsigned link, const std::optional<std::string>** peer) {
  if (t.mig || !t.gpu->nvlinks) return NVML_ERROR_NOT_SUPPORTED;
  if (link >= t.gpu->nvlinks->size()) return NVML_ERROR_INVALID_ARGUMENT;
  *peer = &(*t.gpu->nvlinks)[link];
  return NVML_SUCCESS;
}

nvmlReturn_t GetNvLinkRemotePciInfo(const char* name, nvmlDevice_t device, unsigned link,
                                    nvmlPciInfo_t* pci) {
  return DeviceCall(name, device, [&](const Call& c, const Target& t) -> nvmlReturn_t {
    const std::optional<std::string>* peer = nullptr;
    if (nvmlReturn_t r = NvLinkPeer(t, link, &peer); r != NVML_SUCCESS) return r;
    if (!pci) return NVML_ERROR_INVALID_ARGUMENT;
    if (!*peer) return NVML_ERROR_NOT_SUPPORTED;
    SimPci remote = *ParsePciBusId(**peer);
    for (const auto& g : c.s.gpus) {
      if (g.pci && g.pci->bus_id == remote.bus_id) remote = *g.pci;
    }
    FillPci(remote, pci);
    pci->pciSubSystemId = 0;  // NVML leaves it unfilled
    return NVML_SUCCESS;
  });
}

}  // namespace
}  // namespace gpupin::sim

NVML_EXPORT nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t device, unsigned int link,
                                                  unsigned int* active) {
  return DeviceCall(
      "nvmlDeviceGetNvLinkState", device, [&](const Call&, const Target& t) -> nvmlReturn_t {
        const std::optional<std::string>* peer = nullptr;
        if (nvmlReturn_t r = NvLinkPeer(t, link, &peer); r != NVML_SUCCESS) return r;
        return Put(std::optional(peer->has_value() ? kNvmlFeatureEnabled : 0u), active);
      });
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo(nvmlDevice_t device, unsigned int link,
                                                          nvmlPciInfo_t* pci) {
  return GetNvLinkRemotePciInfo("nvmlDeviceGetNvLinkRemotePciInfo", device, link, pci);
}
NVML_EXPORT nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t device, unsigned int link,
                                                             nvmlPciInfo_t* pci) {
  return GetNvLinkRemotePciInfo("nvmlDeviceGetNvLinkRemotePciInfo_v2", device, link, pci);
}

// Process lists: v1 writes 16-byte entries, _v2 24, _v3 the scenario's
// process_stride (24, or 32 like some R535 drivers).
#define SIM_PROCESS_CALLS(Kind, kind)                                                             \
  NVML_EXPORT nvmlReturn_t nvmlDeviceGet##Kind##RunningProcesses(nvmlDevice_t d, unsigned int* n, \
                                                                 void* p) {                       \
    return GetProcesses("nvmlDeviceGet" #Kind "RunningProcesses", d, n, p,                        \
                        sizeof(nvmlProcessInfo_v1_t), kind);                                      \
  }                                                                                               \
  NVML_EXPORT nvmlReturn_t nvmlDeviceGet##Kind##RunningProcesses_v2(nvmlDevice_t d,               \
                                                                    unsigned int* n, void* p) {   \
    return GetProcesses("nvmlDeviceGet" #Kind "RunningProcesses_v2", d, n, p,                     \
                        sizeof(nvmlProcessInfo_v2_t), kind);                                      \
  }                                                                                               \
  NVML_EXPORT nvmlReturn_t nvmlDeviceGet##Kind##RunningProcesses_v3(nvmlDevice_t d,               \
                                                                    unsigned int* n, void* p) {   \
    return GetProcesses("nvmlDeviceGet" #Kind "RunningProcesses_v3", d, n, p, 0, kind);           \
  }

SIM_PROCESS_CALLS(Compute, ProcessKind::kCompute)
SIM_PROCESS_CALLS(Graphics, ProcessKind::kGraphics)
SIM_PROCESS_CALLS(MPSCompute, ProcessKind::kMps)
