// Rewriting a docker command line so the container gets the chosen GPUs:
// `--gpus '"device=UUID,UUID"'` goes in after `run`/`create`, with the inner
// quotes docker's CSV parser needs for more than one device.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/error.h"

namespace gpupin {

struct DockerInvocation {
  std::vector<std::string> args;  // for the docker client, without "docker"
  bool detached = false;          // run -d: the lease follows the container
  // create: the container does not run yet, and nothing will hold its lease
  // once the client returns.
  bool creates_only = false;
  // The words before run/create (`--context NAME`, `-H HOST`, `container`):
  // `docker PREFIX wait ID` asks the daemon the container runs on.
  std::vector<std::string> prefix;
  // Where the client writes the container id (ours, or the user's own --cidfile).
  std::optional<std::string> cidfile;
};

// The value of --gpus for these devices: "device=GPU-a,GPU-b" in double quotes.
std::string DockerGpusValue(const std::vector<std::string>& uuids);

// Whether `id` is what the docker client writes to --cidfile: 64 lowercase
// hex digits. Lease files are anyone's to write, and an id goes on a docker
// command line, so nothing else (an option such as "-f") may pass.
bool IsContainerId(std::string_view id);

// Inserts --gpus, `-e NAME=VALUE` for each of `settings` the command does
// not set itself (none beside an --env-file, whose names cannot be seen:
// the user's own value always wins), and, for a detached run without its
// own --cidfile, `--cidfile our_cidfile`. Usage errors: no run/create
// subcommand, or a --gpus of the user's own (gpupin chooses the GPUs).
Result<DockerInvocation> RewriteDockerArgs(
    const std::vector<std::string>& args, const std::vector<std::string>& uuids,
    const std::vector<std::pair<std::string, std::string>>& settings,
    const std::string& our_cidfile);

// `--gpus VALUE` and the `-e NAME=VALUE` of `settings`: what --print
// gives the user to put on a docker command line.
std::vector<std::string> DockerFlags(
    const std::vector<std::string>& uuids,
    const std::vector<std::pair<std::string, std::string>>& settings);

}  // namespace gpupin
