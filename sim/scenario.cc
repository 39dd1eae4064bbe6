#include "sim/scenario.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "core/units.h"
#include "sim/nvml_return.h"

namespace gpupin::sim {
namespace {

using nlohmann::json;

// Thrown only inside this file and caught by ParseScenario: validation is a
// deep walk where every step can fail, and a local exception keeps each step
// one line.
struct ParseError {
  std::string message;
};

[[noreturn]] void Fail(const std::string& path, const std::string& what) {
  throw ParseError{path.empty() ? what : path + ": " + what};
}

std::string Join(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : path + "." + std::string(key);
}

std::string Index(const std::string& path, size_t i) { return fmt::format("{}[{}]", path, i); }

uint64_t ReadUint(const json& j, const std::string& path, uint64_t max) {
  if (!j.is_number_integer() ||
      (j.is_number_integer() && !j.is_number_unsigned() && j.get<int64_t>() < 0))
    Fail(path, "expected a non-negative integer");
  uint64_t v = j.get<uint64_t>();
  if (v > max) Fail(path, fmt::format("{} is too large (at most {})", v, max));
  return v;
}

std::string ReadString(const json& j, const std::string& path) {
  if (!j.is_string()) Fail(path, "expected a string");
  return j.get<std::string>();
}

bool ReadBool(const json& j, const std::string& path) {
  if (!j.is_boolean()) Fail(path, "expected true or false");
  return j.get<bool>();
}

// Sizes are bytes as a number, or text with a unit ("24G").
uint64_t ReadSize(const json& j, const std::string& path) {
  if (j.is_string()) {
    auto size = ParseSize(j.get<std::string>());
    if (!size) Fail(path, size.error().message);
    return *size;
  }
  if (!j.is_number_unsigned()) Fail(path, "expected a size such as \"24G\" or a number of bytes");
  return j.get<uint64_t>();
}

// An object whose keys are consumed one by one; a key nobody asked for is
// reported, so a typo in a scenario is an error instead of a silent default.
// Keys starting with '_' are comments.
class Object {
 public:
  Object(const json& j, std::string path) : j_(j), path_(std::move(path)) {
    if (!j.is_object()) Fail(path_, "expected an object");
  }

  const json* Find(std::string_view key) {
    auto it = j_.find(key);
    if (it == j_.end() || it->is_null()) {
      if (it != j_.end()) used_.insert(std::string(key));
      return nullptr;
    }
    used_.insert(std::string(key));
    return &*it;
  }
  const json& Require(std::string_view key) {
    const json* v = Find(key);
    if (!v) Fail(path_, fmt::format("missing required key '{}'", key));
    return *v;
  }
  std::string Path(std::string_view key) const { return Join(path_, key); }

  std::optional<uint64_t> Uint(std::string_view key, uint64_t max = UINT32_MAX) {
    const json* v = Find(key);
    return v ? std::optional(ReadUint(*v, Path(key), max)) : std::nullopt;
  }
  std::optional<std::string> String(std::string_view key) {
    const json* v = Find(key);
    return v ? std::optional(ReadString(*v, Path(key))) : std::nullopt;
  }
  std::optional<bool> Bool(std::string_view key) {
    const json* v = Find(key);
    return v ? std::optional(ReadBool(*v, Path(key))) : std::nullopt;
  }
  std::optional<uint64_t> Size(std::string_view key) {
    const json* v = Find(key);
    return v ? std::optional(ReadSize(*v, Path(key))) : std::nullopt;
  }

  void CheckAllUsed() const {
    for (const auto& [key, value] : j_.items()) {
      if (!key.starts_with("_") && !used_.contains(key))
        Fail(path_, fmt::format("unknown key '{}'", key));
    }
  }

 private:
  const json& j_;
  std::string path_;
  std::set<std::string, std::less<>> used_;
};

uint32_t U32(std::optional<uint64_t> v) { return static_cast<uint32_t>(*v); }
std::optional<uint32_t> U32Opt(std::optional<uint64_t> v) {
  return v ? std::optional(static_cast<uint32_t>(*v)) : std::nullopt;
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

std::optional<uint32_t> ParseHex(std::string_view text) {
  if (text.empty() || text.size() > 8) return std::nullopt;
  uint32_t v = 0;
  for (char c : text) {
    int d = HexDigit(c);
    if (d < 0) return std::nullopt;
    v = v * 16 + static_cast<uint32_t>(d);
  }
  return v;
}

SimPci ReadPciBusId(const json& j, const std::string& path) {
  std::string text = ReadString(j, path);
  auto pci = ParsePciBusId(text);
  if (!pci)
    Fail(path,
         fmt::format("invalid PCI bus id '{}'; write it as nvidia-smi does, e.g. 00000000:3B:00.0",
                     text));
  return *pci;
}

std::string NormalizedBusId(const json& j, const std::string& path) {
  return ReadPciBusId(j, path).bus_id;
}

std::string ReadUuid(const json& j, const std::string& path, std::string_view prefix) {
  std::string uuid = ReadString(j, path);
  if (!uuid.starts_with(prefix) || !UuidBytes(uuid))
    Fail(path,
         fmt::format(
             "invalid UUID '{}'; expected {}xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx (hex digits)",
             uuid, prefix));
  return uuid;
}

// "0-15,32-47" -> CPU numbers.
std::vector<uint32_t> ParseCpuList(const std::string& text, const std::string& path) {
  std::vector<uint32_t> cpus;
  std::stringstream in(text);
  std::string part;
  auto number = [&](std::string_view s) {
    uint32_t v = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size() || v >= 4096)
      Fail(path, fmt::format("invalid CPU list '{}'; write it like 0-15,32-47", text));
    return v;
  };
  while (std::getline(in, part, ',')) {
    size_t dash = part.find('-');
    uint32_t first = number(std::string_view(part).substr(0, dash));
    uint32_t last =
        dash == std::string::npos ? first : number(std::string_view(part).substr(dash + 1));
    if (last < first) Fail(path, fmt::format("invalid CPU range '{}'", part));
    for (uint32_t c = first; c <= last; ++c) cpus.push_back(c);
  }
  if (cpus.empty()) Fail(path, "empty CPU list");
  return cpus;
}

nvmlReturn_t ReadErrorCode(const json& j, const std::string& path) {
  std::string text = j.is_number_integer() ? std::to_string(j.get<int64_t>()) : ReadString(j, path);
  auto code = ParseNvmlReturn(text);
  if (!code || *code == NVML_SUCCESS)
    Fail(path,
         fmt::format(
             "'{}' is not an NVML error code; use a name such as NO_PERMISSION or GPU_IS_LOST",
             text));
  return *code;
}

std::map<std::string, nvmlReturn_t, std::less<>> ReadErrors(const json& j,
                                                            const std::string& path) {
  Object o(j, path);
  std::map<std::string, nvmlReturn_t, std::less<>> errors;
  for (const auto& [call, value] : j.items()) {
    if (call.starts_with("_")) continue;
    if (!call.starts_with("nvml"))
      Fail(Join(path, call), "faults name NVML functions, e.g. nvmlDeviceGetMemoryInfo");
    errors[call] = ReadErrorCode(value, Join(path, call));
  }
  return errors;
}

SimMemory ReadMemory(const json& j, const std::string& path, uint64_t process_sum) {
  Object o(j, path);
  SimMemory m;
  m.total_bytes = ReadSize(o.Require("total"), o.Path("total"));
  m.reserved_bytes = o.Size("reserved").value_or(0);
  m.used_bytes = o.Size("used").value_or(process_sum);
  o.CheckAllUsed();
  if (m.used_bytes < process_sum)
    Fail(o.Path("used"), fmt::format("{} bytes is less than the {} bytes its processes use",
                                     m.used_bytes, process_sum));
  if (m.reserved_bytes > m.total_bytes || m.used_bytes > m.total_bytes - m.reserved_bytes)
    Fail(path, "used + reserved exceeds total");
  return m;
}

std::vector<SimProcess> ReadProcesses(const json& j, const std::string& path) {
  if (!j.is_array()) Fail(path, "expected a list of processes");
  std::vector<SimProcess> processes;
  for (size_t i = 0; i < j.size(); ++i) {
    Object o(j[i], Index(path, i));
    SimProcess p;
    p.pid = U32(o.Uint("pid"));
    if (!o.Find("pid") || p.pid == 0) Fail(o.Path("pid"), "every process needs a pid above 0");
    p.used_memory_bytes = o.Size("used_memory");
    std::string type = o.String("type").value_or("compute");
    if (type == "compute") {
    } else if (type == "graphics") {
      p.compute = false;
      p.graphics = true;
    } else if (type == "compute+graphics") {
      p.graphics = true;
    } else {
      Fail(o.Path("type"), fmt::format("'{}' is not compute, graphics or compute+graphics", type));
    }
    o.CheckAllUsed();
    processes.push_back(p);
  }
  return processes;
}

// `sum` plus the memory of `processes`; a total past 2^64 bytes is an error
// rather than a wrapped sum that would pass the memory checks.
uint64_t MemorySum(const std::vector<SimProcess>& processes, const std::string& path,
                   uint64_t sum = 0) {
  for (const auto& p : processes) {
    if (__builtin_add_overflow(sum, p.used_memory_bytes.value_or(0), &sum))
      Fail(path, "the processes' memory adds up to more than 2^64 bytes");
  }
  return sum;
}

SimMigInstance ReadMigInstance(const json& j, const std::string& path) {
  Object o(j, path);
  SimMigInstance m;
  m.slot = U32(std::optional(ReadUint(o.Require("slot"), o.Path("slot"), 63)));
  m.uuid = ReadUuid(o.Require("uuid"), o.Path("uuid"), "MIG-");
  m.name = o.String("name");
  m.gpu_instance_id = U32Opt(o.Uint("gpu_instance_id"));
  m.compute_instance_id = U32Opt(o.Uint("compute_instance_id"));
  if (const json* p = o.Find("processes")) m.processes = ReadProcesses(*p, o.Path("processes"));
  if (const json* mem = o.Find("memory"))
    m.memory = ReadMemory(*mem, o.Path("memory"), MemorySum(m.processes, o.Path("processes")));
  o.CheckAllUsed();
  return m;
}

void ReadMig(const json& j, const std::string& path, SimGpu& gpu) {
  Object o(j, path);
  gpu.mig_enabled = ReadBool(o.Require("enabled"), o.Path("enabled"));
  gpu.mig_max_devices = U32(o.Uint("max_devices", 64).value_or(7));
  if (const json* list = o.Find("instances")) {
    if (!list->is_array()) Fail(o.Path("instances"), "expected a list of MIG instances");
    std::set<uint32_t> slots;
    for (size_t i = 0; i < list->size(); ++i) {
      auto instance = ReadMigInstance((*list)[i], Index(o.Path("instances"), i));
      if (instance.slot >= gpu.mig_max_devices)
        Fail(Index(o.Path("instances"), i), fmt::format("slot {} is not below max_devices {}",
                                                        instance.slot, gpu.mig_max_devices));
      if (!slots.insert(instance.slot).second)
        Fail(Index(o.Path("instances"), i), fmt::format("slot {} is used twice", instance.slot));
      gpu.mig_instances.push_back(std::move(instance));
    }
  }
  if (!*gpu.mig_enabled && !gpu.mig_instances.empty())
    Fail(path, "MIG instances need \"enabled\": true");
  o.CheckAllUsed();
}

const std::map<std::string_view, int>& ComputeModes() {
  static const std::map<std::string_view, int> modes = {
      {"DEFAULT", 0}, {"EXCLUSIVE_THREAD", 1}, {"PROHIBITED", 2}, {"EXCLUSIVE_PROCESS", 3}};
  return modes;
}

std::pair<int, int> ParseComputeCapability(const std::string& text, const std::string& path) {
  const std::string invalid =
      fmt::format("invalid compute capability '{}'; write it like \"8.6\"", text);
  size_t dot = text.find('.');
  if (dot == std::string::npos) Fail(path, invalid);
  int major = 0, minor = 0;
  const char* end = text.data() + text.size();
  auto [e1, c1] = std::from_chars(text.data(), text.data() + dot, major);
  auto [e2, c2] = std::from_chars(text.data() + dot + 1, end, minor);
  // Two digits each at most: a CUDA version becomes 1000 * major + 10 * minor.
  if (c1 != std::errc() || c2 != std::errc() || e1 != text.data() + dot || e2 != end || major < 1 ||
      major > 99 || minor < 0 || minor > 99)
    Fail(path, invalid);
  return {major, minor};
}

uint32_t ReadWattsAsMilliwatts(const json& j, const std::string& path) {
  if (!j.is_number() || j.get<double>() < 0 || j.get<double>() > 100000)
    Fail(path, "expected watts as a number, e.g. 250 or 71.5");
  return static_cast<uint32_t>(std::llround(j.get<double>() * 1000));
}

SimGpu ReadGpu(const json& j, const std::string& path) {
  Object o(j, path);
  SimGpu g;
  g.uuid = ReadUuid(o.Require("uuid"), o.Path("uuid"), "GPU-");
  g.name = o.String("name");
  if (const json* bus = o.Find("pci_bus_id")) g.pci = ReadPciBusId(*bus, o.Path("pci_bus_id"));
  if (const json* id = o.Find("pci_device_id")) {
    std::string text = ReadString(*id, o.Path("pci_device_id"));
    auto value = ParseHex(std::string_view(text).substr(text.starts_with("0x") ? 2 : 0));
    if (!value) Fail(o.Path("pci_device_id"), "expected hex text such as \"0x223010de\"");
    if (!g.pci) Fail(o.Path("pci_device_id"), "needs pci_bus_id");
    g.pci->pci_device_id = *value;
  }
  if (const json* p = o.Find("processes")) g.processes = ReadProcesses(*p, o.Path("processes"));
  if (const json* mig = o.Find("mig")) ReadMig(*mig, o.Path("mig"), g);
  if (const json* mem = o.Find("memory")) {
    uint64_t sum = MemorySum(g.processes, o.Path("processes"));
    for (const auto& m : g.mig_instances) sum = MemorySum(m.processes, o.Path("mig"), sum);
    g.memory = ReadMemory(*mem, o.Path("memory"), sum);
  }
  if (const json* u = o.Find("utilization")) {
    Object uo(*u, o.Path("utilization"));
    g.utilization = nvmlUtilization_t{
        U32(std::optional(ReadUint(uo.Require("gpu"), uo.Path("gpu"), 100))),
        U32(std::optional(ReadUint(uo.Require("memory"), uo.Path("memory"), 100)))};
    uo.CheckAllUsed();
  }
  g.temperature_c = U32Opt(o.Uint("temperature_c", 200));
  if (const json* p = o.Find("power")) {
    Object po(*p, o.Path("power"));
    if (const json* d = po.Find("draw_w"))
      g.power_draw_mw = ReadWattsAsMilliwatts(*d, po.Path("draw_w"));
    if (const json* l = po.Find("limit_w"))
      g.power_limit_mw = ReadWattsAsMilliwatts(*l, po.Path("limit_w"));
    po.CheckAllUsed();
  }
  if (auto mode = o.String("compute_mode")) {
    auto it = ComputeModes().find(*mode);
    if (it == ComputeModes().end())
      Fail(o.Path("compute_mode"),
           fmt::format("'{}' is not DEFAULT, EXCLUSIVE_THREAD, PROHIBITED or EXCLUSIVE_PROCESS",
                       *mode));
    g.compute_mode = it->second;
  }
  g.persistence_mode = o.Bool("persistence_mode");
  if (auto cc = o.String("compute_capability"))
    g.compute_capability = ParseComputeCapability(*cc, o.Path("compute_capability"));
  g.cores = U32Opt(o.Uint("cores"));
  g.minor_number = U32Opt(o.Uint("minor_number", 254));
  if (auto cpus = o.String("cpu_affinity"))
    g.cpu_affinity = ParseCpuList(*cpus, o.Path("cpu_affinity"));
  g.numa_node = U32Opt(o.Uint("numa_node", 1023));
  g.board_id = U32Opt(o.Uint("board_id"));
  g.multi_gpu_board = o.Bool("multi_gpu_board");
  g.pcie_switch = U32Opt(o.Uint("pcie_switch"));
  g.host_bridge = U32Opt(o.Uint("host_bridge"));
  if (const json* links = o.Find("nvlinks")) {
    if (!links->is_array() || links->size() > 36)
      Fail(o.Path("nvlinks"), "expected a list of at most 36 links");
    g.nvlinks.emplace();
    for (size_t i = 0; i < links->size(); ++i) {
      const json& link = (*links)[i];
      g.nvlinks->push_back(link.is_null()
                               ? std::nullopt
                               : std::optional(NormalizedBusId(link, Index(o.Path("nvlinks"), i))));
    }
  }
  g.lost = o.Bool("lost").value_or(false);
  if (const json* e = o.Find("errors")) g.errors = ReadErrors(*e, o.Path("errors"));
  o.CheckAllUsed();
  return g;
}

int ReadCudaDriverVersion(const json& j, const std::string& path) {
  if (j.is_number_unsigned()) return static_cast<int>(ReadUint(j, path, 100000));
  std::string text = ReadString(j, path);
  auto [major, minor] = ParseComputeCapability(text, path);
  return major * 1000 + minor * 10;
}

void CheckUnique(const Scenario& s) {
  std::set<std::string> uuids, buses, minors;
  for (size_t i = 0; i < s.gpus.size(); ++i) {
    const auto& g = s.gpus[i];
    std::string path = Index("gpus", i);
    if (!uuids.insert(g.uuid).second) Fail(path, fmt::format("UUID {} is used twice", g.uuid));
    for (const auto& m : g.mig_instances) {
      if (!uuids.insert(m.uuid).second) Fail(path, fmt::format("UUID {} is used twice", m.uuid));
    }
    if (g.pci && !buses.insert(g.pci->bus_id).second)
      Fail(path, fmt::format("PCI bus id {} is used twice", g.pci->bus_id));
    if (g.minor_number && !minors.insert(std::to_string(*g.minor_number)).second)
      Fail(path, fmt::format("minor number {} is used twice", *g.minor_number));
    if (g.nvlinks && g.pci) {
      for (const auto& peer : *g.nvlinks) {
        if (peer == g.pci->bus_id) Fail(path + ".nvlinks", "a GPU cannot link to itself");
      }
    }
  }
}

Scenario ReadScenario(const json& j) {
  Object o(j, "");
  Scenario s;
  if (auto version = o.Uint("version"); version && *version != 1)
    Fail("version", fmt::format("this simulator reads version 1, not {}", *version));
  s.driver_version = o.String("driver_version");
  s.nvml_version = o.String("nvml_version");
  if (const json* v = o.Find("cuda_driver_version"))
    s.cuda_driver_version = ReadCudaDriverVersion(*v, "cuda_driver_version");
  if (const json* e = o.Find("init_error")) s.init_error = ReadErrorCode(*e, "init_error");
  if (const json* e = o.Find("errors")) s.errors = ReadErrors(*e, "errors");
  s.process_stride = U32(std::optional(o.Uint("process_stride").value_or(24)));
  if (s.process_stride != 24 && s.process_stride != 32) Fail("process_stride", "must be 24 or 32");
  s.grow_processes_on_fetch =
      U32(std::optional(o.Uint("grow_processes_on_fetch", 1000).value_or(0)));
  const json& gpus = o.Require("gpus");
  if (!gpus.is_array()) Fail("gpus", "expected a list of GPUs");
  for (size_t i = 0; i < gpus.size(); ++i) s.gpus.push_back(ReadGpu(gpus[i], Index("gpus", i)));
  if (const json* order = o.Find("cuda_fastest_first_order")) {
    if (!order->is_array() || order->size() != s.gpus.size())
      Fail("cuda_fastest_first_order",
           fmt::format("expected a list of all {} NVML indices", s.gpus.size()));
    std::vector<uint32_t> indices;
    for (size_t i = 0; i < order->size(); ++i)
      indices.push_back(U32(std::optional(
          ReadUint((*order)[i], Index("cuda_fastest_first_order", i), s.gpus.size() - 1))));
    if (std::set<uint32_t>(indices.begin(), indices.end()).size() != indices.size())
      Fail("cuda_fastest_first_order", "names an index twice");
    s.cuda_fastest_first_order = std::move(indices);
  }
  s.cuda_init_hangs = o.Bool("cuda_init_hangs").value_or(false);
  s.nvml_init_ms = U32(std::optional(o.Uint("nvml_init_ms", 60000).value_or(0)));
  o.CheckAllUsed();
  CheckUnique(s);
  return s;
}

}  // namespace

Result<Scenario> ParseScenario(std::string_view json_text) {
  json j = json::parse(json_text, nullptr, false);
  if (j.is_discarded()) return MakeError(ExitCode::kError, "not valid JSON");
  try {
    return ReadScenario(j);
  } catch (const ParseError& e) {
    return MakeError(ExitCode::kError, e.message);
  } catch (const json::exception& e) {
    return MakeError(ExitCode::kError, e.what());
  }
}

Result<Scenario> LoadScenario(const std::string& path) {
  // Checked before opening: a FIFO would block the open, and /dev/zero
  // would be read until memory runs out.
  constexpr off_t kMaxBytes = 16 << 20;
  struct stat file {};
  if (stat(path.c_str(), &file) == 0) {
    if (!S_ISREG(file.st_mode))
      return MakeError(ExitCode::kError, fmt::format("{}: not a regular file", path));
    if (file.st_size > kMaxBytes)
      return MakeError(ExitCode::kError,
                       fmt::format("{}: larger than 16 MiB; not a scenario file", path));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return MakeError(ExitCode::kError, fmt::format("{}: cannot read the scenario file", path));
  std::stringstream text;
  text << in.rdbuf();
  auto scenario = ParseScenario(text.str());
  if (!scenario) return scenario.error().WithContext(path);
  return scenario;
}

bool FaultMatches(std::string_view configured, std::string_view call) {
  if (configured == call) return true;
  // An unversioned name covers every version of the call.
  size_t v = call.rfind("_v");
  if (v == std::string_view::npos || v + 2 >= call.size()) return false;
  for (char c : call.substr(v + 2)) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return configured == call.substr(0, v);
}

std::optional<nvmlReturn_t> ConfiguredError(
    const std::map<std::string, nvmlReturn_t, std::less<>>& errors, std::string_view call) {
  for (const auto& [name, code] : errors) {
    if (FaultMatches(name, call)) return code;
  }
  return std::nullopt;
}

std::optional<SimPci> ParsePciBusId(std::string_view text) {
  size_t c1 = text.find(':');
  if (c1 == std::string_view::npos) return std::nullopt;
  size_t c2 = text.find(':', c1 + 1);
  if (c2 == std::string_view::npos || c2 - c1 - 1 != 2) return std::nullopt;
  size_t dot = text.find('.', c2 + 1);
  if (dot == std::string_view::npos || dot - c2 - 1 != 2) return std::nullopt;
  auto domain = ParseHex(text.substr(0, c1));
  auto bus = ParseHex(text.substr(c1 + 1, 2));
  auto device = ParseHex(text.substr(c2 + 1, 2));
  auto function = ParseHex(text.substr(dot + 1));
  if (!domain || !bus || !device || !function || *device > 0x1f || *function > 7)
    return std::nullopt;
  SimPci pci;
  pci.domain = *domain;
  pci.bus = *bus;
  pci.device = *device;
  pci.bus_id = fmt::format("{:08X}:{:02X}:{:02X}.{:X}", *domain, *bus, *device, *function);
  return pci;
}

std::optional<std::array<unsigned char, 16>> UuidBytes(std::string_view uuid) {
  if (!uuid.starts_with("GPU-") && !uuid.starts_with("MIG-")) return std::nullopt;
  uuid.remove_prefix(4);
  static constexpr size_t kDashes[] = {8, 13, 18, 23};
  if (uuid.size() != 36) return std::nullopt;
  std::array<unsigned char, 16> bytes{};
  size_t nibble = 0;
  for (size_t i = 0; i < uuid.size(); ++i) {
    if (std::find(std::begin(kDashes), std::end(kDashes), i) != std::end(kDashes)) {
      if (uuid[i] != '-') return std::nullopt;
      continue;
    }
    int d = HexDigit(uuid[i]);
    if (d < 0) return std::nullopt;
    bytes[nibble / 2] = static_cast<unsigned char>(bytes[nibble / 2] | (d << (nibble % 2 ? 0 : 4)));
    ++nibble;
  }
  return bytes;
}

}  // namespace gpupin::sim
