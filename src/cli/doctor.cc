#include "cli/doctor.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>

#include "cli/cuda_numbering.h"
#include "cli/gpu_processes.h"
#include "cli/machine_state.h"
#include "core/doctor.h"
#include "core/printable.h"
#include "out/inventory_json.h"
#include "out/json_value.h"
#include "out/table.h"
#include "sys/cuda_probe.h"
#include "sys/environment.h"
#include "sys/procfs.h"
#include "sys/source_file.h"
#include "sys/state_dir.h"

namespace gpupin {
namespace {

using Json = nlohmann::ordered_json;

struct DoctorOptions {
  std::vector<std::string> python_files;
  bool probe = false;
};

// A --simulate file that is not a scenario is the command line's fault, as
// a mistyped Python file is, not the machine's: a usage error.
Status GatherNvml(World& world, DoctorFacts& facts) {
  Result<GpuSource*> gpus = world.Gpus();
  if (!gpus.ok()) {
    if (gpus.error().code == ExitCode::kUsage) return gpus.error();
    facts.nvml_error = gpus.error().message;
    return Ok{};
  }
  // What the checks read: busy cards, persistence mode, processes (left
  // over, or out of this PID namespace's sight) and, on mixed models, CUDA's
  // order unless this environment numbers in PCI order; not how the cards
  // are connected.
  GpuFacts wanted = gpu_facts::kMemory | gpu_facts::kUtilization | gpu_facts::kPersistenceMode |
                    gpu_facts::kProcesses;
  if (!FollowsPciBusOrder(VisibilityEnvFromProcess())) wanted |= gpu_facts::kCudaOrderIfMixed;
  Result<Inventory> inventory = (*gpus)->Snapshot(wanted);
  if (!inventory.ok()) {
    facts.nvml_error = inventory.error().message;
    return Ok{};
  }
  facts.inventory = std::move(*inventory);
  return Ok{};
}

// --probe: the driver asked with this environment, and where it was loaded from.
struct DriverAnswer {
  std::string libcuda;
  ProbeResult result;
};

Result<DriverAnswer> AskDriver(const World& world) {
  Result<std::string> libcuda = ProbeLibcudaPath(world);
  if (!libcuda.ok()) return libcuda.error();
  ProbeOptions options;
  options.libcuda_path = *libcuda;
  options.environment = ProcessEnvironment();
  Result<ProbeResult> probe = ProbeCuda(options);
  if (!probe.ok()) return probe.error();
  return DriverAnswer{*libcuda, std::move(*probe)};
}

void GatherEnvironment(World& world, const std::optional<DriverAnswer>& asked, DoctorFacts& facts) {
  std::map<std::string, std::string> environment = ProcessEnvironment();
  facts.env = VisibilityEnvFromMap(environment);
  if (auto it = environment.find("SLURM_JOB_ID"); it != environment.end())
    facts.slurm_job_id = it->second;
  // The driver's order where a ls or map kept it.
  CudaNumbering numbering(world, ProbePolicy::kKeptOnly);
  facts.resolution = numbering.Resolve(facts.inventory, facts.env);
  facts.driver_order_file = numbering.order_file();
  if (!asked) return;
  // --probe asked what ls's probe asks: as map --probe, it stands in for
  // that probe (with nothing kept, the model is its answer) and its answer
  // replaces what was kept, after being checked against it.
  if (NumbersEveryDeviceByDefault(environment) &&
      numbering.Adopt(facts.inventory, asked->result, asked->libcuda)) {
    facts.resolution = numbering.Resolve(facts.inventory, facts.env);
  }
  facts.probe = DoctorProbe{asked->libcuda, asked->result,
                            CompareProbe(facts.resolution, asked->result, facts.driver_order_file,
                                         numbering.replaced_kept_order())};
}

// Docker and podman leave a marker file; other runtimes show in our cgroup.
void GatherContainer(const World& world, DoctorFacts& facts) {
  std::error_code ec;
  facts.container.inside = std::filesystem::exists("/.dockerenv", ec) ||
                           std::filesystem::exists("/run/.containerenv", ec) ||
                           world.procfs().ContainerId(getpid()).has_value();
  facts.container.host_pids_visible = HostPidsVisible(facts.inventory, [&](uint32_t pid) {
    return world.procfs().Stat(static_cast<int>(pid)).has_value();
  });
}

void GatherLeftovers(const World& world, const std::optional<std::vector<Lease>>& leases,
                     const LivenessFacts& liveness, DoctorFacts& facts) {
  facts.leftovers =
      LeftoversOf(DescribeGpuProcessRows(facts.inventory, leases, liveness, world.procfs()),
                  static_cast<uint32_t>(getuid()));
}

// gpupin holds the state lock for milliseconds: longer, and every gpupin
// waits on a stopped process or a hostile `flock` (the message names it).
constexpr std::chrono::milliseconds kLockHeldTooLong{3000};

// The leases, read without changing them, from a state directory that
// exists; nullopt when they cannot be read, with the reason in `facts`.
std::optional<std::vector<Lease>> ReadLeasesUnchanged(World& world, DoctorFacts& facts) {
  Result<LeaseStore*> store = world.Leases();
  if (!store.ok()) {
    facts.state_dir_problem = store.error().message;
    return std::nullopt;
  }
  std::optional<std::vector<Lease>> leases;
  Result<bool> read = (*store)->TryTransact(
      [&](LeaseTransaction& txn) -> Status {
        leases = txn.ReadLeases();
        return Ok{};
      },
      kLockHeldTooLong);
  if (!read.ok()) {
    facts.state_dir_problem = read.error().message;
  } else if (!*read) {
    facts.state_lock_holder = (*store)->LockHolder();
    facts.state_lock_held_ms = kLockHeldTooLong.count();
  }
  return leases;
}

// Doctor looks, it does not clean up, nor create a state directory that
// does not exist.
void GatherLeases(World& world, DoctorFacts& facts) {
  facts.state_dir = ChooseStateDirPath(world.options().state_dir);
  facts.state_dir_named = world.options().state_dir.has_value();
  facts.state_dir_missing = world.StateDirMissing();
  LivenessFacts liveness = MakeLivenessFacts(facts.inventory, world.procfs());
  // The default directory not made yet holds no lease; a named one that
  // does not exist is most likely a typo for one that holds some.
  std::optional<std::vector<Lease>> leases;
  if (!facts.state_dir_missing) {
    leases = ReadLeasesUnchanged(world, facts);
  } else if (!facts.state_dir_named) {
    leases.emplace();
  }
  for (const char* folder : {"", "/leases", "/queue"}) {
    struct stat info {};
    if (lstat((facts.state_dir + folder).c_str(), &info) == 0 && info.st_uid != 0) {
      facts.state_dir_user_owner = fmt::format("{} (uid {})", UserName(info.st_uid), info.st_uid);
      break;
    }
  }
  facts.leases_unread = !leases && !facts.state_dir_missing;
  for (const Lease& lease : leases.value_or(std::vector<Lease>{})) {
    if (EvaluateLease(lease, liveness) != LeaseState::kLive) ++facts.expired_leases;
  }
  if (!facts.nvml_error) GatherLeftovers(world, leases, liveness, facts);
}

Status GatherPython(const std::vector<std::string>& paths, DoctorFacts& facts) {
  std::vector<PythonFile> files;
  for (const std::string& path : paths) {
    Result<std::string> text = ReadSourceFile(path);
    if (!text.ok()) return text.error();
    files.push_back({path, std::move(*text)});
  }
  PythonFileReader read_beside = [](const std::string& path) -> std::optional<std::string> {
    Result<std::string> text = ReadSourceFile(path);
    return text.ok() ? std::optional<std::string>(std::move(*text)) : std::nullopt;
  };
  facts.python_files_checked = static_cast<int>(files.size());
  facts.python_findings = CheckPythonFiles(files, read_beside);
  return Ok{};
}

Color VerdictColor(Verdict verdict) {
  switch (verdict) {
    case Verdict::kOk:
      return Color::kGreen;
    case Verdict::kWarn:
      return Color::kYellow;
    case Verdict::kFail:
      return Color::kRed;
  }
  return Color::kNone;
}

bool IsPythonProblem(const Finding& finding) {
  return finding.check == "python" && finding.verdict != Verdict::kOk;
}

// The table of checks, then each Python problem the way a compiler reports
// it (file:line: message), so editors can jump to it.
std::string Render(const std::vector<Finding>& findings, const Terminal& terminal) {
  Table table({{"CHECK"}, {"VERDICT"}, {"EVIDENCE"}});
  std::string python;
  int counts[3] = {0, 0, 0};
  for (const Finding& f : findings) {
    ++counts[static_cast<int>(f.verdict)];
    // Evidence quotes other users' commands (leftovers) and the driver's text.
    std::string fix = f.fix.empty() ? "" : "  fix: " + PrintableWhole(f.fix);
    if (IsPythonProblem(f)) {
      python += fmt::format("{}\n{}", f.evidence, fix.empty() ? "" : fix + "\n");
      continue;
    }
    table.AddRow({f.check, terminal.Paint(VerdictName(f.verdict), VerdictColor(f.verdict)),
                  PrintableWhole(f.evidence)});
    if (f.verdict != Verdict::kOk && !fix.empty()) table.AddNote(fix);
  }
  return table.Render() + python +
         fmt::format("{} ok, {} warn, {} fail\n", counts[0], counts[1], counts[2]);
}

Json ToJson(const std::vector<Finding>& findings, const DoctorFacts& facts) {
  Json items = Json::array();
  for (const Finding& f : findings) {
    items.push_back({{"check", f.check},
                     {"verdict", VerdictName(f.verdict)},
                     {"evidence", f.evidence},
                     {"fix", f.fix.empty() ? Json() : Json(f.fix)}});
  }
  Json python = Json::array();
  for (const PythonFinding& p : facts.python_findings) {
    python.push_back({{"path", p.path},
                      {"line", p.line},
                      {"kind", PythonFindingKindName(p.kind)},
                      {"message", p.message},
                      {"fix", p.fix.empty() ? Json(nullptr) : Json(p.fix)}});
  }
  return Json{{"schema_version", kJsonSchemaVersion},
              {"ok", DoctorExitCode(facts, findings) == ExitCode::kOk},
              {"findings", items},
              {"python", python}};
}

Result<int> Doctor(World& world, const DoctorOptions& options) {
  DoctorFacts facts;
  // Files first: a mistyped path is a usage error before any slow check.
  if (Status python = GatherPython(options.python_files, facts); !python.ok())
    return python.error();
  if (Status nvml = GatherNvml(world, facts); !nvml.ok()) return nvml.error();
  std::optional<DriverAnswer> asked;
  if (options.probe) {
    Result<DriverAnswer> answer = AskDriver(world);
    if (!answer.ok()) return answer.error();
    asked = std::move(*answer);
  }
  GatherEnvironment(world, asked, facts);
  GatherContainer(world, facts);
  GatherLeases(world, facts);
  facts.rules = world.rules();
  facts.as_root = geteuid() == 0;
  std::vector<Finding> findings = RunDoctorChecks(facts);
  if (world.options().json) {
    std::printf("%s\n", JsonText(ToJson(findings, facts)).c_str());
  } else {
    std::fputs(Render(findings, world.terminal()).c_str(), stdout);
  }
  return static_cast<int>(DoctorExitCode(facts, findings));
}

}  // namespace

CommandSpec DoctorCommand() {
  return {
      "doctor", "check the machine, the environment and Python files; name each fix",
      [](CLI::App& app) {
        auto options = std::make_shared<DoctorOptions>();
        app.add_option("files", options->python_files,
                       "Python files to check for CUDA_VISIBLE_DEVICES set after import "
                       "torch/tensorflow/jax, and nn.DataParallel without device_ids")
            ->option_text("FILE.py ...");
        app.add_flag("--probe", options->probe,
                     "also ask the CUDA driver (in a child process) how it numbers devices, "
                     "and compare with gpupin's model");
        app.footer(
            "Exit status: 0 when no check fails, 1 otherwise; 2 usage (an unreadable FILE.py or\n"
            "--simulate file); 4 when NVML cannot be loaded (the failed nvml check), or when\n"
            "--probe finds no simulated libcuda.\n"
            "Examples:\n"
            "  gpupin doctor                 the machine and this shell's environment\n"
            "  gpupin doctor train.py        also: is CUDA_VISIBLE_DEVICES set too late?\n"
            "  gpupin doctor --probe --json  with the driver's own numbering, as JSON");
        return [options](World& world) { return Doctor(world, *options); };
      }};
}

}  // namespace gpupin
