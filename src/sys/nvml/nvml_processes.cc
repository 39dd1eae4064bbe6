#include "sys/nvml/nvml_processes.h"

#include <algorithm>
#include <cstring>

namespace gpupin {
namespace {

// How many times a list that grows between the size query and the read is
// asked again before giving up; each retry allocates for the new count with
// slack, so more than a couple means a process storm.
constexpr int kMaxReadAttempts = 8;
// More than this many processes on one GPU is a broken count, not a workload;
// believing it would mean a huge allocation.
constexpr unsigned kMaxProcesses = 1u << 16;
constexpr std::byte kSentinel{0xA5};
constexpr size_t kNarrowV3Stride = sizeof(nvmlProcessInfo_v2_t);
constexpr size_t kWideV3Stride = sizeof(nvmlProcessInfo_v3_wide_t);

size_t LargestStride(int version) {
  switch (version) {
    case 1:
      return sizeof(nvmlProcessInfo_v1_t);
    case 2:
      return sizeof(nvmlProcessInfo_v2_t);
    default:
      return kWideV3Stride;
  }
}

// The _v3 entry size the library really used: the buffer was filled with a
// sentinel, so a wide (32-byte) writer leaves bytes past count x 24 changed
// (for one entry, its trailing usedGpuCcProtectedMemory). The header's word
// is not trusted: it says 24 for drivers that write 32.
size_t DetectV3Stride(const std::vector<std::byte>& buffer, unsigned count) {
  const auto narrow_end = buffer.begin() + static_cast<std::ptrdiff_t>(count * kNarrowV3Stride);
  const auto wide_end = buffer.begin() + static_cast<std::ptrdiff_t>(count * kWideV3Stride);
  const bool wrote_past_narrow =
      std::any_of(narrow_end, wide_end, [](std::byte b) { return b != kSentinel; });
  return wrote_past_narrow ? kWideV3Stride : kNarrowV3Stride;
}

template <class T>
T Field(const std::byte* entry, size_t offset) {
  T value;
  std::memcpy(&value, entry + offset, sizeof value);
  return value;
}

std::optional<uint32_t> InstanceId(uint32_t id) {
  return id == kNvmlInstanceIdNone ? std::nullopt : std::optional<uint32_t>(id);
}

void Merge(const GpuProcess& entry, ProcessKind kind, std::vector<GpuProcess>& processes) {
  auto merged = std::find_if(processes.begin(), processes.end(),
                             [&](const GpuProcess& p) { return p.pid == entry.pid; });
  if (merged == processes.end()) {
    merged = processes.insert(processes.end(), entry);
  } else if (entry.used_memory_bytes) {
    merged->used_memory_bytes =
        std::max(merged->used_memory_bytes.value_or(0), *entry.used_memory_bytes);
  }
  (kind == ProcessKind::kCompute ? merged->compute : merged->graphics) = true;
}

void Decode(const std::vector<std::byte>& buffer, unsigned count, int version, ProcessKind kind,
            std::vector<GpuProcess>& processes) {
  const size_t stride = version == 3 ? DetectV3Stride(buffer, count) : LargestStride(version);
  for (unsigned i = 0; i < count; ++i) {
    const std::byte* entry = buffer.data() + i * stride;
    GpuProcess process;
    process.pid = Field<uint32_t>(entry, offsetof(nvmlProcessInfo_v1_t, pid));
    const auto used =
        Field<unsigned long long>(entry, offsetof(nvmlProcessInfo_v1_t, usedGpuMemory));
    if (used != kNvmlValueNotAvailable) process.used_memory_bytes = used;
    if (version >= 2) {
      process.gpu_instance_id =
          InstanceId(Field<uint32_t>(entry, offsetof(nvmlProcessInfo_v2_t, gpuInstanceId)));
      process.compute_instance_id =
          InstanceId(Field<uint32_t>(entry, offsetof(nvmlProcessInfo_v2_t, computeInstanceId)));
    }
    Merge(process, kind, processes);
  }
}

nvmlReturn_t ReadWith(const NvmlProcessSymbol& query, nvmlDevice_t device, ProcessKind kind,
                      std::vector<std::byte>& scratch, std::vector<GpuProcess>& processes) {
  unsigned needed = 0;
  nvmlReturn_t code = query.fn(device, &needed, nullptr);
  if (code == NVML_SUCCESS && needed == 0) return NVML_SUCCESS;
  if (code != NVML_SUCCESS && code != NVML_ERROR_INSUFFICIENT_SIZE) return code;

  const size_t entry_bytes = LargestStride(query.version);
  for (int attempt = 0; attempt < kMaxReadAttempts && needed <= kMaxProcesses; ++attempt) {
    // Slack as nvitop does (2n + 5): processes may start between the calls.
    const unsigned capacity = needed * 2 + 5;
    scratch.assign(size_t{capacity} * entry_bytes, kSentinel);
    unsigned count = capacity;
    code = query.fn(device, &count, scratch.data());
    if (code == NVML_ERROR_INSUFFICIENT_SIZE) {
      needed = std::max(count, capacity);
      continue;
    }
    if (code != NVML_SUCCESS) return code;
    Decode(scratch, std::min(count, capacity), query.version, kind, processes);
    return NVML_SUCCESS;
  }
  return NVML_ERROR_INSUFFICIENT_SIZE;
}

}  // namespace

nvmlReturn_t ReadProcessList(const NvmlProcessQuery& query, nvmlDevice_t device, ProcessKind kind,
                             std::vector<std::byte>& scratch, std::vector<GpuProcess>& processes) {
  nvmlReturn_t code = NVML_ERROR_FUNCTION_NOT_FOUND;
  for (const NvmlProcessSymbol& symbol : query.symbols) {
    code = ReadWith(symbol, device, kind, scratch, processes);
    // Only a symbol the driver does not implement, or whose entry version
    // it refuses, is worth an older one; NOT_SUPPORTED, NO_PERMISSION or a
    // lost GPU would answer the same to every version.
    if (code != NVML_ERROR_FUNCTION_NOT_FOUND && code != NVML_ERROR_ARGUMENT_VERSION_MISMATCH)
      return code;
  }
  return code;
}

}  // namespace gpupin
