// What gpupin asks the docker client (never the engine directly: the client
// knows the user's context and socket).
#pragma once

#include <optional>
#include <string>

namespace gpupin {

// Whether the container is running: true/false from `docker inspect`, false
// when docker says there is no such container or `container_id` is not an
// id, nullopt when docker cannot be asked (no client, daemon down, no answer
// within 3 s, or 6 s already spent on docker by this process): callers keep
// the lease then.
std::optional<bool> ContainerRunning(const std::string& container_id);

}  // namespace gpupin
