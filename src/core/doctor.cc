#include "core/doctor.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <set>
#include <string_view>

#include "core/gpu_list.h"
#include "core/gpu_process_walk.h"
#include "core/slurm_ids.h"
#include "core/units.h"

namespace gpupin {
namespace {

// Long lists would break "one line": show a few, count the rest.
constexpr size_t kListedItems = 3;

std::string JoinShort(const std::vector<std::string>& items) {
  std::vector<std::string> shown(
      items.begin(), items.begin() + static_cast<long>(std::min(items.size(), kListedItems)));
  std::string out = fmt::format("{}", fmt::join(shown, "; "));
  if (items.size() > kListedItems) out += fmt::format("; and {} more", items.size() - kListedItems);
  return out;
}

std::string Quoted(const std::optional<std::string>& value) {
  return value ? fmt::format("\"{}\"", *value) : "unset";
}

// nvmlSystemGetNVMLVersion is "<CUDA major>.<driver version>" (12.535.104.05).
bool NvmlMatchesDriver(const std::string& nvml, const std::string& driver) {
  return nvml == driver || nvml.ends_with("." + driver);
}

Finding CheckNvml(const DoctorFacts& facts) {
  Finding f{"nvml", Verdict::kOk, "", ""};
  if (facts.nvml_error) {
    f.verdict = Verdict::kFail;
    f.evidence = *facts.nvml_error;
    // NVML_ERROR_LIB_RM_VERSION_MISMATCH: "Driver/library version mismatch".
    std::string lower = *facts.nvml_error;
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (lower.find("mismatch") != std::string::npos) {
      f.fix =
          "the driver was upgraded but its kernel module was not reloaded: reboot, or reload the "
          "nvidia modules";
    } else if (lower.find("no permission") != std::string::npos) {
      // NVML_ERROR_NO_PERMISSION: the driver is there, its device files are not ours to open.
      f.fix =
          "check the permissions of /dev/nvidia* (ls -l /dev/nvidia*) and that you are in the "
          "group that owns them (id), then log in again";
    } else {
      f.fix =
          "install or load the NVIDIA driver (nvidia-smi must work), or point --nvml / "
          "GPUPIN_NVML_LIBRARY at its libnvidia-ml.so.1";
    }
    return f;
  }
  const Inventory& inv = facts.inventory;
  std::string cuda = inv.cuda_driver_version
                         ? fmt::format(", CUDA {}.{}", *inv.cuda_driver_version / 1000,
                                       *inv.cuda_driver_version % 1000 / 10)
                         : "";
  f.evidence = fmt::format("NVML {}, driver {}{}, {} GPU{}{}", inv.nvml_version.value_or("?"),
                           inv.driver_version.value_or("?"), cuda, inv.gpus.size(),
                           inv.gpus.size() == 1 ? "" : "s", inv.simulated ? " (simulated)" : "");
  if (inv.gpus.empty()) {
    f.verdict = Verdict::kFail;
    f.fix =
        "check nvidia-smi -L; in a container, start it with --gpus (docker) or the GPU resources "
        "of its runtime";
  } else if (inv.nvml_version && inv.driver_version &&
             !NvmlMatchesDriver(*inv.nvml_version, *inv.driver_version)) {
    f.verdict = Verdict::kWarn;
    f.evidence = fmt::format("libnvidia-ml {} does not belong to driver {}", *inv.nvml_version,
                             *inv.driver_version);
    f.fix =
        "load the driver's own library: check --nvml, GPUPIN_NVML_LIBRARY and LD_LIBRARY_PATH, "
        "or reboot after a driver upgrade";
  }
  return f;
}

Finding CheckHealth(const DoctorFacts& facts) {
  std::vector<std::string> lost;
  for (const Gpu& gpu : facts.inventory.gpus) {
    if (!gpu.healthy()) lost.push_back(fmt::format("GPU {}: {}", gpu.index, *gpu.health_error));
  }
  if (lost.empty()) {
    const size_t n = facts.inventory.gpus.size();
    return {"health", Verdict::kOk,
            n == 0   ? std::string("NVML lists no GPU")
            : n == 1 ? std::string("the one GPU answers")
                     : fmt::format("all {} GPUs answer", n),
            ""};
  }
  return {"health", Verdict::kWarn, "not answering: " + JoinShort(lost),
          "gpupin leaves them out; look at nvidia-smi and dmesg (Xid errors): the card may need "
          "a reset (nvidia-smi -r) or a reboot"};
}

Finding CheckPersistence(const DoctorFacts& facts) {
  std::vector<uint32_t> off;
  size_t reported = 0;
  for (const Gpu& gpu : facts.inventory.gpus) {
    if (!gpu.persistence_mode) continue;
    ++reported;
    if (!*gpu.persistence_mode) off.push_back(gpu.index);
  }
  if (!off.empty()) {
    return {"persistence", Verdict::kWarn,
            fmt::format("persistence mode is off on GPU {} (of {})", fmt::join(off, ", "),
                        facts.inventory.gpus.size()),
            "as root: nvidia-smi -pm 1, or run nvidia-persistenced; without it every first CUDA "
            "start waits seconds for the driver to initialise the card"};
  }
  return {"persistence", Verdict::kOk,
          reported == 0 ? "persistence mode is not reported by the driver"
                        : fmt::format("persistence mode is on for {} GPU(s)", reported),
          ""};
}

// Why entries were dropped, one line: the resolver's reason for each entry
// that broke the list, then the entries that went with it.
std::string DescribeDropped(const std::vector<DroppedEntry>& dropped) {
  std::vector<std::string> reasons;
  std::vector<std::string> swept;
  for (const DroppedEntry& d : dropped) {
    bool went_along = d.reason == DropReason::kAfterInvalid || d.reason == DropReason::kListVoided;
    if (went_along) {
      swept.push_back(fmt::format("\"{}\"", d.token));
    } else {
      reasons.push_back(d.detail.empty() ? fmt::format("\"{}\" is not usable", d.token) : d.detail);
    }
  }
  std::string out = JoinShort(reasons);
  if (!swept.empty()) out += fmt::format("; dropped with it: {}", fmt::join(swept, ", "));
  return out;
}

Finding CheckCudaVisibleDevices(const DoctorFacts& facts) {
  const Resolution& r = facts.resolution;
  Finding f{"cuda_visible_devices", Verdict::kOk, "", ""};
  if (!facts.env.cuda_visible_devices) {
    // Devices CUDA leaves out on its own (a MIG-mode GPU without instances)
    // are not the caller's doing: information, not a warning.
    const size_t n = r.visible.size();
    const bool only_mig_limit =
        !r.dropped.empty() && std::all_of(r.dropped.begin(), r.dropped.end(), [](const auto& d) {
          return d.reason == DropReason::kMigLimit;
        });
    // One MIG instance hides every other device; said once, not per device.
    if (n == 1 && r.visible.front().mig_index && only_mig_limit) {
      const VisibleDevice& kept = r.visible.front();
      f.evidence = fmt::format(
          "unset: CUDA sees one device, MIG instance {} of GPU {} ({}), and leaves out the {} "
          "other{}: it enumerates one MIG instance per process and no whole GPU beside it",
          *kept.mig_index, kept.gpu_index, kept.uuid, r.dropped.size(),
          r.dropped.size() == 1 ? "" : "s");
      return f;
    }
    f.evidence = n == 0   ? std::string("unset: CUDA sees no device")
                 : n == 1 ? std::string("unset: CUDA sees the one device")
                          : fmt::format("unset: CUDA sees all {} devices", n);
    if (!r.dropped.empty()) f.evidence += "; " + DescribeDropped(r.dropped);
    return f;
  }
  std::string value = *facts.env.cuda_visible_devices;
  if (r.visible.empty()) {
    f.verdict = Verdict::kFail;
    f.evidence = value.empty() ? "CUDA_VISIBLE_DEVICES is set but empty: CUDA sees no GPU"
                               : fmt::format("CUDA_VISIBLE_DEVICES=\"{}\" leaves CUDA no GPU: {}",
                                             value, DescribeDropped(r.dropped));
    f.fix = "unset it, or list GPUs that exist (gpupin ls; UUIDs are the safest), each once";
    return f;
  }
  std::vector<std::string> mapping;
  for (const VisibleDevice& d : r.visible) {
    mapping.push_back(fmt::format("cuda:{} = GPU {}", d.ordinal, d.gpu_index));
  }
  std::string uses = fmt::format("{}", fmt::join(mapping, ", "));
  if (!r.dropped.empty()) {
    f.verdict = Verdict::kWarn;
    f.evidence = fmt::format("CUDA_VISIBLE_DEVICES=\"{}\" is cut short: CUDA uses {}; {}", value,
                             uses, DescribeDropped(r.dropped));
    f.fix = "remove the dropped entries: CUDA stops reading at the first invalid one";
    return f;
  }
  f.evidence = fmt::format("CUDA_VISIBLE_DEVICES=\"{}\": {}{}", value, uses,
                           r.order_is_guess ? " (FASTEST_FIRST order guessed)" : "");
  std::vector<std::string> read_in_part;
  for (const VisibleDevice& d : r.visible) {
    if (!d.read_in_part.empty()) read_in_part.push_back(d.read_in_part);
  }
  if (!read_in_part.empty()) {
    // `0-3` gives one GPU where four were meant, and nothing fails to say so.
    f.verdict = Verdict::kWarn;
    f.evidence += fmt::format("; {}", fmt::join(read_in_part, "; "));
    f.fix =
        "write each GPU as a plain index of its own (0,1,2,3, no ranges, signs or suffixes), or "
        "use UUIDs";
  }
  return f;
}

Finding CheckDeviceOrder(const DoctorFacts& facts) {
  const std::optional<std::string>& order = facts.env.cuda_device_order;
  if (order && *order != "PCI_BUS_ID" && *order != "FASTEST_FIRST") {
    return {"device_order", Verdict::kWarn,
            fmt::format("CUDA_DEVICE_ORDER=\"{}\" is neither PCI_BUS_ID nor FASTEST_FIRST", *order),
            "export CUDA_DEVICE_ORDER=PCI_BUS_ID"};
  }
  std::set<std::string> models;
  for (const Gpu& gpu : facts.inventory.gpus) {
    if (!gpu.name.empty()) models.insert(gpu.name);
  }
  if (models.size() < 2) {
    return {"device_order", Verdict::kOk,
            fmt::format("one GPU model{}: CUDA and nvidia-smi number the cards alike",
                        models.empty() ? "" : " (" + *models.begin() + ")"),
            ""};
  }
  std::string mixed = fmt::format("mixed GPU models ({})", fmt::join(models, ", "));
  if (order == "PCI_BUS_ID") {
    return {"device_order", Verdict::kOk,
            mixed + " and CUDA_DEVICE_ORDER=PCI_BUS_ID: cuda:N follows nvidia-smi's order", ""};
  }
  return {"device_order", Verdict::kWarn,
          fmt::format("{} and CUDA_DEVICE_ORDER is {}: CUDA numbers the fastest first, so cuda:0 "
                      "may not be nvidia-smi's GPU 0",
                      mixed, Quoted(order)),
          "export CUDA_DEVICE_ORDER=PCI_BUS_ID (gpupin run sets it for its jobs)"};
}

Finding CheckSlurm(const DoctorFacts& facts) {
  const VisibilityEnv& env = facts.env;
  const std::optional<SlurmGpuIds> slurm = SlurmGpus(env);
  if (!facts.slurm_job_id && !slurm) return {"slurm", Verdict::kOk, "not in a Slurm job", ""};
  std::string job = fmt::format("Slurm job {}", facts.slurm_job_id.value_or("?"));
  if (!slurm && !env.cuda_visible_devices) {
    return {"slurm", Verdict::kWarn,
            fmt::format("{} was given no GPU (SLURM_JOB_GPUS unset), yet it sees {} GPU(s): a "
                        "card chosen here may be one Slurm gives another job",
                        job, facts.inventory.gpus.size()),
            "ask Slurm for the GPUs the job uses (--gres=gpu:N, or --gpus=N)"};
  }
  // What CUDA_VISIBLE_DEVICES lets CUDA use, against what Slurm gave.
  std::optional<std::vector<uint32_t>> visible;
  if (env.cuda_visible_devices) {
    visible.emplace();
    for (const VisibleDevice& device : facts.resolution.visible)
      visible->push_back(device.gpu_index);
  }
  const std::optional<SlurmAllocation> allocation =
      KeepToSlurmAllocation(env, facts.inventory.gpus, visible);
  if (allocation && !env.cuda_visible_devices) {
    return {"slurm", Verdict::kWarn,
            fmt::format("{}: {}={}, but CUDA_VISIBLE_DEVICES is unset and no device cgroup hides "
                        "the node's other GPUs: CUDA sees all {}, also those Slurm gives other "
                        "jobs (gpupin keeps to the job's)",
                        job, slurm->variable, slurm->value, facts.inventory.gpus.size()),
            "run the job's programs through gpupin run, or leave CUDA_VISIBLE_DEVICES as Slurm "
            "sets it (is it unset in a ~/.bashrc?)"};
  }
  if (!slurm || !env.cuda_visible_devices) {
    return {"slurm", Verdict::kOk,
            fmt::format("{}: SLURM_JOB_GPUS={}, CUDA_VISIBLE_DEVICES={}", job,
                        Quoted(slurm ? std::optional<std::string>(slurm->value) : std::nullopt),
                        Quoted(env.cuda_visible_devices)),
            ""};
  }
  if (std::optional<SlurmIdsMisread> misread = SlurmIdsMisreadByCuda(env, facts.inventory.gpus)) {
    return {"slurm", Verdict::kFail, job + ": " + misread->problem, misread->fix};
  }
  if (allocation && !allocation->outside.empty()) {
    std::vector<std::string> outside;
    for (uint32_t index : allocation->outside) outside.push_back(fmt::format("GPU {}", index));
    return {
        "slurm", Verdict::kFail,
        fmt::format("{}: CUDA_VISIBLE_DEVICES=\"{}\" names {}, which Slurm did not give "
                    "this job ({}), and no device cgroup stops CUDA from using it",
                    job, *env.cuda_visible_devices, fmt::join(outside, ", "), allocation->given),
        "leave CUDA_VISIBLE_DEVICES as Slurm sets it (is it set in a ~/.bashrc?); gpupin "
        "run keeps to the job's GPUs"};
  }
  bool copied = SplitIdList(*env.cuda_visible_devices) == slurm->ids;
  // Global ids that happen to be 0..n-1 are also the local ones: copying them is harmless.
  bool local_already = true;
  for (size_t i = 0; i < slurm->ids.size(); ++i) {
    local_already = local_already && slurm->ids[i] == std::to_string(i);
  }
  std::string evidence = fmt::format("{}: CUDA_VISIBLE_DEVICES=\"{}\", {}=\"{}\"", job,
                                     *env.cuda_visible_devices, slurm->variable, slurm->value);
  if (!copied || local_already) return {"slurm", Verdict::kOk, evidence, ""};
  // Without a device cgroup (ConstrainDevices=no) the job sees every GPU of
  // the node, and Slurm itself sets the global ids, which are then the right
  // ones: a copy is wrong only where the cgroup hides the other GPUs.
  size_t seen = facts.inventory.gpus.size();
  if (SeesWholeNode(*slurm, seen)) {
    return {"slurm", Verdict::kOk,
            fmt::format("{}; global ids are right here: all {} GPUs of the node are visible (no "
                        "device cgroup)",
                        evidence, seen),
            ""};
  }
  return {"slurm", Verdict::kWarn,
          fmt::format("CUDA_VISIBLE_DEVICES=\"{}\" is a copy of {}, which holds global GPU ids; "
                      "inside the job's device cgroup the {} GPU(s) it sees are numbered from 0",
                      *env.cuda_visible_devices, slurm->variable, seen),
          "do not copy it: Slurm sets CUDA_VISIBLE_DEVICES for each step; unset yours, or use "
          "UUIDs"};
}

Finding CheckContainer(const DoctorFacts& facts) {
  const ContainerFacts& c = facts.container;
  if (!c.inside) return {"container", Verdict::kOk, "not in a container", ""};
  if (facts.inventory.simulated) {
    return {"container", Verdict::kOk,
            "in a container; the simulated server's process ids are made up, so they cannot "
            "tell whether it shares the host PID namespace",
            ""};
  }
  if (!c.host_pids_visible) {
    return {"container", Verdict::kOk,
            "in a container; no GPU process to tell whether it shares the host PID namespace", ""};
  }
  if (*c.host_pids_visible) {
    return {"container", Verdict::kOk, "in a container that shares the host PID namespace", ""};
  }
  return {"container", Verdict::kWarn,
          "in a container without the host PID namespace: NVML reports host PIDs, which mean "
          "nothing here, so GPU processes cannot be named",
          "start the container with --pid=host to see them, or run gpupin ps on the host"};
}

std::optional<std::string> BusyBecause(const Gpu& gpu, const BusyThreshold& t) {
  std::optional<uint64_t> limit = t.max_used.bytes;
  if (t.max_used.percent && gpu.memory_total_bytes) {
    auto by_percent = static_cast<uint64_t>(static_cast<double>(*gpu.memory_total_bytes) *
                                            *t.max_used.percent / 100);
    limit = limit ? std::min(*limit, by_percent) : by_percent;
  }
  bool memory_busy = limit && gpu.memory_used_bytes && *gpu.memory_used_bytes > *limit;
  bool util_busy = t.max_util_percent && gpu.utilization_gpu_percent &&
                   *gpu.utilization_gpu_percent > *t.max_util_percent;
  if (!memory_busy && !util_busy) return std::nullopt;
  std::string used = gpu.memory_used_bytes ? FormatBytes(*gpu.memory_used_bytes) : "?";
  // NVML reports no utilization for a card in MIG mode, only for whole cards.
  std::string util = gpu.utilization_gpu_percent ? fmt::format("{} %", *gpu.utilization_gpu_percent)
                     : gpu.mig_enabled.value_or(false) ? "no utilization in MIG mode"
                                                       : "utilization unknown";
  return fmt::format("GPU {} ({} used, {})", gpu.index, used, util);
}

Finding CheckBusy(const DoctorFacts& facts) {
  const BusyThreshold& t = facts.busy;
  std::vector<std::string> limits;
  if (t.max_used.bytes) limits.push_back(FormatBytes(*t.max_used.bytes) + " used");
  if (t.max_used.percent) limits.push_back(fmt::format("{} % of memory used", *t.max_used.percent));
  if (t.max_util_percent) limits.push_back(fmt::format("{} % utilization", *t.max_util_percent));
  std::string threshold = fmt::format("more than {}", fmt::join(limits, " or "));

  std::vector<std::string> busy;
  size_t healthy = 0;
  for (const Gpu& gpu : facts.inventory.gpus) {
    if (!gpu.healthy()) continue;
    ++healthy;
    if (auto why = BusyBecause(gpu, t)) busy.push_back(*why);
  }
  if (busy.empty()) {
    return {"busy", Verdict::kOk, fmt::format("no GPU is busy (busy: {})", threshold), ""};
  }
  std::string evidence =
      fmt::format("{} of {} GPUs busy ({}): {}", busy.size(), healthy, threshold, JoinShort(busy));
  if (busy.size() < healthy) return {"busy", Verdict::kOk, evidence, ""};
  return {"busy", Verdict::kWarn, evidence,
          "gpupin run --wait queues until a card is free; --mem SIZE shares a card that has room"};
}

Finding CheckLeftovers(const DoctorFacts& facts) {
  // Leftovers on a GPU whose processes NVML would not list are unknown,
  // not absent.
  const std::vector<uint32_t> unknown = GpusWithUnknownProcesses(facts.inventory);
  const std::string unlisted = unknown.empty()
                                   ? ""
                                   : fmt::format(
                                         "NVML does not list the processes of {}: leftovers there "
                                         "are unknown",
                                         GpuList(unknown));
  if (facts.leftovers.empty()) {
    if (unknown.empty()) return {"leftovers", Verdict::kOk, "no leftover processes", ""};
    const bool all = unknown.size() == facts.inventory.gpus.size();
    // NVML lists some cards' processes only to root; refused to root, the
    // card itself does not answer.
    return {"leftovers", Verdict::kWarn, all ? unlisted : unlisted + "; none on the others",
            facts.as_root ? "see health for a GPU that does not answer; nvidia-smi -q -d PIDS "
                            "shows what the driver will say"
                          : "sudo gpupin ps --leftovers, where NVML lists processes only to "
                            "root (a GPU that does not answer: see health)"};
  }
  std::vector<std::string> items;
  std::vector<uint32_t> own_running;
  std::vector<uint32_t> own_stopped;
  std::set<std::string> others;
  uint64_t total = 0;
  for (const LeftoverProcess& p : facts.leftovers) {
    total += p.used_memory_bytes.value_or(0);
    std::string memory = p.used_memory_bytes ? FormatBytes(*p.used_memory_bytes) : "memory";
    items.push_back(fmt::format("pid {} ({}, {}) holds {} on GPU{} {}, {}", p.pid, p.user,
                                p.command, memory, p.gpu_indices.size() == 1 ? "" : "s",
                                fmt::join(p.gpu_indices, ","), p.reason));
    if (!p.callers_own) {
      others.insert(p.user);
    } else {
      (p.stopped ? own_stopped : own_running).push_back(p.pid);
    }
  }
  std::vector<std::string> fixes;
  if (!own_running.empty() || !own_stopped.empty()) {
    // A stopped process acts on SIGTERM only once continued.
    std::vector<std::string> by_hand;
    if (!own_running.empty())
      by_hand.push_back(fmt::format("kill {}", fmt::join(own_running, " ")));
    if (!own_stopped.empty()) {
      by_hand.push_back(
          fmt::format("kill {0} && kill -CONT {0} (stopped)", fmt::join(own_stopped, " ")));
    }
    fixes.push_back(fmt::format("end yours: gpupin ps --leftovers --kill, or by hand: {}",
                                fmt::join(by_hand, "; ")));
  }
  if (!others.empty())
    fixes.push_back(fmt::format("ask {} to end theirs", fmt::join(others, ", ")));
  return {"leftovers", Verdict::kWarn,
          fmt::format("{} leftover process(es) hold {}: {}{}{}", facts.leftovers.size(),
                      FormatBytes(total), JoinShort(items), unknown.empty() ? "" : "; ", unlisted),
          fmt::format("{} (gpupin ps --leftovers lists them)", fmt::join(fixes, "; "))};
}

// pick and run pass over an id of `reserved` that names no card here,
// without a word: a mistyped index leaves the card meant for interactive
// work open to every job.
Finding CheckReserved(const DoctorFacts& facts) {
  if (facts.rules.reserved.empty())
    return {"reserved", Verdict::kOk, "the admin reserves no card", ""};
  const std::string rule = DescribeReserved(facts.rules);
  const std::vector<std::string> problems =
      ReservedIdProblems(facts.inventory.gpus, facts.rules.reserved);
  if (problems.empty()) {
    std::vector<std::string> cards;
    for (size_t position : ReservedGpuPositions(facts.inventory.gpus, facts.rules.reserved))
      cards.push_back(fmt::format("GPU {}", facts.inventory.gpus[position].index));
    return {"reserved", Verdict::kOk,
            fmt::format("{}: {} {} only by a request that names {} with --only", rule,
                        fmt::join(cards, ", "), cards.size() == 1 ? "is taken" : "are taken",
                        cards.size() == 1 ? "it" : "them"),
            ""};
  }
  // A card that does not answer has no UUID to match: an id meant for it
  // is right, and reserves it again once the card is back.
  std::vector<std::string> unnamed;
  for (const Gpu& gpu : facts.inventory.gpus) {
    if (gpu.uuid.empty()) unnamed.push_back(fmt::format("GPU {}", gpu.index));
  }
  const std::string file = RulesFileName(facts.rules);
  return {"reserved", Verdict::kWarn,
          fmt::format("{}: {}; such an id reserves nothing", rule, JoinShort(problems)),
          unnamed.empty()
              ? fmt::format("the admin corrects the id in {} (gpupin ls shows each card's index "
                            "and UUID)",
                            file)
              : fmt::format("{} gave no UUID (see the health check): an id that is its UUID is "
                            "right; otherwise the admin corrects the id in {}",
                            JoinShort(unnamed), file)};
}

Finding CheckLeases(const DoctorFacts& facts) {
  // Unread, they are unknown, not none.
  if (facts.leases_unread) {
    return {"leases", Verdict::kWarn,
            "the leases could not be read, so expired ones are unknown (state_dir says why)",
            "see the state_dir check"};
  }
  if (facts.expired_leases == 0) return {"leases", Verdict::kOk, "no expired leases", ""};
  return {
      "leases", Verdict::kOk,
      fmt::format("{} expired lease(s), whose holder is gone or whose reservation ended: ignored, "
                  "and removed on the next change",
                  facts.expired_leases),
      ""};
}

Finding CheckStateDir(const DoctorFacts& facts) {
  if (facts.state_dir_missing && facts.state_dir_named) {
    return {"state_dir", Verdict::kFail,
            fmt::format("{} does not exist: named by --state-dir or GPUPIN_STATE_DIR, it would "
                        "keep this gpupin's leases apart from everyone else's",
                        facts.state_dir),
            "check the name; gpupin creates the directory when it first takes a GPU"};
  }
  if (facts.state_dir_missing) {
    return {"state_dir", Verdict::kOk,
            fmt::format("{} does not exist yet: the first gpupin to take a GPU creates it",
                        facts.state_dir),
            ""};
  }
  if (!facts.state_dir_problem && facts.state_dir_user_owner) {
    return {"state_dir", Verdict::kFail,
            fmt::format("{} belongs to {}, who can remove anyone's lease in it (the sticky bit "
                        "does not stop a directory's owner)",
                        facts.state_dir, *facts.state_dir_user_owner),
            "have root create /run/gpupin for everyone (gpupin uses it when it exists): the "
            "package's tmpfiles.d entry does (as root: systemd-tmpfiles --create)"};
  }
  if (facts.state_lock_holder) {
    return {"state_dir", Verdict::kFail,
            fmt::format("{}/lock has been held by {} for {} ms (gpupin holds it for "
                        "milliseconds): every gpupin waits for it",
                        facts.state_dir, *facts.state_lock_holder, facts.state_lock_held_ms),
            "the directory is sound, leave it: if the holder is a stopped gpupin, continue it "
            "(kill -CONT PID); if it should not hold the lock, end it (kill PID, as its owner "
            "or root); every lease stays"};
  }
  if (!facts.state_dir_problem) {
    return {"state_dir", Verdict::kOk, fmt::format("{} is safe to share", facts.state_dir), ""};
  }
  return {"state_dir", Verdict::kFail,
          fmt::format("{}: {}", facts.state_dir, *facts.state_dir_problem),
          "remove or repair it (a real directory, not a symlink, mode 1777), or use another with "
          "--state-dir or GPUPIN_STATE_DIR"};
}

// Only asked for with --probe. A driver that cannot answer fails: CUDA
// programs would fail the same way.
Finding CheckProbe(const DoctorProbe& probe) {
  const ProbeResult& result = probe.result;
  if (!probe.comparison.comparable) {
    return {"cuda_probe", Verdict::kFail,
            fmt::format("{} gave no answer: {}", probe.libcuda, result.detail),
            "CUDA programs fail the same way: check that the driver is installed and loaded "
            "(nvidia-smi) and that libcuda.so.1 is the driver's, not the toolkit's stub"};
  }
  if (!probe.comparison.agree) {
    return {"cuda_probe", Verdict::kWarn,
            "the driver numbers devices differently from gpupin's model: " +
                JoinShort(probe.comparison.differences),
            "export CUDA_DEVICE_ORDER=PCI_BUS_ID, or name GPUs by UUID; gpupin map --probe shows "
            "both"};
  }
  const std::string unchecked =
      probe.comparison.unchecked.empty()
          ? ""
          : " where NVML can read the cards: " + JoinShort(probe.comparison.unchecked);
  return {"cuda_probe", Verdict::kOk,
          fmt::format("the driver ({}) sees {} device(s), as gpupin's model does{}", probe.libcuda,
                      result.devices.size(), unchecked),
          ""};
}

void AddPythonFindings(const DoctorFacts& facts, std::vector<Finding>& out) {
  if (facts.python_files_checked == 0 && facts.python_findings.empty()) return;
  if (facts.python_findings.empty()) {
    out.push_back(
        {"python", Verdict::kOk,
         fmt::format("{} Python file(s) checked: no problems found", facts.python_files_checked),
         ""});
    return;
  }
  for (const PythonFinding& p : facts.python_findings) {
    // Setting the variable too late silently runs on the wrong cards; DataParallel is a
    // choice; after a bare `import torch` it is in time.
    Verdict verdict = Verdict::kWarn;
    if (p.kind == PythonFindingKind::kVisibilitySetAfterImport ||
        p.kind == PythonFindingKind::kVisibilitySetAfterCudaInit) {
      verdict = Verdict::kFail;
    } else if (p.kind == PythonFindingKind::kVisibilitySetAfterHarmlessImport) {
      verdict = Verdict::kOk;
    }
    out.push_back({"python", verdict, fmt::format("{}:{}: {}", p.path, p.line, p.message), p.fix});
  }
}

}  // namespace

const char* VerdictName(Verdict verdict) {
  switch (verdict) {
    case Verdict::kOk:
      return "ok";
    case Verdict::kWarn:
      return "warn";
    case Verdict::kFail:
      return "fail";
  }
  return "?";
}

std::vector<Finding> RunDoctorChecks(const DoctorFacts& facts) {
  std::vector<Finding> out;
  out.push_back(CheckNvml(facts));
  if (!facts.nvml_error) {
    for (auto check : {CheckHealth, CheckPersistence, CheckCudaVisibleDevices, CheckDeviceOrder}) {
      out.push_back(check(facts));
    }
  }
  if (facts.probe) out.push_back(CheckProbe(*facts.probe));
  out.push_back(CheckSlurm(facts));
  out.push_back(CheckContainer(facts));
  if (!facts.nvml_error) {
    out.push_back(CheckBusy(facts));
    out.push_back(CheckLeftovers(facts));
    out.push_back(CheckReserved(facts));
  }
  out.push_back(CheckLeases(facts));
  out.push_back(CheckStateDir(facts));
  AddPythonFindings(facts, out);
  return out;
}

ExitCode DoctorExitCode(const DoctorFacts& facts, const std::vector<Finding>& findings) {
  if (facts.nvml_error) return ExitCode::kNvmlUnavailable;
  bool failed = std::any_of(findings.begin(), findings.end(),
                            [](const Finding& f) { return f.verdict == Verdict::kFail; });
  return failed ? ExitCode::kError : ExitCode::kOk;
}

std::optional<std::string> LeftoverReason(bool gpupin_job_gone, char state, int ppid,
                                          std::optional<char> parent_state) {
  if (gpupin_job_gone) return "its gpupin lease has ended";
  if (state == 'T' || state == 't') return "stopped";
  if (ppid == 1) return "orphaned (its parent is init)";
  if (parent_state == 'Z') return "its parent is a zombie";
  return std::nullopt;
}

std::optional<bool> HostPidsVisible(const Inventory& inventory,
                                    const std::function<bool(uint32_t pid)>& pid_exists) {
  std::optional<bool> all_visible;
  for (const Gpu& gpu : inventory.gpus) {
    ForEachGpuProcess(gpu, [&](const GpuProcess& p, const MigDevice*) {
      all_visible = all_visible.value_or(true) && pid_exists(p.pid);
    });
  }
  return all_visible;
}

}  // namespace gpupin
