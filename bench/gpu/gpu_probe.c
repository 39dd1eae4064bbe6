/* A small independent witness for bench/gpu/check.sh: it reads the NVIDIA
 * driver directly (dlopen of libnvidia-ml.so.1 and libcuda.so.1, with its own
 * declarations, no CUDA toolkit needed), so that gpupin's answers can be
 * compared with the driver's own.
 *
 *   gpu_probe nvml              one "gpu ..." line per device and one
 *                               "proc ..." line per compute process
 *                               (GPUPIN_NVML_LIBRARY names another library)
 *   gpu_probe hold MIB SECONDS  a CUDA process: context on device 0 of its
 *                               CUDA_VISIBLE_DEVICES, MIB MiB allocated,
 *                               prints "ready ..." and sleeps SECONDS
 *
 * Output is key=value words, one record per line. Exit 77: the driver
 * library cannot be loaded (nothing to check); 1: a driver call failed.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { kExitNoDriver = 77 };

/* ---- NVML (facts §5.5, §5.7) ---- */
typedef int nvmlReturn_t;
typedef void* nvmlDevice_t;
enum { NVML_SUCCESS = 0, NVML_ERROR_INSUFFICIENT_SIZE = 7 };

typedef struct {
  unsigned long long total, free, used;
} nvmlMemory_t;

typedef struct {
  unsigned int version;
  unsigned long long total, reserved, free, used;
} nvmlMemory_v2_t;

#define NVML_MEMORY_V2_VERSION ((unsigned int)(sizeof(nvmlMemory_v2_t) | (2u << 24)))

static void* need(void* library, const char* name) {
  void* symbol = dlsym(library, name);
  if (symbol == NULL) {
    fprintf(stderr, "gpu_probe: the driver library lacks %s\n", name);
    exit(1);
  }
  return symbol;
}

/* The stride the driver really writes for *_v3 process entries: the buffer
 * is filled with a sentinel and the written span measured (24 bytes as in the
 * headers, or 32 as some R535 drivers write). */
static void probe_processes(void* nvml, nvmlDevice_t device, unsigned index) {
  typedef nvmlReturn_t (*procs_fn)(nvmlDevice_t, unsigned int*, void*);
  procs_fn procs = (procs_fn)dlsym(nvml, "nvmlDeviceGetComputeRunningProcesses_v3");
  if (procs == NULL) {
    printf("v3 index=%u stride=absent\n", index);
    return;
  }
  unsigned int count = 0;
  nvmlReturn_t rc = procs(device, &count, NULL);
  if (rc != NVML_SUCCESS && rc != NVML_ERROR_INSUFFICIENT_SIZE) {
    printf("v3 index=%u stride=unknown rc=%d\n", index, rc);
    return;
  }
  unsigned int capacity = count + 8; /* processes may start in between */
  size_t bytes = (size_t)capacity * 32;
  unsigned char* buffer = malloc(bytes);
  if (buffer == NULL) exit(1);
  memset(buffer, 0xA5, bytes);
  count = capacity;
  rc = procs(device, &count, buffer);
  if (rc != NVML_SUCCESS) {
    printf("v3 index=%u stride=unknown rc=%d\n", index, rc);
    free(buffer);
    return;
  }
  size_t written = bytes;
  while (written > 0 && buffer[written - 1] == 0xA5) --written;
  unsigned stride = count == 0 ? 0 : (written > (size_t)count * 24 ? 32 : 24);
  printf("v3 index=%u stride=%u count=%u\n", index, stride, count);
  for (unsigned i = 0; i < count && stride != 0; ++i) {
    uint32_t pid;
    uint64_t used;
    memcpy(&pid, buffer + (size_t)i * stride, sizeof pid);
    memcpy(&used, buffer + (size_t)i * stride + 8, sizeof used);
    printf("proc index=%u pid=%u used_bytes=%llu\n", index, pid, (unsigned long long)used);
  }
  free(buffer);
}

static int probe_nvml(void) {
  /* The same override gpupin honours, so both read the same library. */
  const char* path = getenv("GPUPIN_NVML_LIBRARY");
  if (path == NULL || *path == '\0') path = "libnvidia-ml.so.1";
  void* nvml = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (nvml == NULL) {
    fprintf(stderr, "gpu_probe: cannot load %s: %s\n", path, dlerror());
    return kExitNoDriver;
  }
  nvmlReturn_t (*init)(void) = (nvmlReturn_t(*)(void))need(nvml, "nvmlInit_v2");
  nvmlReturn_t (*get_count)(unsigned int*) =
      (nvmlReturn_t(*)(unsigned int*))need(nvml, "nvmlDeviceGetCount_v2");
  nvmlReturn_t (*get_handle)(unsigned int, nvmlDevice_t*) =
      (nvmlReturn_t(*)(unsigned int, nvmlDevice_t*))need(nvml, "nvmlDeviceGetHandleByIndex_v2");
  nvmlReturn_t (*get_uuid)(nvmlDevice_t, char*, unsigned int) =
      (nvmlReturn_t(*)(nvmlDevice_t, char*, unsigned int))need(nvml, "nvmlDeviceGetUUID");
  nvmlReturn_t (*memory_v1)(nvmlDevice_t, nvmlMemory_t*) =
      (nvmlReturn_t(*)(nvmlDevice_t, nvmlMemory_t*))need(nvml, "nvmlDeviceGetMemoryInfo");
  nvmlReturn_t (*memory_v2)(nvmlDevice_t, nvmlMemory_v2_t*) =
      (nvmlReturn_t(*)(nvmlDevice_t, nvmlMemory_v2_t*))dlsym(nvml, "nvmlDeviceGetMemoryInfo_v2");
  nvmlReturn_t rc = init();
  if (rc != NVML_SUCCESS) {
    fprintf(stderr, "gpu_probe: nvmlInit_v2 failed with %d\n", rc);
    return kExitNoDriver;
  }
  unsigned int count = 0;
  if (get_count(&count) != NVML_SUCCESS) return 1;
  for (unsigned int i = 0; i < count; ++i) {
    nvmlDevice_t device;
    char uuid[96] = "";
    nvmlMemory_t v1 = {0};
    if (get_handle(i, &device) != NVML_SUCCESS || get_uuid(device, uuid, sizeof uuid) != 0)
      return 1;
    printf("gpu index=%u uuid=%s", i, uuid);
    if (memory_v1(device, &v1) == NVML_SUCCESS) {
      printf(" v1_total=%llu v1_used=%llu", v1.total, v1.used);
    }
    if (memory_v2 != NULL) {
      /* The header's version (size | 2 << 24) and the bare 2 that nvtop
       * passes: whether the driver takes the latter is an open question. */
      nvmlMemory_v2_t v2 = {.version = NVML_MEMORY_V2_VERSION};
      nvmlReturn_t macro_rc = memory_v2(device, &v2);
      nvmlMemory_v2_t bare = {.version = 2};
      printf(" v2_rc=%d v2_bare_rc=%d", macro_rc, memory_v2(device, &bare));
      if (macro_rc == NVML_SUCCESS) {
        printf(" v2_total=%llu v2_used=%llu v2_reserved=%llu", v2.total, v2.used, v2.reserved);
      }
    } else {
      printf(" v2_rc=absent");
    }
    printf("\n");
    probe_processes(nvml, device, i);
  }
  return 0;
}

/* ---- CUDA driver API ---- */
typedef int CUresult;
typedef int CUdevice;
typedef void* CUcontext;
typedef unsigned long long CUdeviceptr;

static int hold(size_t mib, unsigned seconds) {
  void* cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (cuda == NULL) {
    fprintf(stderr, "gpu_probe: cannot load libcuda.so.1: %s\n", dlerror());
    return kExitNoDriver;
  }
  CUresult (*cu_init)(unsigned int) = (CUresult(*)(unsigned int))need(cuda, "cuInit");
  CUresult (*device_count)(int*) = (CUresult(*)(int*))need(cuda, "cuDeviceGetCount");
  CUresult (*device_get)(CUdevice*, int) = (CUresult(*)(CUdevice*, int))need(cuda, "cuDeviceGet");
  CUresult (*get_uuid)(unsigned char*, CUdevice) =
      (CUresult(*)(unsigned char*, CUdevice))dlsym(cuda, "cuDeviceGetUuid_v2");
  if (get_uuid == NULL) {
    get_uuid = (CUresult(*)(unsigned char*, CUdevice))need(cuda, "cuDeviceGetUuid");
  }
  CUresult (*ctx_create)(CUcontext*, unsigned int, CUdevice) =
      (CUresult(*)(CUcontext*, unsigned int, CUdevice))need(cuda, "cuCtxCreate_v2");
  CUresult (*mem_alloc)(CUdeviceptr*, size_t) =
      (CUresult(*)(CUdeviceptr*, size_t))need(cuda, "cuMemAlloc_v2");

  CUresult rc;
  int count = 0;
  CUdevice device = 0;
  unsigned char uuid[16];
  CUcontext context = NULL;
  CUdeviceptr pointer = 0;
  if ((rc = cu_init(0)) != 0 || (rc = device_count(&count)) != 0 ||
      (rc = device_get(&device, 0)) != 0 || (rc = get_uuid(uuid, device)) != 0 ||
      (rc = ctx_create(&context, 0, device)) != 0 || (rc = mem_alloc(&pointer, mib << 20)) != 0) {
    fprintf(stderr, "gpu_probe: CUDA call failed with %d\n", rc);
    return 1;
  }
  printf("ready pid=%d visible_count=%d bytes=%zu uuid=GPU-", (int)getpid(), count, mib << 20);
  for (int i = 0; i < 16; ++i) {
    printf("%02x%s", uuid[i], (i == 3 || i == 5 || i == 7 || i == 9) ? "-" : "");
  }
  printf("\n");
  fflush(stdout);
  sleep(seconds);
  return 0;
}

int main(int argc, char** argv) {
  if (argc == 2 && strcmp(argv[1], "nvml") == 0) return probe_nvml();
  if (argc == 4 && strcmp(argv[1], "hold") == 0) {
    return hold(strtoul(argv[2], NULL, 10), (unsigned)strtoul(argv[3], NULL, 10));
  }
  fprintf(stderr, "usage: gpu_probe nvml | gpu_probe hold MIB SECONDS\n");
  return 2;
}
