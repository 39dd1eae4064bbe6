#include "core/cuda_visible.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <limits>
#include <string_view>
#include <tuple>

#include "core/gpu_models.h"
namespace gpupin {
namespace {

// A CUDA device as a place in the inventory: a whole GPU, or one MIG
// instance of it. Positions index the `gpus` vector and its mig_devices.
struct DeviceRef {
  size_t gpu = 0;
  std::optional<size_t> mig;
  friend bool operator==(const DeviceRef&, const DeviceRef&) = default;
};

// What one entry of the list resolved to.
struct EntryResult {
  enum class Kind { kDevice, kNoDevice, kCut } kind = Kind::kCut;
  DeviceRef ref;
  DropReason reason = DropReason::kInvalidToken;
  std::string detail;
  std::string read_in_part;  // as VisibleDevice::read_in_part
};

std::string_view Trim(std::string_view s) {
  constexpr std::string_view kSpace = " \t\n\r\f\v";
  const size_t first = s.find_first_not_of(kSpace);
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(kSpace) - first + 1);
}

std::vector<std::string> SplitEntries(std::string_view list) {
  std::vector<std::string> entries;
  size_t start = 0;
  while (true) {
    const size_t comma = list.find(',', start);
    entries.emplace_back(Trim(list.substr(start, comma - start)));
    if (comma == std::string_view::npos) return entries;
    start = comma + 1;
  }
}

bool StartsWith(std::string_view s, std::string_view prefix) { return s.starts_with(prefix); }

bool IsUuidEntry(std::string_view token) {
  return StartsWith(token, "GPU-") || StartsWith(token, "MIG-");
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// A UUID entry as the driver compares it (seen with driver 580): GPU- and
// MIG- both merely mark a UUID, case and dashes do not matter, and digits
// beyond a UUID's 32 are ignored. Any other character stays and matches no
// device.
std::string UuidDigits(std::string_view uuid) {
  constexpr size_t kUuidDigits = 32;
  std::string digits;
  for (char c : uuid.substr(4)) {
    if (c != '-' && digits.size() < kUuidDigits)
      digits += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return digits;
}

// The runtime reads an index like strtoul: the leading digits count and the
// rest is ignored. Saturates instead of overflowing; any such number is out of
// range anyway.
uint64_t LeadingNumber(std::string_view token, size_t* digits) {
  uint64_t value = 0;
  size_t i = 0;
  for (; i < token.size() && IsDigit(token[i]); ++i) {
    const uint64_t digit = static_cast<uint64_t>(token[i] - '0');
    value = value > (std::numeric_limits<uint64_t>::max() - digit) / 10
                ? std::numeric_limits<uint64_t>::max()
                : value * 10 + digit;
  }
  *digits = i;
  return value;
}

std::optional<std::array<uint32_t, 4>> ParsePciBusId(std::string_view id) {
  // "00000000:3B:00.0": domain, bus, device, function in hex.
  std::array<uint32_t, 4> parts{};
  const char separators[] = {':', ':', '.', '\0'};
  const char* p = id.data();
  const char* end = id.data() + id.size();
  for (size_t i = 0; i < parts.size(); ++i) {
    const auto [next, ec] = std::from_chars(p, end, parts[i], 16);
    if (ec != std::errc() || next == p) return std::nullopt;
    p = next;
    if (separators[i] != '\0') {
      if (p == end || *p != separators[i]) return std::nullopt;
      ++p;
    }
  }
  if (p != end) return std::nullopt;
  return parts;
}

bool PciLess(const Gpu& a, const Gpu& b) {
  const auto pa = ParsePciBusId(a.pci_bus_id);
  const auto pb = ParsePciBusId(b.pci_bus_id);
  return std::make_tuple(pa.value_or(std::array<uint32_t, 4>{}), a.index) <
         std::make_tuple(pb.value_or(std::array<uint32_t, 4>{}), b.index);
}

std::string ModelList(const std::vector<Gpu>& gpus) {
  std::vector<std::string> names;
  for (const Gpu& gpu : gpus) {
    if (!gpu.name.empty() && std::find(names.begin(), names.end(), gpu.name) == names.end())
      names.push_back(gpu.name);
  }
  std::string out;
  for (const std::string& name : names) out += (out.empty() ? "" : ", ") + name;
  return out;
}

// The order in which CUDA numbers the physical GPUs, as positions in `gpus`.
struct CudaOrder {
  std::vector<size_t> positions;
  bool guessed = false;
};

CudaOrder OrderGpus(const std::vector<Gpu>& gpus, DeviceOrder order,
                    std::optional<std::span<const uint32_t>> true_fastest_first) {
  CudaOrder result;
  for (size_t i = 0; i < gpus.size(); ++i) result.positions.push_back(i);
  // NVML usually numbers in PCI order, so a GPU whose bus id cannot be
  // read (lost) keeps its place among the others by index: then all go by
  // index, since bus ids and indices cannot be compared with each other.
  const bool all_bus_ids = std::all_of(gpus.begin(), gpus.end(), [](const Gpu& gpu) {
    return ParsePciBusId(gpu.pci_bus_id).has_value();
  });
  auto by_pci = [&](size_t a, size_t b) {
    return all_bus_ids ? PciLess(gpus[a], gpus[b]) : gpus[a].index < gpus[b].index;
  };
  std::stable_sort(result.positions.begin(), result.positions.end(), by_pci);
  if (order == DeviceOrder::kPciBusId) return result;

  if (true_fastest_first) {
    // Known truth wins; GPUs it leaves out follow in PCI order.
    auto rank = [&](size_t position) {
      const auto& known = *true_fastest_first;
      return std::find(known.begin(), known.end(), gpus[position].index) - known.begin();
    };
    std::stable_sort(result.positions.begin(), result.positions.end(),
                     [&](size_t a, size_t b) { return rank(a) < rank(b); });
    return result;
  }
  if (!TwoModels(gpus)) return result;  // identical models: FASTEST_FIRST keeps PCI order

  // CUDA's heuristic is not public; this is the commonly reported one.
  auto faster = [&](size_t a, size_t b) {
    const Gpu& ga = gpus[a];
    const Gpu& gb = gpus[b];
    const ComputeCapability none{-1, -1};
    return std::make_tuple(ga.compute_capability.value_or(none), ga.cores.value_or(0)) >
           std::make_tuple(gb.compute_capability.value_or(none), gb.cores.value_or(0));
  };
  std::stable_sort(result.positions.begin(), result.positions.end(), faster);
  result.guessed = true;
  return result;
}

bool InMigMode(const Gpu& gpu) { return gpu.mig_enabled.value_or(false); }

std::string Describe(const std::vector<Gpu>& gpus, const DeviceRef& ref) {
  const Gpu& gpu = gpus[ref.gpu];
  if (!ref.mig) return "GPU " + std::to_string(gpu.index) + " (" + gpu.uuid + ")";
  const MigDevice& mig = gpu.mig_devices[*ref.mig];
  return "MIG instance " + std::to_string(mig.index) + " of GPU " + std::to_string(gpu.index) +
         " (" + mig.uuid + ")";
}

std::string UuidOf(const std::vector<Gpu>& gpus, const DeviceRef& ref) {
  const Gpu& gpu = gpus[ref.gpu];
  return ref.mig ? gpu.mig_devices[*ref.mig].uuid : gpu.uuid;
}

// A whole GPU in MIG mode is no CUDA device itself; naming it (by index or
// GPU UUID) is assumed to stand for its MIG instances, of which CUDA takes
// the first. Without an instance it gives CUDA nothing.
EntryResult DeviceForGpu(const std::vector<Gpu>& gpus, size_t position) {
  const Gpu& gpu = gpus[position];
  if (!InMigMode(gpu)) return {EntryResult::Kind::kDevice, {position, std::nullopt}, {}, {}};
  if (gpu.mig_devices.empty()) {
    return {EntryResult::Kind::kNoDevice,
            {position, std::nullopt},
            DropReason::kNoDevice,
            "GPU " + std::to_string(gpu.index) +
                " is in MIG mode with no MIG instance, so CUDA gets no device from it"};
  }
  return {EntryResult::Kind::kDevice, {position, size_t{0}}, {}, {}};
}

EntryResult Cut(DropReason reason, std::string detail) {
  return {EntryResult::Kind::kCut, {}, reason, std::move(detail)};
}

std::string Quoted(std::string_view token) { return fmt::format("`{}`", token); }

// Why a token that is neither a number nor a UUID is invalid, naming the
// places where such values do mean something.
std::string InvalidTokenDetail(std::string_view token) {
  const std::string lower = Lower(token);
  if (token.empty()) return "empty entry: CUDA stops at the first invalid entry";
  const bool signed_number = token.size() > 1 && (token[0] == '-' || token[0] == '+');
  if (signed_number && IsDigit(token[1])) {
    return Quoted(token) +
           " is negative, hence invalid, and CUDA stops here (`-1` is the common way to hide "
           "every GPU)";
  }
  if (signed_number) {
    return Quoted(token) +
           " has no digit right after its sign, so it is no index; CUDA stops at the first "
           "invalid entry";
  }
  if (lower == "nodevfiles") {
    return "`NoDevFiles` is no CUDA keyword: older Slurm wrote it when a step got no GPU; CUDA "
           "reads it as an invalid entry and stops here";
  }
  if (lower == "void" || lower == "none" || lower == "all") {
    return Quoted(token) +
           " is an NVIDIA_VISIBLE_DEVICES value of the container runtime, no CUDA keyword; CUDA "
           "reads it as an invalid entry and stops here";
  }
  return Quoted(token) +
         " is neither an index nor a GPU-/MIG- UUID; CUDA stops at the first invalid entry";
}

EntryResult ResolveIndex(const std::vector<Gpu>& gpus, const CudaOrder& order,
                         std::string_view token) {
  if (token.empty()) return Cut(DropReason::kEmptyEntry, InvalidTokenDetail(token));
  if (IsUuidEntry(token)) {
    return Cut(DropReason::kInvalidToken,
               Quoted(token) +
                   " is a UUID in a list that began with an index: the first entry decides how "
                   "the list is read, so the list ends here");
  }
  // Read as strtol reads it: one sign, then digits (the driver takes `+0`
  // and `-0` as 0 and stops at `-1`; seen with driver 580).
  const size_t sign = token[0] == '+' || token[0] == '-' ? 1 : 0;
  size_t digits = 0;
  const uint64_t index = LeadingNumber(token.substr(sign), &digits);
  if (digits == 0 || (token[0] == '-' && index != 0))
    return Cut(DropReason::kInvalidToken, InvalidTokenDetail(token));
  const std::string number(token.substr(sign, digits));
  if (index >= gpus.size()) {
    return Cut(DropReason::kNoSuchIndex,
               "index " + number + " but only " + std::to_string(gpus.size()) + " GPU" +
                   (gpus.size() == 1 ? "" : "s") + "; CUDA stops at the first invalid entry");
  }
  EntryResult device = DeviceForGpu(gpus, order.positions[index]);
  if (sign + digits < token.size()) {
    const bool range = token[sign + digits] == '-';
    device.read_in_part =
        "entry " + Quoted(token) + " is read as index " + number +
        (range ? ": CUDA_VISIBLE_DEVICES has no ranges, CUDA reads the leading digits"
               : ": CUDA reads the leading digits and ignores the rest");
  } else if (sign) {
    device.read_in_part = "entry " + Quoted(token) + " is read as index " + number +
                          ": CUDA reads a sign before the digits";
  }
  return device;
}

// The old MIG form, MIG-GPU-<gpu-uuid>/<gi>/<ci> (R450/R460).
EntryResult ResolveOldMigForm(const std::vector<Gpu>& gpus, std::string_view token) {
  std::string_view rest = token.substr(4);  // after "MIG-"
  const size_t slash = rest.find('/');
  const size_t slash2 = slash == std::string_view::npos ? slash : rest.find('/', slash + 1);
  uint32_t gi = 0;
  uint32_t ci = 0;
  auto parse = [](std::string_view s, uint32_t* out) {
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
    return ec == std::errc() && end == s.data() + s.size() && !s.empty();
  };
  if (slash2 == std::string_view::npos || !parse(rest.substr(slash + 1, slash2 - slash - 1), &gi) ||
      !parse(rest.substr(slash2 + 1), &ci)) {
    return Cut(DropReason::kInvalidToken,
               Quoted(token) +
                   " is not a MIG UUID: the old form is MIG-GPU-<gpu-uuid>/<gpu instance>/"
                   "<compute instance>; CUDA stops here");
  }
  const std::string_view gpu_prefix = rest.substr(0, slash);
  std::vector<size_t> parents;
  for (size_t i = 0; i < gpus.size(); ++i) {
    if (StartsWith(gpus[i].uuid, gpu_prefix)) parents.push_back(i);
  }
  if (parents.size() > 1) {
    return Cut(DropReason::kAmbiguousUuid, Quoted(gpu_prefix) + " is the start of " +
                                               std::to_string(parents.size()) +
                                               " GPU UUIDs; CUDA stops at the first invalid entry");
  }
  if (parents.size() == 1) {
    const Gpu& gpu = gpus[parents[0]];
    for (size_t m = 0; m < gpu.mig_devices.size(); ++m) {
      const MigDevice& mig = gpu.mig_devices[m];
      if (mig.gpu_instance_id == gi && mig.compute_instance_id == ci) {
        return {EntryResult::Kind::kDevice, {parents[0], m}, {}, {}};
      }
    }
  }
  return Cut(DropReason::kNoSuchUuid,
             Quoted(token) + " names no MIG instance on this machine; CUDA stops here");
}

EntryResult ResolveUuid(const std::vector<Gpu>& gpus, std::string_view token) {
  if (token.empty()) return Cut(DropReason::kEmptyEntry, InvalidTokenDetail(token));
  if (!IsUuidEntry(token)) {
    return Cut(DropReason::kInvalidToken,
               Quoted(token) +
                   " is not a UUID in a list that began with a UUID: the first entry decides how "
                   "the list is read, so the list ends here");
  }
  if (StartsWith(token, "MIG-GPU-")) return ResolveOldMigForm(gpus, token);
  // Every prefix that names exactly one device is accepted, as CUDA does for
  // "enough digits from the beginning of the GPU UUID".
  const std::string digits = UuidDigits(token);
  if (digits.empty()) {
    return Cut(DropReason::kInvalidToken,
               Quoted(token) + " has no UUID digits; CUDA stops at the first invalid entry");
  }
  std::vector<DeviceRef> matches;
  auto consider = [&](const std::string& uuid, DeviceRef ref) {
    if (IsUuidEntry(uuid) && UuidDigits(uuid).starts_with(digits)) matches.push_back(ref);
  };
  for (size_t g = 0; g < gpus.size(); ++g) {
    consider(gpus[g].uuid, {g, std::nullopt});
    for (size_t m = 0; m < gpus[g].mig_devices.size(); ++m) {
      consider(gpus[g].mig_devices[m].uuid, {g, m});
    }
  }
  if (matches.size() > 1) {
    return Cut(DropReason::kAmbiguousUuid,
               Quoted(token) + " is the start of " + std::to_string(matches.size()) +
                   " UUIDs; use more digits. CUDA stops at the first invalid entry");
  }
  if (matches.empty()) {
    return Cut(DropReason::kNoSuchUuid,
               Quoted(token) + " names no GPU or MIG instance on this machine; CUDA stops here");
  }
  if (matches[0].mig) return {EntryResult::Kind::kDevice, matches[0], {}, {}};
  return DeviceForGpu(gpus, matches[0].gpu);
}

DroppedEntry Drop(int position, const std::string& token, std::string uuid, DropReason reason,
                  std::string detail) {
  return {position, token, std::move(uuid), reason, std::move(detail)};
}

// The devices named so far, before the MIG rule and ordinals are applied.
struct Candidate {
  int position = 0;  // -1 when implied by an unset CUDA_VISIBLE_DEVICES
  std::string token;
  DeviceRef ref;
  std::string read_in_part;
};

// One MIG instance per process, and no whole GPU next to a MIG instance
// (MIG user guide, "CUDA Device Enumeration").
void ApplyMigRule(const std::vector<Gpu>& gpus, const std::vector<Candidate>& candidates,
                  Resolution* result) {
  const auto first_mig = std::find_if(candidates.begin(), candidates.end(),
                                      [](const Candidate& c) { return c.ref.mig.has_value(); });
  for (const Candidate& c : candidates) {
    const bool kept = first_mig == candidates.end() || &c == &*first_mig;
    if (kept) {
      const Gpu& gpu = gpus[c.ref.gpu];
      VisibleDevice device;
      device.ordinal = static_cast<int>(result->visible.size());
      device.gpu_index = gpu.index;
      if (c.ref.mig) device.mig_index = gpu.mig_devices[*c.ref.mig].index;
      device.uuid = UuidOf(gpus, c.ref);
      device.token = c.token;
      device.read_in_part = c.read_in_part;
      result->visible.push_back(std::move(device));
      continue;
    }
    const std::string what = Describe(gpus, c.ref);
    const std::string kept_what = Describe(gpus, first_mig->ref);
    result->dropped.push_back(Drop(
        c.position, c.token, UuidOf(gpus, c.ref), DropReason::kMigLimit,
        c.ref.mig ? fmt::format("{} is not enumerated: CUDA enumerates one MIG instance per "
                                "process, here {}",
                                what, kept_what)
                  : fmt::format("{} is not enumerated: CUDA enumerates no whole GPU when a MIG "
                                "instance ({}) is enumerated",
                                what, kept_what)));
  }
}

std::string Joined(const std::vector<std::string>& parts, std::string_view separator) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? std::string(separator) : "") + parts[i];
  return out;
}

// A comma list of integers normalised for comparison ("0, 1" == "0,1").
std::string NormalisedList(const std::string& list) { return Joined(SplitEntries(list), ","); }

bool IsIdentityList(const std::string& list) {
  const std::vector<std::string> entries = SplitEntries(list);
  for (size_t i = 0; i < entries.size(); ++i) {
    if (entries[i] != std::to_string(i)) return false;
  }
  return true;
}

void AddContextNotes(const VisibilityEnv& env, bool integer_mode, Resolution* result) {
  if (env.nvidia_visible_devices) {
    result->notes.push_back(
        "inside a container (NVIDIA_VISIBLE_DEVICES=" + Quoted(*env.nvidia_visible_devices) +
        "): indices count the container's GPUs from 0, not the host's; UUIDs are the same "
        "inside and outside");
  }
  const bool in_slurm = env.slurm_job_gpus || env.slurm_step_gpus;
  if (!in_slurm) return;
  const std::optional<std::string>& cvd = env.cuda_visible_devices;
  if (cvd && integer_mode) {
    for (const auto& [name, value] : {std::pair{"SLURM_JOB_GPUS", env.slurm_job_gpus},
                                      std::pair{"SLURM_STEP_GPUS", env.slurm_step_gpus}}) {
      if (value && NormalisedList(*value) == NormalisedList(*cvd) && !IsIdentityList(*value)) {
        result->notes.push_back(
            std::string("CUDA_VISIBLE_DEVICES equals ") + name + " (" + Quoted(*value) +
            "): those are Slurm's global GPU ids, but inside a job whose devices are "
            "constrained by cgroups CUDA counts only the job's GPUs, from 0");
      }
    }
    result->notes.emplace_back(
        "inside Slurm: with ConstrainDevices=yes the indices in CUDA_VISIBLE_DEVICES are local to "
        "the job (0..n-1), while SLURM_JOB_GPUS holds global ids");
  }
  if (env.gpu_device_ordinal &&
      (!cvd || NormalisedList(*env.gpu_device_ordinal) != NormalisedList(*cvd))) {
    result->notes.push_back(
        "GPU_DEVICE_ORDINAL=" + Quoted(*env.gpu_device_ordinal) +
        " differs from CUDA_VISIBLE_DEVICES=" + (cvd ? Quoted(*cvd) : std::string("(unset)")) +
        ": Slurm sets both to the same list, so one was changed later; "
        "OpenCL and ROCclr programs follow GPU_DEVICE_ORDINAL");
  }
}

DeviceOrder ReadOrder(const VisibilityEnv& env, std::vector<std::string>* notes) {
  if (FollowsPciBusOrder(env)) return DeviceOrder::kPciBusId;
  if (env.cuda_device_order && *env.cuda_device_order != "FASTEST_FIRST") {
    notes->push_back("CUDA_DEVICE_ORDER=" + Quoted(*env.cuda_device_order) +
                     " is not PCI_BUS_ID, so CUDA uses its default, FASTEST_FIRST");
  }
  return DeviceOrder::kFastestFirst;
}

Resolution Resolve(const std::vector<Gpu>& gpus, const VisibilityEnv& env,
                   std::optional<std::span<const uint32_t>> true_fastest_first) {
  Resolution result;
  result.order = ReadOrder(env, &result.notes);
  const CudaOrder order = OrderGpus(gpus, result.order, true_fastest_first);
  bool order_consulted = false;
  bool integer_mode = false;

  std::vector<Candidate> candidates;
  if (!env.cuda_visible_devices) {
    // Unset: every CUDA device, in CUDA's order; a GPU in MIG mode offers its
    // instances instead of itself.
    for (size_t position : order.positions) {
      const Gpu& gpu = gpus[position];
      if (!InMigMode(gpu)) {
        candidates.push_back({-1, "", {position, std::nullopt}, ""});
        continue;
      }
      for (size_t m = 0; m < gpu.mig_devices.size(); ++m) {
        candidates.push_back({-1, "", {position, m}, ""});
      }
    }
    order_consulted = !candidates.empty();
  } else if (env.cuda_visible_devices->empty()) {
    result.notes.emplace_back("CUDA_VISIBLE_DEVICES is set but empty: CUDA sees no GPU");
  } else {
    const std::vector<std::string> entries = SplitEntries(*env.cuda_visible_devices);
    integer_mode = !IsUuidEntry(entries.front());
    std::optional<size_t> duplicate_at;
    size_t cut_at = entries.size();
    for (size_t i = 0; i < entries.size(); ++i) {
      const int position = static_cast<int>(i);
      const std::string& token = entries[i];
      const EntryResult entry =
          integer_mode ? ResolveIndex(gpus, order, token) : ResolveUuid(gpus, token);
      if (!entry.read_in_part.empty()) result.notes.push_back(entry.read_in_part);
      if (entry.kind == EntryResult::Kind::kCut) {
        if ((integer_mode && IsUuidEntry(token)) ||
            (!integer_mode && !token.empty() && !IsUuidEntry(token))) {
          result.notes.emplace_back(
              "the list mixes indices and UUIDs: the first entry decides how the list is read, "
              "and the first entry of the other kind ends it (undocumented; seen with driver "
              "580, as PyTorch reads it)");
        }
        result.dropped.push_back(Drop(position, token, "", entry.reason, entry.detail));
        cut_at = i;
        break;
      }
      if (integer_mode) order_consulted = true;
      if (entry.kind == EntryResult::Kind::kNoDevice) {
        result.dropped.push_back(
            Drop(position, token, UuidOf(gpus, entry.ref), entry.reason, entry.detail));
        continue;
      }
      const auto earlier = std::find_if(candidates.begin(), candidates.end(),
                                        [&](const Candidate& c) { return c.ref == entry.ref; });
      if (earlier != candidates.end() && !duplicate_at) {
        duplicate_at = i;
        result.dropped.push_back(
            Drop(position, token, UuidOf(gpus, entry.ref), DropReason::kDuplicate,
                 Describe(gpus, entry.ref) + " is named again (first by entry " +
                     std::to_string(earlier->position) + ", " + Quoted(earlier->token) +
                     "): a repeated device makes cuInit fail with CUDA_ERROR_INVALID_DEVICE, so no "
                     "CUDA call works"));
        continue;
      }
      candidates.push_back({position, token, entry.ref, entry.read_in_part});
    }
    for (size_t i = cut_at + 1; i < entries.size(); ++i) {
      result.dropped.push_back(
          Drop(static_cast<int>(i), entries[i], "", DropReason::kAfterInvalid,
               "CUDA ignores everything after the invalid entry " + std::to_string(cut_at)));
    }
    if (duplicate_at) {
      for (const Candidate& c : candidates) {
        result.dropped.push_back(Drop(c.position, c.token, UuidOf(gpus, c.ref),
                                      DropReason::kListVoided,
                                      "valid, but entry " + std::to_string(*duplicate_at) +
                                          " repeats a device, which leaves CUDA no device"));
      }
      candidates.clear();
      result.notes.emplace_back(
          "a device is named twice in CUDA_VISIBLE_DEVICES: cuInit then fails with "
          "CUDA_ERROR_INVALID_DEVICE (101) and a program sees no device (seen with driver 580; "
          "NVIDIA does not document it)");
    }
  }
  ApplyMigRule(gpus, candidates, &result);
  std::stable_sort(
      result.dropped.begin(), result.dropped.end(),
      [](const DroppedEntry& a, const DroppedEntry& b) { return a.position < b.position; });

  result.order_is_guess = order.guessed && order_consulted;
  result.order_from_driver =
      true_fastest_first && result.order == DeviceOrder::kFastestFirst && order_consulted;
  if (result.order_is_guess) {
    result.notes.push_back(
        "CUDA_DEVICE_ORDER is FASTEST_FIRST on a machine with mixed models (" + ModelList(gpus) +
        "): CUDA's heuristic is not public, so gpupin guesses highest compute capability "
        "first, then most cores, then PCI order; set CUDA_DEVICE_ORDER=PCI_BUS_ID or use UUIDs "
        "to be sure");
  }
  if (result.order_from_driver && TwoModels(gpus)) {
    result.notes.push_back("CUDA_DEVICE_ORDER is FASTEST_FIRST on a machine with mixed models (" +
                           ModelList(gpus) +
                           "): cuda:N follow the order the CUDA driver itself gave gpupin");
  }
  AddContextNotes(env, integer_mode, &result);
  return result;
}

}  // namespace

Resolution ResolveVisibleDevices(const std::vector<Gpu>& gpus, const VisibilityEnv& env) {
  return Resolve(gpus, env, std::nullopt);
}

Resolution ResolveVisibleDevicesWithOrder(const std::vector<Gpu>& gpus, const VisibilityEnv& env,
                                          std::span<const uint32_t> fastest_first_nvml_indices) {
  return Resolve(gpus, env, fastest_first_nvml_indices);
}

VisibilityEnv VisibilityEnvFrom(
    const std::function<std::optional<std::string>(const char* name)>& lookup) {
  return {lookup("CUDA_VISIBLE_DEVICES"),   lookup("CUDA_DEVICE_ORDER"),
          lookup("NVIDIA_VISIBLE_DEVICES"), lookup("SLURM_JOB_GPUS"),
          lookup("SLURM_STEP_GPUS"),        lookup("GPU_DEVICE_ORDINAL")};
}

VisibilityEnv VisibilityEnvFromMap(const std::map<std::string, std::string>& environment) {
  return VisibilityEnvFrom([&](const char* name) -> std::optional<std::string> {
    const auto it = environment.find(name);
    if (it == environment.end()) return std::nullopt;
    return it->second;
  });
}

std::optional<uint32_t> PciBusOrdinal(const std::vector<Gpu>& gpus, uint32_t nvml_index) {
  const std::vector<size_t> positions =
      OrderGpus(gpus, DeviceOrder::kPciBusId, std::nullopt).positions;
  for (size_t rank = 0; rank < positions.size(); ++rank) {
    if (gpus[positions[rank]].index == nvml_index) return static_cast<uint32_t>(rank);
  }
  return std::nullopt;
}

bool FollowsPciBusOrder(const VisibilityEnv& env) { return env.cuda_device_order == "PCI_BUS_ID"; }

const char* CudaOrderSource(const Resolution& resolution) {
  if (resolution.order_is_guess) return "guess";
  return resolution.order_from_driver ? "driver" : "pci_bus_id";
}

const char* DropReasonName(DropReason reason) {
  switch (reason) {
    case DropReason::kInvalidToken:
      return "invalid entry";
    case DropReason::kNoSuchIndex:
      return "no such index";
    case DropReason::kNoSuchUuid:
      return "no such UUID";
    case DropReason::kAmbiguousUuid:
      return "ambiguous UUID prefix";
    case DropReason::kDuplicate:
      return "duplicate";
    case DropReason::kAfterInvalid:
      return "after an invalid entry";
    case DropReason::kMigLimit:
      return "MIG limit";
    case DropReason::kEmptyEntry:
      return "empty entry";
    case DropReason::kNoDevice:
      return "MIG mode without instances";
    case DropReason::kListVoided:
      return "voided by a duplicate";
  }
  return "unknown";
}

}  // namespace gpupin
