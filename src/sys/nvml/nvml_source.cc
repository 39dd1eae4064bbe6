#include "sys/nvml/nvml_source.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/cpu_list.h"
#include "core/printable.h"
#include "sys/nvml/nvml_library.h"
#include "sys/nvml/nvml_processes.h"

namespace gpupin {
namespace {

// NVML_NVLINK_MAX_LINKS grew from 12 to 36 across headers, so links are
// asked until the library says there are no more; this only guards against
// one that never says so.
constexpr unsigned kMaxNvLinks = 64;
// nvmlDeviceGetCpuAffinity fills as many 64-CPU words as it is given; a
// simulated server may describe more CPUs than this machine has.
constexpr long kMinCpuAffinityWords = 16;

template <size_t N>
std::string FromBuffer(const char (&buffer)[N]) {
  // Names, ids and versions are printed in tables, errors and gres.conf
  // lines: whatever a driver (or a scenario file) put there, no control
  // character reaches a terminal.
  return Printable(std::string_view(buffer, strnlen(buffer, N)), N);
}

// domain:bus:device of a PCI address, from NVML's busId text when it parses
// (remote NVLink ends may be written with a 4- or 8-digit domain), else from
// the numeric fields.
struct PciAddress {
  unsigned domain = 0, bus = 0, device = 0;
  friend bool operator==(const PciAddress&, const PciAddress&) = default;
};

PciAddress AddressOf(const nvmlPciInfo_t& pci) {
  PciAddress address;
  const std::string bus_id = FromBuffer(pci.busId);
  if (std::sscanf(bus_id.c_str(), "%x:%x:%x.", &address.domain, &address.bus, &address.device) == 3)
    return address;
  return {pci.domain, pci.bus, pci.device};
}

std::optional<ComputeMode> ToComputeMode(int mode) {
  switch (mode) {
    case NVML_COMPUTEMODE_DEFAULT:
      return ComputeMode::kDefault;
    case NVML_COMPUTEMODE_EXCLUSIVE_THREAD:
      return ComputeMode::kExclusiveThread;
    case NVML_COMPUTEMODE_PROHIBITED:
      return ComputeMode::kProhibited;
    case NVML_COMPUTEMODE_EXCLUSIVE_PROCESS:
      return ComputeMode::kExclusiveProcess;
    default:
      return std::nullopt;
  }
}

std::optional<TopologyLevel> ToTopologyLevel(int level) {
  switch (level) {
    case 0:
    case 10:
    case 20:
    case 30:
    case 40:
    case 50:
      return static_cast<TopologyLevel>(level);
    default:
      return std::nullopt;
  }
}

struct MemoryFigures {
  std::optional<uint64_t> total, used, free, reserved;
};

// The queries of one device handle (a GPU or one of its MIG instances). A
// field the driver does not give stays nullopt; a query that shows the GPU
// is gone records why in `health_error`, after which the caller stops asking.
class DeviceQueries {
 public:
  DeviceQueries(const NvmlLibrary& library, nvmlDevice_t handle,
                std::optional<std::string>& health_error)
      : library_(library), fn_(library.fn()), handle_(handle), health_error_(health_error) {}

  bool healthy() const { return !health_error_.has_value(); }

  // For fields that may be unsupported: only a lost GPU or one that needs a
  // reset makes it unhealthy.
  bool Check(nvmlReturn_t code, const char* what) {
    if (code == NVML_SUCCESS) return true;
    if (code == NVML_ERROR_GPU_IS_LOST || code == NVML_ERROR_RESET_REQUIRED)
      MarkUnhealthy(code, what);
    return false;
  }

  // For what identifies the GPU: any failure makes it unhealthy.
  bool CheckIdentity(nvmlReturn_t code, const char* what) {
    if (code == NVML_SUCCESS) return true;
    MarkUnhealthy(code, what);
    return false;
  }

  void MarkUnhealthy(nvmlReturn_t code, const char* what) {
    if (health_error_) return;
    std::string message = std::string(what) + " failed (" + library_.Explain(code) + ")";
    if (code == NVML_ERROR_GPU_IS_LOST)
      message += "; it fell off the bus: check dmesg, then reset it (nvidia-smi -r) or reboot";
    if (code == NVML_ERROR_RESET_REQUIRED) message += "; reset it (nvidia-smi -r) or reboot";
    health_error_ = std::move(message);
  }

  // A name or UUID; `identity` says whether failing to read it makes the GPU
  // unhealthy (a GPU's own) or not (a MIG instance, which is then skipped).
  std::optional<std::string> String(nvmlDeviceGetString_fn fn, const char* what, bool identity) {
    char buffer[std::max(kNvmlNameBufferSize, kNvmlUuidBufferSize)] = {};
    const nvmlReturn_t code = fn(handle_, buffer, sizeof buffer);
    if (!(identity ? CheckIdentity(code, what) : Check(code, what))) return std::nullopt;
    return FromBuffer(buffer);
  }

  // Calls an optional function of this device while the GPU is healthy;
  // true when it answered.
  template <class F, class... Args>
  bool Query(F fn, const char* what, Args... args) {
    return fn && healthy() && Check(fn(handle_, args...), what);
  }

  std::optional<unsigned> Uint(nvmlDeviceGetUint_fn fn, const char* what) {
    unsigned value = 0;
    if (!Query(fn, what, &value)) return std::nullopt;
    return value;
  }

  std::optional<int> Int(nvmlDeviceGetInt_fn fn, const char* what) {
    int value = 0;
    if (!Query(fn, what, &value)) return std::nullopt;
    return value;
  }

  // nvmlDeviceGetMemoryInfo_v2 when the library has it (used then excludes
  // driver-reserved memory, reported apart); v1 when it lacks it or v2
  // fails on a GPU that is not lost: drivers that reject the struct version,
  // and some that answer v2 with an unknown error or NOT_SUPPORTED while v1
  // works (reported for driver 516 under WSL). NOT_SUPPORTED (integrated
  // GPUs) and NO_PERMISSION (MIG parents for unprivileged users) from the
  // last call tried leave the figures unknown.
  MemoryFigures Memory() {
    MemoryFigures figures;
    nvmlReturn_t code = NVML_ERROR_FUNCTION_NOT_FOUND;
    if (fn_.memory_info_v2) {
      nvmlMemory_v2_t memory{};
      memory.version = kNvmlMemoryV2Version;
      code = fn_.memory_info_v2(handle_, &memory);
      if (code == NVML_SUCCESS) return {memory.total, memory.used, memory.free, memory.reserved};
    }
    if (fn_.memory_info_v1 && code != NVML_ERROR_GPU_IS_LOST && code != NVML_ERROR_RESET_REQUIRED) {
      nvmlMemory_t memory{};
      code = fn_.memory_info_v1(handle_, &memory);
      if (code == NVML_SUCCESS) return {memory.total, memory.used, memory.free, std::nullopt};
    }
    if (code != NVML_ERROR_NOT_SUPPORTED && code != NVML_ERROR_NO_PERMISSION)
      MarkUnhealthy(code, "reading memory");
    return figures;
  }

  // Compute and graphics lists merged by pid; false when they could not be
  // read (no permission, not supported: "unknown", not "idle"). A graphics
  // list the card does not support (a compute-only card) holds nothing;
  // the compute list must answer, since jobs run there.
  bool Processes(std::vector<std::byte>& scratch, std::vector<GpuProcess>& processes) {
    if (!fn_.compute_processes.available()) return false;
    // By address: each list's symbols are a vector, not copied per card.
    for (auto [query, kind] : {std::pair{&fn_.compute_processes, ProcessKind::kCompute},
                               std::pair{&fn_.graphics_processes, ProcessKind::kGraphics}}) {
      if (!query->available()) continue;
      const nvmlReturn_t code = ReadProcessList(*query, handle_, kind, scratch, processes);
      if (kind == ProcessKind::kGraphics && code == NVML_ERROR_NOT_SUPPORTED) continue;
      if (!Check(code, "reading processes")) return false;
    }
    return true;
  }

 private:
  const NvmlLibrary& library_;
  const NvmlFunctions& fn_;
  nvmlDevice_t handle_;
  std::optional<std::string>& health_error_;
};

// What cannot change while the driver is loaded, read at most once per
// process: `ls --watch` and a waiting job re-read only what changes. Kept
// only while the GPU answers; one that fails is read afresh next time.
struct FixedFacts {
  nvmlDevice_t handle = nullptr;
  std::string uuid, pci_bus_id, name;
  std::optional<PciAddress> address;
  GpuFacts read = 0;  // which of the groups below have been read
  std::optional<ComputeCapability> compute_capability;
  std::optional<uint32_t> cores;
  std::optional<std::string> cpu_affinity;
  std::optional<int> numa_node;
  std::optional<uint32_t> minor_number;
  std::optional<uint32_t> board_id;
  std::optional<bool> multi_gpu_board;
  std::vector<std::string> nvlink_peer_bus_ids;
};

using TopologyMatrix = std::vector<std::vector<std::optional<TopologyLevel>>>;

// True when the cards are of more than one model by name: only then is
// CUDA's FASTEST_FIRST order something other than PCI order.
bool NamesDiffer(const std::vector<Gpu>& gpus) {
  const Gpu* first = nullptr;
  for (const Gpu& gpu : gpus) {
    if (!gpu.healthy() || gpu.name.empty()) continue;
    if (first && first->name != gpu.name) return true;
    if (!first) first = &gpu;
  }
  return false;
}

class NvmlSource final : public GpuSource {
 public:
  NvmlSource(std::unique_ptr<NvmlLibrary> library, bool simulated)
      : library_(std::move(library)),
        fn_(library_->fn()),
        simulated_(simulated),
        cpu_affinity_words_(
            std::max(kMinCpuAffinityWords, (sysconf(_SC_NPROCESSORS_CONF) + 63) / 64)) {}

  Result<Inventory> Snapshot(GpuFacts wanted) override {
    namespace f = gpu_facts;
    // In MIG mode processes are read per instance.
    if (wanted & f::kProcesses) wanted |= f::kMig;
    Inventory inventory;
    inventory.simulated = simulated_;
    ReadVersions();
    inventory.driver_version = driver_version_;
    inventory.nvml_version = nvml_version_;
    inventory.cuda_driver_version = cuda_driver_version_;

    unsigned count = 0;
    if (nvmlReturn_t code = fn_.device_count(&count); code != NVML_SUCCESS) {
      return MakeError(ExitCode::kNvmlUnavailable,
                       "cannot count the GPUs (" + library_->Explain(code) + "); try nvidia-smi.");
    }
    if (count != fixed_.size()) {
      fixed_.assign(count, std::nullopt);
      topology_.reset();
    }
    inventory.gpus.resize(count);
    for (unsigned i = 0; i < count; ++i) ReadGpu(i, wanted, inventory.gpus[i]);
    if ((wanted & f::kCudaOrder) ||
        ((wanted & f::kCudaOrderIfMixed) && NamesDiffer(inventory.gpus))) {
      wanted |= f::kCudaOrder;
      for (Gpu& gpu : inventory.gpus) ReadCudaOrder(gpu);
    }
    if (wanted & f::kNvLinks) ReadNvLinks(inventory.gpus);
    if (wanted & f::kTopology) inventory.topology = Topology(inventory.gpus);
    // What pairs GPUs is kept only while every GPU answers: a pair with one
    // that does not is unknown until it does.
    for (const Gpu& gpu : inventory.gpus) {
      if (gpu.healthy()) continue;
      fixed_[gpu.index].reset();
      topology_.reset();
      for (std::optional<FixedFacts>& fixed : fixed_) {
        if (fixed) fixed->read &= ~f::kNvLinks;
      }
    }
    last_read_ = wanted & ~f::kCudaOrderIfMixed;
    return inventory;
  }

  GpuFacts LastRead() const override { return last_read_; }

 private:
  std::optional<std::string> SystemString(nvmlSystemGetString_fn fn) const {
    char buffer[kNvmlVersionBufferSize] = {};
    if (!fn || fn(buffer, sizeof buffer) != NVML_SUCCESS) return std::nullopt;
    return FromBuffer(buffer);
  }

  // The versions cannot change while the library is loaded.
  void ReadVersions() {
    if (versions_read_) return;
    versions_read_ = true;
    driver_version_ = SystemString(fn_.driver_version);
    nvml_version_ = SystemString(fn_.nvml_version);
    for (nvmlSystemGetCudaDriverVersion_fn fn :
         {fn_.cuda_driver_version, fn_.cuda_driver_version_v1}) {
      if (int version = 0; fn && fn(&version) == NVML_SUCCESS) {
        cuda_driver_version_ = version;
        break;
      }
    }
  }

  // The handle of a GPU that answered its identity queries (null for the
  // others).
  nvmlDevice_t HandleOf(const Gpu& gpu) const {
    return gpu.healthy() && fixed_[gpu.index] ? fixed_[gpu.index]->handle : nullptr;
  }

  void ReadGpu(unsigned index, GpuFacts wanted, Gpu& gpu) {
    gpu.index = index;
    if (!fixed_[index]) ReadIdentity(index, gpu);
    if (!fixed_[index]) {
      gpu.processes_known = false;
      return;
    }
    FixedFacts& fixed = *fixed_[index];
    gpu.uuid = fixed.uuid;
    gpu.pci_bus_id = fixed.pci_bus_id;
    gpu.name = fixed.name;
    DeviceQueries q(*library_, fixed.handle, gpu.health_error);
    ReadMetrics(q, wanted, gpu);
    if ((wanted & gpu_facts::kAffinity) && q.healthy()) ReadAffinity(q, fixed);
    if ((wanted & gpu_facts::kNumaNode) && q.healthy()) ReadNumaNode(q, fixed);
    if ((wanted & gpu_facts::kMinorNumber) && q.healthy()) ReadMinorNumber(q, fixed);
    if ((wanted & gpu_facts::kBoard) && q.healthy()) ReadBoard(q, fixed);
    gpu.cpu_affinity = fixed.cpu_affinity;
    gpu.numa_node = fixed.numa_node;
    gpu.minor_number = fixed.minor_number;
    gpu.board_id = fixed.board_id;
    gpu.multi_gpu_board = fixed.multi_gpu_board;
    // A lost GPU's lists cannot be read: unknown, not idle.
    if (!q.healthy()) gpu.processes_known = false;
  }

  // The identity queries are each tried even after one fails, so that a
  // lost GPU is reported with whatever is still known about it; only a GPU
  // that answered them all is remembered.
  void ReadIdentity(unsigned index, Gpu& gpu) {
    nvmlDevice_t handle = nullptr;
    if (nvmlReturn_t code = fn_.handle_by_index(index, &handle); code != NVML_SUCCESS) {
      DeviceQueries(*library_, nullptr, gpu.health_error).MarkUnhealthy(code, "getting its handle");
      return;
    }
    DeviceQueries q(*library_, handle, gpu.health_error);
    FixedFacts fixed;
    fixed.handle = handle;
    fixed.uuid = q.String(fn_.uuid, "reading its UUID", true).value_or("");
    if (nvmlPciInfo_t pci{}; q.CheckIdentity(fn_.pci_info(handle, &pci), "reading its PCI info")) {
      fixed.pci_bus_id = FromBuffer(pci.busId);
      fixed.address = AddressOf(pci);
    }
    fixed.name = q.String(fn_.name, "reading its name", true).value_or("");
    gpu.uuid = fixed.uuid;
    gpu.pci_bus_id = fixed.pci_bus_id;
    gpu.name = fixed.name;
    if (q.healthy()) fixed_[index] = std::move(fixed);
  }

  void ReadMetrics(DeviceQueries& q, GpuFacts wanted, Gpu& gpu) {
    namespace f = gpu_facts;
    if (wanted & f::kMemory) {
      const MemoryFigures memory = q.Memory();
      gpu.memory_total_bytes = memory.total;
      gpu.memory_used_bytes = memory.used;
      gpu.memory_free_bytes = memory.free;
      gpu.memory_reserved_bytes = memory.reserved;
    }
    if (nvmlUtilization_t rates{};
        (wanted & f::kUtilization) && q.Query(fn_.utilization, "reading utilization", &rates)) {
      gpu.utilization_gpu_percent = rates.gpu;
      gpu.utilization_memory_percent = rates.memory;
    }
    if (wanted & f::kSensors) {
      if (unsigned celsius = 0;
          q.Query(fn_.temperature, "reading temperature", kNvmlTemperatureGpu, &celsius)) {
        gpu.temperature_c = celsius;
      }
      gpu.power_draw_mw = q.Uint(fn_.power_usage, "reading power draw");
      gpu.power_limit_mw = q.Uint(fn_.power_limit, "reading the power limit");
    }
    if (wanted & f::kComputeMode) {
      if (auto mode = q.Int(fn_.compute_mode, "reading the compute mode"))
        gpu.compute_mode = ToComputeMode(*mode);
    }
    if (wanted & f::kPersistenceMode) {
      if (auto mode = q.Int(fn_.persistence_mode, "reading the persistence mode")) {
        gpu.persistence_mode = *mode == static_cast<int>(kNvmlFeatureEnabled);
      }
    }
    if (unsigned current = 0, pending = 0;
        (wanted & f::kMig) && q.Query(fn_.mig_mode, "reading the MIG mode", &current, &pending)) {
      gpu.mig_enabled = current == kNvmlMigEnable;
    }
    // In MIG mode the parent's lists need privileges and give aggregates
    // only (facts §5.7), so processes are read per instance.
    if ((wanted & f::kMig) && gpu.mig_enabled == true && fn_.max_mig_device_count &&
        fn_.mig_device_handle) {
      ReadMigDevices(q, wanted, gpu);
    } else if ((wanted & f::kProcesses) && q.healthy()) {
      gpu.processes_known = q.Processes(scratch_, gpu.processes);
    }
  }

  void ReadCudaOrder(Gpu& gpu) {
    nvmlDevice_t handle = HandleOf(gpu);
    if (!handle) return;
    FixedFacts& fixed = *fixed_[gpu.index];
    if (!(fixed.read & gpu_facts::kCudaOrder)) {
      DeviceQueries q(*library_, handle, gpu.health_error);
      if (ComputeCapability cc;
          q.Query(fn_.compute_capability, "reading the compute capability", &cc.major, &cc.minor)) {
        fixed.compute_capability = cc;
      }
      fixed.cores = q.Uint(fn_.num_cores, "reading the core count");
      if (q.healthy()) fixed.read |= gpu_facts::kCudaOrder;
    }
    gpu.compute_capability = fixed.compute_capability;
    gpu.cores = fixed.cores;
  }

  void ReadAffinity(DeviceQueries& q, FixedFacts& fixed) {
    if (fixed.read & gpu_facts::kAffinity) return;
    affinity_mask_.assign(static_cast<size_t>(cpu_affinity_words_), 0);
    if (q.Query(fn_.cpu_affinity, "reading the CPU affinity",
                static_cast<unsigned>(affinity_mask_.size()), affinity_mask_.data())) {
      if (std::string cpus = FormatCpuList(affinity_mask_); !cpus.empty())
        fixed.cpu_affinity = std::move(cpus);
    }
    if (q.healthy()) fixed.read |= gpu_facts::kAffinity;
  }

  void ReadNumaNode(DeviceQueries& q, FixedFacts& fixed) {
    if (fixed.read & gpu_facts::kNumaNode) return;
    if (auto node = q.Uint(fn_.numa_node, "reading the NUMA node"))
      fixed.numa_node = static_cast<int>(*node);
    if (q.healthy()) fixed.read |= gpu_facts::kNumaNode;
  }

  void ReadMinorNumber(DeviceQueries& q, FixedFacts& fixed) {
    if (fixed.read & gpu_facts::kMinorNumber) return;
    fixed.minor_number = q.Uint(fn_.minor_number, "reading the minor number");
    if (q.healthy()) fixed.read |= gpu_facts::kMinorNumber;
  }

  void ReadBoard(DeviceQueries& q, FixedFacts& fixed) {
    if (fixed.read & gpu_facts::kBoard) return;
    fixed.board_id = q.Uint(fn_.board_id, "reading the board id");
    if (auto multi = q.Uint(fn_.multi_gpu_board, "reading the multi-GPU board flag"))
      fixed.multi_gpu_board = *multi != 0;
    if (q.healthy()) fixed.read |= gpu_facts::kBoard;
  }

  // The recipe of facts §5.8: every slot up to the maximum, empty ones
  // (NOT_FOUND) skipped.
  void ReadMigDevices(DeviceQueries& q, GpuFacts wanted, Gpu& gpu) {
    const bool processes = (wanted & gpu_facts::kProcesses) != 0;
    const std::optional<unsigned> slots =
        q.Uint(fn_.max_mig_device_count, "reading the MIG device count");
    if (!slots) gpu.processes_known = false;
    for (unsigned slot = 0; slot < slots.value_or(0) && q.healthy(); ++slot) {
      nvmlDevice_t mig_handle = nullptr;
      if (!q.Query(fn_.mig_device_handle, "getting a MIG device handle", slot, &mig_handle))
        continue;
      // An instance that is lost means its GPU is: they share the health.
      DeviceQueries mq(*library_, mig_handle, gpu.health_error);
      // An instance without a UUID cannot be named in CUDA_VISIBLE_DEVICES.
      std::optional<std::string> uuid = mq.String(fn_.uuid, "reading a MIG UUID", false);
      if (!uuid) continue;
      MigDevice mig;
      mig.index = slot;
      mig.uuid = std::move(*uuid);
      mig.name = mq.String(fn_.name, "reading a MIG name", false).value_or("");
      mig.gpu_instance_id = mq.Uint(fn_.gpu_instance_id, "reading the GPU instance id");
      mig.compute_instance_id = mq.Uint(fn_.compute_instance_id, "reading the compute instance id");
      const MemoryFigures memory = mq.Memory();
      mig.memory_total_bytes = memory.total;
      mig.memory_used_bytes = memory.used;
      mig.memory_free_bytes = memory.free;
      if (processes) {
        if (!mq.Processes(scratch_, mig.processes)) gpu.processes_known = false;
        for (GpuProcess& process : mig.processes) {
          if (!process.gpu_instance_id) process.gpu_instance_id = mig.gpu_instance_id;
          if (!process.compute_instance_id) process.compute_instance_id = mig.compute_instance_id;
        }
        gpu.processes.insert(gpu.processes.end(), mig.processes.begin(), mig.processes.end());
      }
      gpu.mig_devices.push_back(std::move(mig));
    }
  }

  // Peers are matched by the remote end's PCI address; a link to something
  // that is not one of our GPUs (an NVSwitch) names no peer.
  void ReadNvLinks(std::vector<Gpu>& gpus) {
    if (!fn_.nvlink_state || !fn_.nvlink_remote_pci_info) return;
    for (Gpu& gpu : gpus) {
      nvmlDevice_t handle = HandleOf(gpu);
      if (!handle) continue;
      FixedFacts& fixed = *fixed_[gpu.index];
      if (!(fixed.read & gpu_facts::kNvLinks)) {
        fixed.nvlink_peer_bus_ids = NvLinkPeers(handle, gpu.index, gpus);
        fixed.read |= gpu_facts::kNvLinks;
      }
      gpu.nvlink_peer_bus_ids = fixed.nvlink_peer_bus_ids;
    }
  }

  std::vector<std::string> NvLinkPeers(nvmlDevice_t handle, uint32_t self,
                                       const std::vector<Gpu>& gpus) const {
    std::vector<std::string> peers;
    for (unsigned link = 0; link < kMaxNvLinks; ++link) {
      unsigned active = 0;
      const nvmlReturn_t code = fn_.nvlink_state(handle, link, &active);
      if (code == NVML_ERROR_INVALID_ARGUMENT || code == NVML_ERROR_NOT_SUPPORTED) break;
      nvmlPciInfo_t remote{};
      if (code != NVML_SUCCESS || active != kNvmlFeatureEnabled ||
          fn_.nvlink_remote_pci_info(handle, link, &remote) != NVML_SUCCESS) {
        continue;
      }
      const PciAddress address = AddressOf(remote);
      for (const Gpu& peer : gpus) {
        if (peer.index != self && HandleOf(peer) && fixed_[peer.index]->address == address &&
            std::find(peers.begin(), peers.end(), peer.pci_bus_id) == peers.end()) {
          peers.push_back(peer.pci_bus_id);
        }
      }
    }
    return peers;
  }

  // Read once while every GPU keeps answering: a pair with a GPU that does
  // not is unknown, and the matrix is read again once it answers.
  TopologyMatrix Topology(const std::vector<Gpu>& gpus) {
    if (!topology_) topology_ = ReadTopology(gpus);
    return *topology_;
  }

  TopologyMatrix ReadTopology(const std::vector<Gpu>& gpus) const {
    TopologyMatrix topology;
    if (!fn_.topology_common_ancestor || gpus.size() < 2) return topology;
    topology.assign(gpus.size(), std::vector<std::optional<TopologyLevel>>(gpus.size()));
    bool known = false;
    for (size_t i = 0; i < gpus.size(); ++i) {
      for (size_t j = i + 1; j < gpus.size() && HandleOf(gpus[i]); ++j) {
        int level = 0;
        if (!HandleOf(gpus[j]) || fn_.topology_common_ancestor(HandleOf(gpus[i]), HandleOf(gpus[j]),
                                                               &level) != NVML_SUCCESS)
          continue;
        topology[i][j] = topology[j][i] = ToTopologyLevel(level);
        known = known || topology[i][j].has_value();
      }
    }
    if (!known) topology.clear();
    return topology;
  }

  std::unique_ptr<NvmlLibrary> library_;
  const NvmlFunctions& fn_;
  bool simulated_;
  long cpu_affinity_words_;
  GpuFacts last_read_ = 0;
  bool versions_read_ = false;
  std::optional<std::string> driver_version_;
  std::optional<std::string> nvml_version_;
  std::optional<int> cuda_driver_version_;
  // By NVML index; dropped when the number of GPUs changes.
  std::vector<std::optional<FixedFacts>> fixed_;
  std::optional<TopologyMatrix> topology_;
  // Kept to reuse their allocations.
  std::vector<std::byte> scratch_;
  std::vector<unsigned long> affinity_mask_;
};

}  // namespace

std::vector<std::string> NvmlLibraryCandidates(const NvmlOptions& options,
                                               const char* env_library) {
  if (options.library_path) return {*options.library_path};
  if (env_library && *env_library) return {env_library};
  return {"libnvidia-ml.so.1", "libnvidia-ml.so"};
}

Result<std::unique_ptr<GpuSource>> OpenNvml(const NvmlOptions& options) {
  Result<std::unique_ptr<NvmlLibrary>> library =
      NvmlLibrary::Open(NvmlLibraryCandidates(options, std::getenv(kNvmlLibraryVariable)));
  if (!library) return library.error();
  return std::unique_ptr<GpuSource>(
      std::make_unique<NvmlSource>(std::move(*library), options.simulated));
}

}  // namespace gpupin
