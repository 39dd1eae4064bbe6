// Our own declarations of the part of NVML's C ABI that gpupin uses. No
// NVIDIA header is available on our build machines, so layouts are written
// from the documented ABI (doc/nvidia-facts.md, "NVML ABI", measured
// against nvml.h 13.3 on x86-64 LP64) and pinned by the static_asserts below.
// Both the loader (sys/nvml) and the simulated library (sim/) use this file:
// a layout mistake here would be shared, which is why the offsets are asserted
// against the published numbers rather than against each other.
#pragma once

#include <cstddef>
#include <cstdint>

extern "C" {

using nvmlReturn_t = int;
struct nvmlDevice_st;
using nvmlDevice_t = nvmlDevice_st*;

enum : nvmlReturn_t {
  NVML_SUCCESS = 0,
  NVML_ERROR_UNINITIALIZED = 1,
  NVML_ERROR_INVALID_ARGUMENT = 2,
  NVML_ERROR_NOT_SUPPORTED = 3,
  NVML_ERROR_NO_PERMISSION = 4,
  NVML_ERROR_ALREADY_INITIALIZED = 5,
  NVML_ERROR_NOT_FOUND = 6,
  NVML_ERROR_INSUFFICIENT_SIZE = 7,
  NVML_ERROR_INSUFFICIENT_POWER = 8,
  NVML_ERROR_DRIVER_NOT_LOADED = 9,
  NVML_ERROR_TIMEOUT = 10,
  NVML_ERROR_IRQ_ISSUE = 11,
  NVML_ERROR_LIBRARY_NOT_FOUND = 12,
  NVML_ERROR_FUNCTION_NOT_FOUND = 13,
  NVML_ERROR_CORRUPTED_INFOROM = 14,
  NVML_ERROR_GPU_IS_LOST = 15,
  NVML_ERROR_RESET_REQUIRED = 16,
  NVML_ERROR_OPERATING_SYSTEM = 17,
  NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18,
  NVML_ERROR_IN_USE = 19,
  NVML_ERROR_MEMORY = 20,
  NVML_ERROR_NO_DATA = 21,
  NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25,
  NVML_ERROR_UNKNOWN = 999,
};

constexpr unsigned kNvmlPciBusIdBufferSize = 32;
constexpr unsigned kNvmlPciBusIdLegacyBufferSize = 16;
constexpr unsigned kNvmlUuidBufferSize = 96;
constexpr unsigned kNvmlNameBufferSize = 96;
constexpr unsigned kNvmlVersionBufferSize = 80;
constexpr unsigned long long kNvmlValueNotAvailable = ~0ULL;
constexpr unsigned kNvmlTemperatureGpu = 0;
constexpr unsigned kNvmlMigEnable = 1;
constexpr unsigned kNvmlFeatureEnabled = 1;
// gpuInstanceId / computeInstanceId of a process on a GPU that is not in MIG mode.
constexpr unsigned kNvmlInstanceIdNone = 0xFFFFFFFFu;

// nvmlComputeMode_t.
enum : int {
  NVML_COMPUTEMODE_DEFAULT = 0,
  NVML_COMPUTEMODE_EXCLUSIVE_THREAD = 1,
  NVML_COMPUTEMODE_PROHIBITED = 2,
  NVML_COMPUTEMODE_EXCLUSIVE_PROCESS = 3,
};

struct nvmlPciInfo_t {
  char busIdLegacy[kNvmlPciBusIdLegacyBufferSize];
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pciDeviceId;
  unsigned int pciSubSystemId;
  char busId[kNvmlPciBusIdBufferSize];
};

struct nvmlMemory_t {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;  // reserved + allocated
};

struct nvmlMemory_v2_t {
  unsigned int version;
  unsigned long long total;
  unsigned long long reserved;
  unsigned long long free;
  unsigned long long used;  // allocated; excludes driver-reserved memory (R510+)
};
constexpr unsigned int kNvmlMemoryV2Version = sizeof(nvmlMemory_v2_t) | (2u << 24);

struct nvmlUtilization_t {
  unsigned int gpu;
  unsigned int memory;
};

struct nvmlProcessInfo_v1_t {
  unsigned int pid;
  unsigned long long usedGpuMemory;
};

// The layout of the _v2 and _v3 process calls in every public header.
struct nvmlProcessInfo_v2_t {
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
};

// What some R535 drivers write from the _v3 calls without a version bump
// (facts §5.5): the v2 layout plus one field, so a 32-byte stride.
struct nvmlProcessInfo_v3_wide_t {
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
  unsigned long long usedGpuCcProtectedMemory;
};

static_assert(sizeof(nvmlPciInfo_t) == 68 && offsetof(nvmlPciInfo_t, busId) == 36);
static_assert(offsetof(nvmlPciInfo_t, pciDeviceId) == 28);
static_assert(sizeof(nvmlMemory_t) == 24 && offsetof(nvmlMemory_t, used) == 16);
static_assert(sizeof(nvmlMemory_v2_t) == 40 && offsetof(nvmlMemory_v2_t, reserved) == 16 &&
              offsetof(nvmlMemory_v2_t, used) == 32);
static_assert(kNvmlMemoryV2Version == 0x02000028);
static_assert(sizeof(nvmlUtilization_t) == 8);
static_assert(sizeof(nvmlProcessInfo_v1_t) == 16 &&
              offsetof(nvmlProcessInfo_v1_t, usedGpuMemory) == 8);
static_assert(sizeof(nvmlProcessInfo_v2_t) == 24 &&
              offsetof(nvmlProcessInfo_v2_t, gpuInstanceId) == 16 &&
              offsetof(nvmlProcessInfo_v2_t, computeInstanceId) == 20);
static_assert(sizeof(nvmlProcessInfo_v3_wide_t) == 32);

// Function types, one per symbol we resolve. Versioned and unversioned
// symbols of one function share a type unless their struct differs.
using nvmlInit_fn = nvmlReturn_t (*)();
using nvmlShutdown_fn = nvmlReturn_t (*)();
using nvmlErrorString_fn = const char* (*)(nvmlReturn_t);
using nvmlSystemGetString_fn = nvmlReturn_t (*)(char*, unsigned int);  // driver / NVML version
using nvmlSystemGetCudaDriverVersion_fn = nvmlReturn_t (*)(int*);
using nvmlDeviceGetCount_fn = nvmlReturn_t (*)(unsigned int*);
using nvmlDeviceGetHandleByIndex_fn = nvmlReturn_t (*)(unsigned int, nvmlDevice_t*);
using nvmlDeviceGetString_fn = nvmlReturn_t (*)(nvmlDevice_t, char*, unsigned int);  // name, UUID
using nvmlDeviceGetPciInfo_fn = nvmlReturn_t (*)(nvmlDevice_t, nvmlPciInfo_t*);
using nvmlDeviceGetMemoryInfo_fn = nvmlReturn_t (*)(nvmlDevice_t, nvmlMemory_t*);
using nvmlDeviceGetMemoryInfo_v2_fn = nvmlReturn_t (*)(nvmlDevice_t, nvmlMemory_v2_t*);
using nvmlDeviceGetUtilizationRates_fn = nvmlReturn_t (*)(nvmlDevice_t, nvmlUtilization_t*);
using nvmlDeviceGetTemperature_fn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int, unsigned int*);
// power, minor number, board id, core count, ...
using nvmlDeviceGetUint_fn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int*);
using nvmlDeviceGetInt_fn = nvmlReturn_t (*)(nvmlDevice_t, int*);  // compute mode, NUMA node, ...
using nvmlDeviceGetCudaComputeCapability_fn = nvmlReturn_t (*)(nvmlDevice_t, int*, int*);
using nvmlDeviceGetMigMode_fn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int*, unsigned int*);
using nvmlDeviceGetMigDeviceHandleByIndex_fn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int,
                                                                nvmlDevice_t*);
using nvmlDeviceGetCpuAffinity_fn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int, unsigned long*);
using nvmlDeviceGetTopologyCommonAncestor_fn = nvmlReturn_t (*)(nvmlDevice_t, nvmlDevice_t, int*);
using nvmlDeviceGetNvLinkState_fn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int, unsigned int*);
using nvmlDeviceGetNvLinkRemotePciInfo_fn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int,
                                                             nvmlPciInfo_t*);
using nvmlInitWithFlags_fn = nvmlReturn_t (*)(unsigned int);
using nvmlDeviceGetHandleByString_fn = nvmlReturn_t (*)(const char*,
                                                        nvmlDevice_t*);  // by UUID, by PCI bus id
using nvmlDeviceGetDeviceHandleFromMigDeviceHandle_fn = nvmlReturn_t (*)(nvmlDevice_t,
                                                                         nvmlDevice_t*);
// Process lists: the entry type depends on the symbol's version (v1: 16
// bytes, _v2: 24, _v3: 24 or 32), so the buffer is untyped here.
using nvmlDeviceGetProcesses_fn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int*, void*);

}  // extern "C"
