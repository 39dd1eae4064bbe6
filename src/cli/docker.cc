#include "cli/docker.h"

#include <fmt/format.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "cli/config_files.h"
#include "cli/launch.h"
#include "core/docker_args.h"
#include "core/job_env.h"
#include "core/units.h"
#include "out/json_value.h"
#include "sys/docker_client.h"
#include "sys/spawn.h"

namespace gpupin {
namespace {

struct DockerOptions {
  PolicyFlags policy;
  bool print = false;
  std::string ttl = "60s";
};

std::vector<std::string> ChosenUuids(const Acquired& acquired) { return acquired.lease.gpu_uuids; }

// A private directory for the container id file: docker refuses to write a
// --cidfile that exists, so the name must be fresh and ours alone.
class CidDirectory {
 public:
  CidDirectory() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "gpupin-docker.XXXXXX").string();
    if (mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~CidDirectory() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  bool ok() const { return !path_.empty(); }
  std::string file() const { return path_ + "/cid"; }

 private:
  std::string path_;
};

std::optional<std::string> ReadContainerId(const std::string& path) {
  std::ifstream in(path);
  std::string id;
  if (!(in >> id) || !IsContainerId(id)) return std::nullopt;
  return id;
}

// What a container on a shared card is started with, as `run` gives its
// job (doc/policy.md): not MPS's memory limit, which needs the MPS pipe
// inside the container.
std::vector<std::pair<std::string, std::string>> ContainerSettings(const Acquired& acquired) {
  if (!acquired.lease.shared_bytes) return {};
  return SharedCardSettings();
}

Result<int> PrintFlag(World& world, const DockerOptions& options, AcquireRequest request) {
  Result<int64_t> ttl = ParseReservationTtlMs(options.ttl);
  if (!ttl.ok()) return ttl.error();
  Result<ProcessIdentity> holder = IdentifyReservationHolder(world, std::nullopt);
  if (!holder.ok()) return holder.error();
  request.holder = *holder;
  request.shell = *holder;
  request.command = "docker --print (reserved for the next container)";
  request.reservation_ttl_ms = *ttl;
  Result<Acquired> acquired = AcquireGpus(world, request);
  if (!acquired.ok()) return acquired.error();
  const std::vector<std::string> flags =
      DockerFlags(ChosenUuids(*acquired), ContainerSettings(*acquired));
  if (world.options().json) {
    nlohmann::ordered_json out = AcquiredToJson(*acquired);
    out["docker_args"] = flags;
    std::printf("%s\n", JsonText(out).c_str());
  } else {
    // Quoted for a shell: the value of --gpus holds double quotes.
    std::string line = "--gpus '" + flags[1] + "'";
    for (size_t i = 2; i < flags.size(); ++i) line += " " + flags[i];
    std::printf("%s\n", line.c_str());
  }
  return 0;
}

Result<int> Docker(World& world, const DockerOptions& options, bool wait_given) {
  Result<AcquireRequest> request = MakeAcquireRequest(world, options.policy, wait_given);
  if (!request.ok()) return request.error();
  if (options.print) {
    if (!world.command_args().empty()) {
      return MakeError(ExitCode::kUsage,
                       "--print runs no docker command; drop the words after --, or drop --print");
    }
    return PrintFlag(world, options, std::move(*request));
  }
  const std::vector<std::string>& args = world.command_args();
  // Checked before anything is chosen, with placeholder devices: a command
  // gpupin cannot rewrite must not take a lease.
  Result<DockerInvocation> preview = RewriteDockerArgs(args, {"GPU"}, {}, "cid");
  if (!preview.ok()) return preview.error();
  // Nor a docker client that is not there (exit 127, as run's command).
  if (Status found = FindCommand("docker"); !found.ok()) return found.error();
  if (Status exported = world.ExportSimulatedServer(); !exported.ok()) return exported.error();
  CidDirectory cid_directory;
  if (!cid_directory.ok())
    return MakeError(ExitCode::kError,
                     "cannot create a temporary directory for docker's --cidfile");

  Result<PendingChild> client = CreatePendingChild();
  if (!client.ok()) return client.error();
  // A detached container outlives its client, so its lease is held by this
  // gpupin process until the container id is attached; an attached one
  // lives exactly as long as the client.
  if (preview->detached) {
    Result<ProcessIdentity> self = IdentifyProcess(world, getpid());
    if (!self.ok()) return self.error();
    request->holder = *self;
  } else {
    request->holder = client->identity();
  }
  request->shell = CallingShell(world);
  request->command = "docker " + LeaseCommand(args);
  Result<Acquired> acquired = AcquireGpus(world, *request);
  if (!acquired.ok()) return acquired.error();
  Result<DockerInvocation> invocation = RewriteDockerArgs(
      args, ChosenUuids(*acquired), ContainerSettings(*acquired), cid_directory.file());
  if (!invocation.ok()) return invocation.error();
  std::vector<std::string> argv = {"docker"};
  argv.insert(argv.end(), invocation->args.begin(), invocation->args.end());
  // stdout belongs to docker (a detached run prints its container id there).
  if (world.options().json) {
    nlohmann::ordered_json event = AcquiredToJson(*acquired);
    event["event"] = "start";
    event["docker_args"] = invocation->args;
    std::fprintf(stderr, "%s\n", JsonText(event, -1).c_str());
  } else {
    world.Note(fmt::format("docker gets {}", DescribeChosen(*acquired)));
  }
  if (invocation->creates_only) {
    world.Note(
        "warning: docker create does not start the container: the lease ends when docker create "
        "returns, and the container started later may share its cards with another job; "
        "gpupin docker -- run -d keeps a lease while the container runs");
  }
  Status started = client->Start(argv, {});
  if (!started.ok()) {
    std::fprintf(stderr, "gpupin: %s: docker\n", started.error().message.c_str());
    return 127;
  }
  int status = client->Wait();
  Result<LeaseStore*> store = world.Leases();
  if (!store.ok()) return store.error();
  std::optional<std::string> container;
  if (invocation->detached && status == 0 && invocation->cidfile)
    container = ReadContainerId(*invocation->cidfile);
  // The container's lease passes to a `docker wait` on it: a process of
  // this user that ends with the container, which every reader can check
  // in /proc like any holder, without asking docker or trusting the id.
  std::optional<ProcessIdentity> watch;
  if (container) {
    Result<int> started_watch = StartContainerWatch(invocation->prefix, *container);
    Result<ProcessIdentity> watcher =
        started_watch.ok() ? IdentifyProcess(world, *started_watch) : started_watch.error();
    if (watcher.ok()) {
      watch = *watcher;
    } else {
      world.Note(
          fmt::format("cannot follow container {}: {}; its lease was ended, and the "
                      "container runs on without one",
                      container->substr(0, 12), watcher.error().message));
    }
  }
  Status recorded = (*store)->Transact([&](LeaseTransaction& txn) -> Status {
    if (!watch) return txn.RemoveLease(acquired->lease.id);
    Lease lease = acquired->lease;
    lease.container_id = container;
    lease.holder = *watch;
    return txn.UpdateLease(lease);
  });
  if (!recorded.ok()) world.Note("could not update the lease: " + recorded.error().message);
  if (watch && recorded.ok() && world.options().json) {
    nlohmann::ordered_json event = {{"event", "container"},
                                    {"lease_id", acquired->lease.id},
                                    {"container_id", *container},
                                    {"holder_pid", watch->pid}};
    std::fprintf(stderr, "%s\n", JsonText(event, -1).c_str());
  }
  if (watch)
    world.Verbose(fmt::format("lease {} now follows container {} (held by docker wait, pid {})",
                              acquired->lease.id, container->substr(0, 12), watch->pid));
  if (invocation->detached && status == 0 && !container) {
    world.Note("docker did not write a container id; the GPUs were released");
  }
  return status;
}

}  // namespace

CommandSpec DockerCommand() {
  return {
      "docker",
      "run docker with --gpus set to GPUs chosen by the policy; the lease lasts while the "
      "client runs, or for run -d while the container does (a `docker wait` on it holds it)",
      [](CLI::App& app) {
        auto options = std::make_shared<DockerOptions>();
        AddPolicyOptions(app, options->policy);
        app.add_flag(
            "--print", options->print,
            "only print the --gpus flag (and for --mem the -e settings), quoted for a shell's "
            "eval, reserving the GPUs as pick does");
        app.add_option(
               "--ttl", options->ttl,
               "with --print: hold the reservation at most this long, more than 0 (default 60s)")
            ->option_text("DURATION");
        app.footer("Example: gpupin docker -n 2 -- run --rm -it pytorch/pytorch python train.py");
        return [options, &app](World& world) -> Result<int> {
          // Typed, it is a mistake; from a config file's defaults, it is
          // for --print and pick alone.
          if (!options->print &&
              TypedOnCommandLine(*app.get_option("--ttl"), world.config().command_line)) {
            return MakeError(ExitCode::kUsage,
                             "--ttl is for --print: without it the lease lasts as long as the "
                             "docker client, or the container of run -d");
          }
          return Docker(world, *options, app.count("--wait") > 0);
        };
      },
      /*runs_command=*/true,
      /*reads_every_command=*/false,
      /*usage_tail=*/"-- run|create [DOCKER OPTIONS] IMAGE [ARGS...]"};
}

}  // namespace gpupin
