// The checks of `gpupin doctor` (doc/commands.md): each problem of the machine and
// the caller's environment, with a verdict, one line of evidence and one line
// of fix. Pure: cli/doctor gathers the facts (NVML, /proc, the state
// directory, the Python files) and renders the findings.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/cuda_visible.h"
#include "core/error.h"
#include "core/gpu.h"
#include "core/house_rules.h"
#include "core/leftovers.h"
#include "core/policy.h"
#include "core/probe_comparison.h"
#include "core/python_check.h"

namespace gpupin {

enum class Verdict { kOk, kWarn, kFail };

// "ok", "warn", "fail": the words of the table and of the JSON.
const char* VerdictName(Verdict verdict);

struct Finding {
  std::string check;  // stable id: "nvml", "persistence", ..., "python"
  Verdict verdict = Verdict::kOk;
  std::string evidence;  // one line: what was seen
  std::string fix;       // one line: what to do; empty when there is nothing to do
};

// Why a GPU process is left over, or nullopt when nothing says so: its
// gpupin job's lease says the holder is gone, it is stopped (state T), its
// parent is init (ppid 1: whoever started it has exited) or a zombie.
std::optional<std::string> LeftoverReason(bool gpupin_job_gone, char state, int ppid,
                                          std::optional<char> parent_state);

struct ContainerFacts {
  bool inside = false;
  // Whether the PIDs NVML reports (host PIDs) exist in our /proc; nullopt
  // when no GPU process was there to tell. See HostPidsVisible.
  std::optional<bool> host_pids_visible;
};

// When a card counts as busy: the exclusive defaults of the policy.
struct BusyThreshold {
  UsageLimit max_used{1ULL << 30, std::nullopt};
  std::optional<double> max_util_percent = 10;
};

// What the CUDA driver said about the caller's environment (doctor --probe).
struct DoctorProbe {
  std::string libcuda;
  ProbeResult result;
  ProbeComparison comparison;  // CompareProbe(resolution, result)
};

struct DoctorFacts {
  // Why NVML could not be loaded or initialised; the checks that need GPUs
  // are then left out, since this one failure explains them all.
  std::optional<std::string> nvml_error;
  Inventory inventory;
  VisibilityEnv env;              // the caller's
  Resolution resolution;          // ResolveVisibleDevices(inventory.gpus, env)
  std::string driver_order_file;  // where the driver's order in `resolution` was kept, if read
  std::optional<std::string> slurm_job_id;  // SLURM_JOB_ID, when in a Slurm job
  ContainerFacts container;
  BusyThreshold busy;
  std::vector<LeftoverProcess> leftovers;  // one per process (MergeLeftovers)
  bool as_root = false;                    // the caller: root sees every process NVML will list
  int expired_leases = 0;      // leases whose holder is gone or whose reservation ran out
  bool leases_unread = false;  // the state directory is there, but its leases could not be read
  std::string state_dir;
  std::optional<std::string> state_dir_problem;  // nullopt: safe
  // The directory does not exist (doctor does not create it); named: with
  // --state-dir or GPUPIN_STATE_DIR, where that is most likely a typo.
  bool state_dir_missing = false;
  bool state_dir_named = false;
  // Who kept the state lock for state_lock_held_ms, when someone did: "pid
  // 7 (nobody: flock)". The directory itself is sound then.
  std::optional<std::string> state_lock_holder;
  int64_t state_lock_held_ms = 0;
  // A user other than root who owns the directory or one of its folders
  // (the sticky bit does not stop an owner): "alice (uid 1000)".
  std::optional<std::string> state_dir_user_owner;
  HouseRules rules;                  // the admin's, for the ids of `reserved`
  std::optional<DoctorProbe> probe;  // only when asked for: loading libcuda is slow
  int python_files_checked = 0;
  std::vector<PythonFinding> python_findings;  // from CheckPythonFiles
};

// Every check, in a fixed order; Python findings last, one entry each.
std::vector<Finding> RunDoctorChecks(const DoctorFacts& facts);

// kNvmlUnavailable (exit 4) when NVML could not be loaded or initialised,
// as for every command; else kOk when no finding failed, and kError (exit 1)
// when one did.
ExitCode DoctorExitCode(const DoctorFacts& facts, const std::vector<Finding>& findings);

// Whether NVML's process ids exist here: all of them must (a few small host
// PIDs may exist by chance in a container). Nullopt when NVML lists none.
std::optional<bool> HostPidsVisible(const Inventory& inventory,
                                    const std::function<bool(uint32_t pid)>& pid_exists);

}  // namespace gpupin
