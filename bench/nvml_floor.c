/* The benchmark floor for `gpupin --json ls`: the least a program can do to
 * report the same facts. It dlopens one NVML library (the path argument),
 * resolves each function once, makes only the NVML calls the table of `ls`
 * shows (versions; per card name, UUID, bus id, memory, utilization,
 * temperature, power draw and limit, MIG mode and instances, processes; and
 * compute capability and cores where the models differ, for CUDA's default
 * order), and prints what they return as JSON-ish text. With --all it also
 * makes every other call of `ls --all` (modes, minor number, CPU affinity,
 * NUMA node, board, NVLink, topology of every pair). No error texts, no
 * fallbacks beyond the symbol versions, no allocations beyond the process
 * buffer: bench/ls_vs_floor.sh compares gpupin's wall time and NVML calls
 * with this one's.
 *
 *   build/release/bin/nvml_floor [--all] PATH/TO/libnvidia-ml.so.1
 *
 * Keep the calls in step with nvml_source.cc when either changes. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef int ret_t;
typedef void* dev_t_;
enum { OK = 0, INVALID_ARGUMENT = 2, NOT_SUPPORTED = 3, NOT_FOUND = 6, INSUFFICIENT_SIZE = 7 };

typedef struct {
  char busIdLegacy[16];
  unsigned domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
} pci_t;
typedef struct {
  unsigned long long total, free, used;
} mem_v1_t;
typedef struct {
  unsigned version;
  unsigned long long total, reserved, free, used;
} mem_v2_t;
typedef struct {
  unsigned gpu, memory;
} util_t;

typedef ret_t (*void_fn)(void);
typedef ret_t (*sys_str_fn)(char*, unsigned);
typedef ret_t (*int_ptr_fn)(int*);
typedef ret_t (*uint_ptr_fn)(unsigned*);
typedef ret_t (*handle_fn)(unsigned, dev_t_*);
typedef ret_t (*dev_str_fn)(dev_t_, char*, unsigned);
typedef ret_t (*dev_pci_fn)(dev_t_, pci_t*);
typedef ret_t (*dev_ptr_fn)(dev_t_, void*);
typedef ret_t (*dev_uint_fn)(dev_t_, unsigned*);
typedef ret_t (*dev_int_fn)(dev_t_, int*);
typedef ret_t (*dev_temp_fn)(dev_t_, unsigned, unsigned*);
typedef ret_t (*dev_cc_fn)(dev_t_, int*, int*);
typedef ret_t (*dev_mig_fn)(dev_t_, unsigned*, unsigned*);
typedef ret_t (*dev_index_fn)(dev_t_, unsigned, dev_t_*);
typedef ret_t (*dev_affinity_fn)(dev_t_, unsigned, unsigned long*);
typedef ret_t (*dev_link_fn)(dev_t_, unsigned, unsigned*);
typedef ret_t (*dev_link_pci_fn)(dev_t_, unsigned, pci_t*);
typedef ret_t (*dev_topo_fn)(dev_t_, dev_t_, int*);
typedef ret_t (*dev_procs_fn)(dev_t_, unsigned*, void*);

static void* lib;
static void* sym(const char* a, const char* b, const char* c) {
  void* s = dlsym(lib, a);
  if (!s && b) s = dlsym(lib, b);
  if (!s && c) s = dlsym(lib, c);
  return s;
}

static struct {
  void_fn init, shutdown;
  sys_str_fn driver, nvml;
  int_ptr_fn cuda;
  uint_ptr_fn count;
  handle_fn handle;
  dev_str_fn name, uuid;
  dev_pci_fn pci;
  dev_ptr_fn mem_v2, mem_v1, util;
  dev_temp_fn temp;
  dev_uint_fn power, limit, cores, minor, numa, board, multi, max_mig, gi, ci;
  dev_int_fn mode, persistence;
  dev_cc_fn cc;
  dev_mig_fn mig;
  dev_index_fn mig_handle;
  dev_affinity_fn affinity;
  dev_link_fn link_state;
  dev_link_pci_fn link_pci;
  dev_topo_fn topo;
  dev_procs_fn procs[2];
  int procs_version[2];
} f;

static unsigned char* scratch;
static size_t scratch_size;

static void resolve_processes(int slot, const char* v3, const char* v2, const char* v1) {
  f.procs_version[slot] = 3;
  f.procs[slot] = (dev_procs_fn)dlsym(lib, v3);
  if (!f.procs[slot]) f.procs_version[slot] = 2, f.procs[slot] = (dev_procs_fn)dlsym(lib, v2);
  if (!f.procs[slot]) f.procs_version[slot] = 1, f.procs[slot] = (dev_procs_fn)dlsym(lib, v1);
}

/* The two-call protocol with slack and retries, and the _v3 stride found
 * from the bytes the library wrote over a sentinel fill. */
static void print_processes(dev_t_ d) {
  printf("\"processes\":[");
  int first = 1;
  for (int k = 0; k < 2; ++k) {
    if (!f.procs[k]) continue;
    unsigned n = 0;
    ret_t r = f.procs[k](d, &n, NULL);
    if (r == OK && n == 0) continue;
    if (r != INSUFFICIENT_SIZE && r != OK) break;
    size_t max_stride = f.procs_version[k] == 1 ? 16 : f.procs_version[k] == 2 ? 24 : 32;
    for (int attempt = 0; attempt < 8; ++attempt) {
      unsigned capacity = n * 2 + 5;
      size_t bytes = capacity * max_stride;
      if (bytes > scratch_size) scratch = realloc(scratch, scratch_size = bytes);
      memset(scratch, 0xA5, bytes);
      unsigned got = capacity;
      r = f.procs[k](d, &got, scratch);
      if (r == INSUFFICIENT_SIZE) {
        n = got > capacity ? got : capacity;
        continue;
      }
      if (r != OK) break;
      size_t stride = max_stride;
      if (f.procs_version[k] == 3) {
        stride = 24;
        for (size_t b = got * 24; b < got * 32; ++b)
          if (scratch[b] != 0xA5) stride = 32;
      }
      for (unsigned i = 0; i < got; ++i) {
        unsigned pid;
        unsigned long long used;
        memcpy(&pid, scratch + i * stride, 4);
        memcpy(&used, scratch + i * stride + 8, 8);
        printf("%s{\"pid\":%u,\"used\":%llu,\"kind\":%d}", first ? "" : ",", pid, used, k);
        first = 0;
      }
      break;
    }
  }
  printf("]");
}

static void print_memory(dev_t_ d) {
  mem_v2_t m2 = {0x02000028u, 0, 0, 0, 0};
  mem_v1_t m1;
  if (f.mem_v2 && f.mem_v2(d, &m2) == OK)
    printf("\"memory\":[%llu,%llu,%llu,%llu],", m2.total, m2.used, m2.free, m2.reserved);
  else if (f.mem_v1 && f.mem_v1(d, &m1) == OK)
    printf("\"memory\":[%llu,%llu,%llu],", m1.total, m1.used, m1.free);
}

static void print_cpu_list(const unsigned long* mask, size_t words) {
  printf("\"cpus\":\"");
  const char* sep = "";
  for (size_t cpu = 0; cpu < words * 64;) {
    if (!(mask[cpu / 64] >> (cpu % 64) & 1)) {
      ++cpu;
      continue;
    }
    size_t start = cpu;
    while (cpu + 1 < words * 64 && (mask[(cpu + 1) / 64] >> ((cpu + 1) % 64) & 1)) ++cpu;
    if (cpu > start)
      printf("%s%zu-%zu", sep, start, cpu);
    else
      printf("%s%zu", sep, start);
    sep = ",";
    ++cpu;
  }
  printf("\",");
}

int main(int argc, char** argv) {
  const int all = argc == 3 && strcmp(argv[1], "--all") == 0;
  if (argc != 2 + all) {
    fprintf(stderr, "usage: nvml_floor [--all] LIBNVML\n");
    return 2;
  }
  lib = dlopen(argv[1 + all], RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    fprintf(stderr, "%s\n", dlerror());
    return 4;
  }
  f.init = (void_fn)sym("nvmlInit_v2", "nvmlInit", NULL);
  f.shutdown = (void_fn)sym("nvmlShutdown", NULL, NULL);
  f.driver = (sys_str_fn)sym("nvmlSystemGetDriverVersion", NULL, NULL);
  f.nvml = (sys_str_fn)sym("nvmlSystemGetNVMLVersion", NULL, NULL);
  f.cuda =
      (int_ptr_fn)sym("nvmlSystemGetCudaDriverVersion_v2", "nvmlSystemGetCudaDriverVersion", NULL);
  f.count = (uint_ptr_fn)sym("nvmlDeviceGetCount_v2", "nvmlDeviceGetCount", NULL);
  f.handle = (handle_fn)sym("nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex", NULL);
  f.name = (dev_str_fn)sym("nvmlDeviceGetName", NULL, NULL);
  f.uuid = (dev_str_fn)sym("nvmlDeviceGetUUID", NULL, NULL);
  f.pci =
      (dev_pci_fn)sym("nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetPciInfo_v2", "nvmlDeviceGetPciInfo");
  f.mem_v2 = (dev_ptr_fn)sym("nvmlDeviceGetMemoryInfo_v2", NULL, NULL);
  f.mem_v1 = (dev_ptr_fn)sym("nvmlDeviceGetMemoryInfo", NULL, NULL);
  f.util = (dev_ptr_fn)sym("nvmlDeviceGetUtilizationRates", NULL, NULL);
  f.temp = (dev_temp_fn)sym("nvmlDeviceGetTemperature", NULL, NULL);
  f.power = (dev_uint_fn)sym("nvmlDeviceGetPowerUsage", NULL, NULL);
  f.limit = (dev_uint_fn)sym("nvmlDeviceGetEnforcedPowerLimit", NULL, NULL);
  f.mode = (dev_int_fn)sym("nvmlDeviceGetComputeMode", NULL, NULL);
  f.persistence = (dev_int_fn)sym("nvmlDeviceGetPersistenceMode", NULL, NULL);
  f.cc = (dev_cc_fn)sym("nvmlDeviceGetCudaComputeCapability", NULL, NULL);
  f.cores = (dev_uint_fn)sym("nvmlDeviceGetNumGpuCores", NULL, NULL);
  f.minor = (dev_uint_fn)sym("nvmlDeviceGetMinorNumber", NULL, NULL);
  f.affinity = (dev_affinity_fn)sym("nvmlDeviceGetCpuAffinity", NULL, NULL);
  f.numa = (dev_uint_fn)sym("nvmlDeviceGetNumaNodeId", NULL, NULL);
  f.board = (dev_uint_fn)sym("nvmlDeviceGetBoardId", NULL, NULL);
  f.multi = (dev_uint_fn)sym("nvmlDeviceGetMultiGpuBoard", NULL, NULL);
  f.mig = (dev_mig_fn)sym("nvmlDeviceGetMigMode", NULL, NULL);
  f.max_mig = (dev_uint_fn)sym("nvmlDeviceGetMaxMigDeviceCount", NULL, NULL);
  f.mig_handle = (dev_index_fn)sym("nvmlDeviceGetMigDeviceHandleByIndex", NULL, NULL);
  f.gi = (dev_uint_fn)sym("nvmlDeviceGetGpuInstanceId", NULL, NULL);
  f.ci = (dev_uint_fn)sym("nvmlDeviceGetComputeInstanceId", NULL, NULL);
  f.link_state = (dev_link_fn)sym("nvmlDeviceGetNvLinkState", NULL, NULL);
  f.link_pci = (dev_link_pci_fn)sym("nvmlDeviceGetNvLinkRemotePciInfo_v2",
                                    "nvmlDeviceGetNvLinkRemotePciInfo", NULL);
  f.topo = (dev_topo_fn)sym("nvmlDeviceGetTopologyCommonAncestor", NULL, NULL);
  resolve_processes(0, "nvmlDeviceGetComputeRunningProcesses_v3",
                    "nvmlDeviceGetComputeRunningProcesses_v2",
                    "nvmlDeviceGetComputeRunningProcesses");
  resolve_processes(1, "nvmlDeviceGetGraphicsRunningProcesses_v3",
                    "nvmlDeviceGetGraphicsRunningProcesses_v2",
                    "nvmlDeviceGetGraphicsRunningProcesses");
  if (!f.init || !f.shutdown || !f.count || !f.handle || !f.name || !f.uuid || !f.pci ||
      f.init() != OK) {
    fprintf(stderr, "not a usable NVML\n");
    return 4;
  }

  char text[96];
  int cuda = 0;
  unsigned count = 0;
  printf("{");
  if (f.driver && f.driver(text, 80) == OK) printf("\"driver\":\"%s\",", text);
  if (f.nvml && f.nvml(text, 80) == OK) printf("\"nvml\":\"%s\",", text);
  if (f.cuda && f.cuda(&cuda) == OK) printf("\"cuda\":%d,", cuda);
  if (f.count(&count) != OK) return 4;

  long cpus = sysconf(_SC_NPROCESSORS_CONF);
  size_t words = (size_t)((cpus + 63) / 64) > 16 ? (size_t)((cpus + 63) / 64) : 16;
  unsigned long* mask = calloc(words, sizeof *mask);
  dev_t_* handles = calloc(count, sizeof *handles);
  char(*names)[96] = calloc(count, sizeof *names);
  int mixed = 0;
  pci_t* pcis = calloc(count, sizeof *pcis);
  printf("\"gpus\":[");
  for (unsigned i = 0; i < count; ++i) {
    dev_t_ d;
    printf("%s{\"index\":%u", i ? "," : "", i);
    if (f.handle(i, &d) != OK) {
      printf(",\"error\":true}");
      continue;
    }
    handles[i] = d;
    unsigned u = 0, u2 = 0;
    int v = 0;
    util_t rates;
    if (f.uuid(d, text, 96) == OK) printf(",\"uuid\":\"%s\"", text);
    if (f.pci(d, &pcis[i]) == OK) printf(",\"bus\":\"%s\"", pcis[i].busId);
    if (f.name(d, names[i], 96) == OK) {
      printf(",\"name\":\"%s\"", names[i]);
      mixed = mixed || strcmp(names[i], names[0]) != 0;
    }
    printf(",");
    print_memory(d);
    if (f.util && f.util(d, &rates) == OK) printf("\"util\":[%u,%u],", rates.gpu, rates.memory);
    if (f.temp && f.temp(d, 0, &u) == OK) printf("\"temp\":%u,", u);
    if (f.power && f.power(d, &u) == OK) printf("\"power\":%u,", u);
    if (f.limit && f.limit(d, &u) == OK) printf("\"limit\":%u,", u);
    if (all) {
      if (f.mode && f.mode(d, &v) == OK) printf("\"mode\":%d,", v);
      if (f.persistence && f.persistence(d, &v) == OK) printf("\"persistence\":%d,", v);
      if (f.minor && f.minor(d, &u) == OK) printf("\"minor\":%u,", u);
      memset(mask, 0, words * sizeof *mask);
      if (f.affinity && f.affinity(d, (unsigned)words, mask) == OK) print_cpu_list(mask, words);
      if (f.numa && f.numa(d, &u) == OK) printf("\"numa\":%u,", u);
      if (f.board && f.board(d, &u) == OK) printf("\"board\":%u,", u);
      if (f.multi && f.multi(d, &u) == OK) printf("\"multi\":%u,", u);
    }
    if (f.mig && f.mig(d, &u, &u2) == OK && u == 1 && f.max_mig && f.mig_handle) {
      unsigned slots = 0;
      printf("\"mig\":[");
      if (f.max_mig(d, &slots) != OK) slots = 0;
      for (unsigned s = 0, first = 1; s < slots; ++s) {
        dev_t_ m;
        if (f.mig_handle(d, s, &m) != OK || f.uuid(m, text, 96) != OK) continue;
        printf("%s{\"slot\":%u,\"uuid\":\"%s\"", first ? "" : ",", s, text);
        first = 0;
        if (f.name(m, text, 96) == OK) printf(",\"name\":\"%s\"", text);
        if (f.gi && f.gi(m, &u) == OK) printf(",\"gi\":%u", u);
        if (f.ci && f.ci(m, &u) == OK) printf(",\"ci\":%u", u);
        printf(",");
        print_memory(m);
        print_processes(m);
        printf("}");
      }
      printf("]}");
    } else {
      print_processes(d);
      printf("}");
    }
  }
  printf("],\"order\":[");
  for (unsigned i = 0, first = 1; i < count && (all || mixed); ++i) {
    int major = 0, minor = 0;
    unsigned cores = 0;
    if (!handles[i] || !f.cc || f.cc(handles[i], &major, &minor) != OK) continue;
    if (!f.cores || f.cores(handles[i], &cores) != OK) cores = 0;
    printf("%s[%u,\"%d.%d\",%u]", first ? "" : ",", i, major, minor, cores);
    first = 0;
  }
  printf("],\"links\":[");
  for (unsigned i = 0, first = 1; i < count && all && f.link_state && f.link_pci; ++i) {
    if (!handles[i]) continue;
    for (unsigned link = 0; link < 64; ++link) {
      unsigned active = 0;
      pci_t remote;
      ret_t r = f.link_state(handles[i], link, &active);
      if (r == INVALID_ARGUMENT || r == NOT_SUPPORTED) break;
      if (r != OK || active != 1 || f.link_pci(handles[i], link, &remote) != OK) continue;
      for (unsigned j = 0; j < count; ++j) {
        if (j != i && handles[j] && strcasecmp(remote.busId, pcis[j].busId) == 0) {
          printf("%s[%u,%u]", first ? "" : ",", i, j);
          first = 0;
        }
      }
    }
  }
  printf("],\"topology\":[");
  for (unsigned i = 0, first = 1; i < count && all && f.topo; ++i) {
    for (unsigned j = i + 1; j < count && handles[i]; ++j) {
      int level;
      if (!handles[j] || f.topo(handles[i], handles[j], &level) != OK) continue;
      printf("%s[%u,%u,%d]", first ? "" : ",", i, j, level);
      first = 0;
    }
  }
  printf("]}\n");
  f.shutdown();
  dlclose(lib);
  return 0;
}
