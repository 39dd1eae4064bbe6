#include "core/docker_args.h"

#include <set>

#include "core/hex.h"

namespace gpupin {
namespace {

// docker run/create options that take a separate value: needed to tell an
// option's value from the image name, where the client's own options end.
const std::set<std::string>& OptionsWithValues() {
  static const std::set<std::string> options = {"-a",
                                                "--attach",
                                                "--add-host",
                                                "--blkio-weight",
                                                "--cap-add",
                                                "--cap-drop",
                                                "--cgroup-parent",
                                                "--cgroupns",
                                                "--cidfile",
                                                "--cpu-period",
                                                "--cpu-quota",
                                                "--cpu-shares",
                                                "-c",
                                                "--cpus",
                                                "--cpuset-cpus",
                                                "--cpuset-mems",
                                                "--device",
                                                "--device-cgroup-rule",
                                                "--dns",
                                                "--dns-option",
                                                "--dns-search",
                                                "--domainname",
                                                "--entrypoint",
                                                "-e",
                                                "--env",
                                                "--env-file",
                                                "--expose",
                                                "--gpus",
                                                "--group-add",
                                                "--health-cmd",
                                                "--health-interval",
                                                "--health-retries",
                                                "--health-start-period",
                                                "--health-timeout",
                                                "-h",
                                                "--hostname",
                                                "--ip",
                                                "--ip6",
                                                "--ipc",
                                                "--isolation",
                                                "--kernel-memory",
                                                "-l",
                                                "--label",
                                                "--label-file",
                                                "--link",
                                                "--log-driver",
                                                "--log-opt",
                                                "--mac-address",
                                                "-m",
                                                "--memory",
                                                "--memory-reservation",
                                                "--memory-swap",
                                                "--memory-swappiness",
                                                "--mount",
                                                "--name",
                                                "--network",
                                                "--net",
                                                "--network-alias",
                                                "--oom-score-adj",
                                                "--pid",
                                                "--pids-limit",
                                                "--platform",
                                                "-p",
                                                "--publish",
                                                "--pull",
                                                "--restart",
                                                "--runtime",
                                                "--security-opt",
                                                "--shm-size",
                                                "--stop-signal",
                                                "--stop-timeout",
                                                "--storage-opt",
                                                "--sysctl",
                                                "--tmpfs",
                                                "--ulimit",
                                                "-u",
                                                "--user",
                                                "--userns",
                                                "--uts",
                                                "-v",
                                                "--volume",
                                                "--volume-driver",
                                                "--volumes-from",
                                                "-w",
                                                "--workdir"};
  return options;
}

std::string NameOf(const std::string& option) { return option.substr(0, option.find('=')); }

// The docker client's own options (before the command) that take a value,
// so that a value spelt "run" (`-H run run`, a context named run) is not
// taken for the command.
bool ClientOptionTakesValue(const std::string& arg) {
  static const std::set<std::string> kWithValue = {
      "--config", "-c",          "--context",   "-H",        "--host",
      "-l",       "--log-level", "--tlscacert", "--tlscert", "--tlskey"};
  return arg.find('=') == std::string::npos && kWithValue.contains(arg);
}

// Where the run/create command is: past the client's options and their
// values, and an optional `container` (`docker container run`).
std::optional<size_t> SubcommandPosition(const std::vector<std::string>& args) {
  size_t i = 0;
  while (i < args.size() && args[i].starts_with("-")) i += ClientOptionTakesValue(args[i]) ? 2 : 1;
  if (i < args.size() && args[i] == "container") ++i;
  if (i < args.size() && (args[i] == "run" || args[i] == "create")) return i;
  return std::nullopt;
}

bool IsDetachFlag(const std::string& arg) {
  if (arg == "--detach" || arg == "--detach=true" || arg == "-d=true") return true;
  // Combined short flags such as -dit; a value-taking letter ends the group.
  if (arg.size() < 2 || arg[0] != '-' || arg[1] == '-') return false;
  for (size_t i = 1; i < arg.size(); ++i) {
    if (arg[i] == 'd') return true;
    if (OptionsWithValues().contains(std::string("-") + arg[i]) || arg[i] == '=') return false;
  }
  return false;
}

}  // namespace

std::string DockerGpusValue(const std::vector<std::string>& uuids) {
  std::string devices;
  for (const std::string& uuid : uuids) devices += (devices.empty() ? "" : ",") + uuid;
  return "\"device=" + devices + "\"";
}

std::vector<std::string> DockerFlags(
    const std::vector<std::string>& uuids,
    const std::vector<std::pair<std::string, std::string>>& settings) {
  std::vector<std::string> flags = {"--gpus", DockerGpusValue(uuids)};
  for (const auto& [name, value] : settings) {
    flags.emplace_back("-e");
    flags.push_back(name);
    flags.back().append("=").append(value);
  }
  return flags;
}

Result<DockerInvocation> RewriteDockerArgs(
    const std::vector<std::string>& args, const std::vector<std::string>& uuids,
    const std::vector<std::pair<std::string, std::string>>& settings,
    const std::string& our_cidfile) {
  std::optional<size_t> subcommand = SubcommandPosition(args);
  if (!subcommand) {
    return MakeError(ExitCode::kUsage,
                     "gpupin docker needs a `docker run` or `docker create` command, e.g. gpupin "
                     "docker -- run IMAGE");
  }
  DockerInvocation invocation;
  size_t position = *subcommand + 1;
  std::set<std::string> user_env;  // names the command sets itself
  bool env_file = false;
  // Only the client's options, up to the image name, are docker's; what
  // follows the image belongs to the container's command.
  for (size_t i = position; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--" || arg.empty() || arg[0] != '-') break;
    std::string name = NameOf(arg);
    if (name == "--gpus") {
      return MakeError(ExitCode::kUsage,
                       "remove --gpus from the docker command; gpupin chooses the GPUs");
    }
    if (name == "--cidfile") {
      if (arg.find('=') != std::string::npos) {
        invocation.cidfile = arg.substr(arg.find('=') + 1);
      } else if (i + 1 < args.size()) {
        invocation.cidfile = args[i + 1];
      }
    }
    if (name == "--env-file") env_file = true;
    // -e NAME, -e NAME=VALUE, -eNAME=VALUE, --env NAME=VALUE, --env=NAME=VALUE
    std::optional<std::string> assignment;
    if ((arg == "-e" || arg == "--env") && i + 1 < args.size()) {
      assignment = args[i + 1];
    } else if (arg.starts_with("--env=")) {
      assignment = arg.substr(6);
    } else if (arg.starts_with("-e") && arg.size() > 2 && arg[1] == 'e') {
      assignment = arg.substr(arg[2] == '=' ? 3 : 2);
    }
    if (assignment) user_env.insert(NameOf(*assignment));
    if (IsDetachFlag(arg)) invocation.detached = true;
    if (arg.find('=') == std::string::npos && OptionsWithValues().contains(name)) ++i;
  }
  std::vector<std::pair<std::string, std::string>> ours;
  if (!env_file) {
    for (const auto& setting : settings) {
      if (!user_env.contains(setting.first)) ours.push_back(setting);
    }
  }
  std::vector<std::string> inserted = DockerFlags(uuids, ours);
  if (invocation.detached && !invocation.cidfile) {
    invocation.cidfile = our_cidfile;
    inserted.insert(inserted.end(), {"--cidfile", our_cidfile});
  }
  invocation.creates_only = args[*subcommand] == "create";
  invocation.prefix.assign(args.begin(), args.begin() + static_cast<long>(*subcommand));
  invocation.args.assign(args.begin(), args.begin() + static_cast<long>(position));
  invocation.args.insert(invocation.args.end(), inserted.begin(), inserted.end());
  invocation.args.insert(invocation.args.end(), args.begin() + static_cast<long>(position),
                         args.end());
  return invocation;
}

bool IsContainerId(std::string_view id) { return IsLowerHex(id, 64); }

}  // namespace gpupin
