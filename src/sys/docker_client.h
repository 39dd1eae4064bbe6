// What gpupin asks the docker client (never the engine directly: the client
// knows the user's context and socket).
#pragma once

#include <string>
#include <vector>

#include "core/error.h"

namespace gpupin {

// Starts `docker PREFIX wait ID` in a session of its own (a closed terminal
// does not end it), its input and output on /dev/null, and returns its pid.
// It runs as long as the container, asking the daemon the container was
// started on (PREFIX: the words before `run`, such as `--context NAME`,
// `-H HOST` or `container`): a process of the container's user that can
// hold the container's lease.
Result<int> StartContainerWatch(const std::vector<std::string>& prefix,
                                const std::string& container_id);

}  // namespace gpupin
