// The environment a job starts with: which GPUs it sees and, for a shared
// card, the framework settings that stop a job from taking the whole card
// (doc/policy.md, shared cards).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gpupin {

// Environment edits for a child: a value sets, nullopt unsets.
using EnvChanges = std::map<std::string, std::optional<std::string>>;

struct JobEnvRequest {
  std::string cuda_visible_devices;      // what the child sees, already formatted
  std::optional<uint64_t> shared_bytes;  // set for --mem requests
  int device_count = 1;
  bool mps_running = false;
  std::string lease_id;
};

// The framework settings a job on a shared card gets unless its user set
// them: stop JAX and TensorFlow from taking the whole card at start.
const std::vector<std::pair<std::string, std::string>>& SharedCardSettings();

// `current` is the caller's environment: a value the user set themselves
// for a framework knob always wins over ours. CUDA_VISIBLE_DEVICES and
// CUDA_DEVICE_ORDER are always ours, since they carry the decision.
EnvChanges JobEnvironment(const JobEnvRequest& request,
                          const std::map<std::string, std::string>& current);

// `environment` with the changes made: set, replaced or removed.
std::map<std::string, std::string> WithChanges(std::map<std::string, std::string> environment,
                                               const EnvChanges& changes);

}  // namespace gpupin
