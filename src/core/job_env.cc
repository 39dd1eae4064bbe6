#include "core/job_env.h"

#include <fmt/format.h>

namespace gpupin {

const std::vector<std::pair<std::string, std::string>>& SharedCardSettings() {
  static const std::vector<std::pair<std::string, std::string>> kSettings = {
      {"XLA_PYTHON_CLIENT_PREALLOCATE", "false"}, {"TF_FORCE_GPU_ALLOW_GROWTH", "true"}};
  return kSettings;
}

EnvChanges JobEnvironment(const JobEnvRequest& request,
                          const std::map<std::string, std::string>& current) {
  EnvChanges changes;
  changes["CUDA_VISIBLE_DEVICES"] = request.cuda_visible_devices;
  changes["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID";
  if (!request.lease_id.empty()) changes["GPUPIN_LEASE_ID"] = request.lease_id;
  if (!request.shared_bytes) return changes;
  auto set_unless_user_did = [&](const std::string& name, std::string value) {
    if (!current.contains(name)) changes[name] = std::move(value);
  };
  for (const auto& [name, value] : SharedCardSettings()) set_unless_user_did(name, value);
  if (request.mps_running) {
    // Ordinals in this variable are the child's own cuda:N, one limit each.
    uint64_t mebibytes = (*request.shared_bytes + (1ULL << 20) - 1) >> 20;
    std::string limits;
    for (int ordinal = 0; ordinal < request.device_count; ++ordinal) {
      limits += fmt::format("{}{}={}M", ordinal == 0 ? "" : ",", ordinal, mebibytes);
    }
    set_unless_user_did("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT", limits);
  }
  return changes;
}

std::map<std::string, std::string> WithChanges(std::map<std::string, std::string> environment,
                                               const EnvChanges& changes) {
  for (const auto& [name, value] : changes) {
    if (value) {
      environment.insert_or_assign(name, *value);
    } else {
      environment.erase(name);
    }
  }
  return environment;
}

}  // namespace gpupin
