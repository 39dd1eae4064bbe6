// The selection options shared by pick, run, env and docker (doc/policy.md),
// declared once so every command reads them alike.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/policy.h"

namespace gpupin {

struct PolicyFlags {
  int count = 1;
  std::optional<std::string> mem;
  std::optional<std::string> max_used;
  std::optional<std::string> max_util;
  std::vector<std::string> only;
  std::vector<std::string> exclude;
  std::vector<std::string> order;
  const CLI::Option* order_option = nullptr;  // where --order is, as for near_option
  std::string prefer = "free";
  bool near = true;
  // Where --near/--no-near is: typed (or from a config file), it holds
  // beside --order; else an --order turns it off.
  const CLI::Option* near_option = nullptr;
  bool mine_free = false;
  std::optional<int> max_jobs;
  // Where --max-jobs is, to tell a typed value from a file's default.
  const CLI::Option* max_jobs_option = nullptr;
  bool uuid = false;
  // --wait[=DURATION]: absent means fail at once; present without a value
  // means wait forever.
  std::optional<std::string> wait;
  bool wait_given = false;
  std::string poll = "2s";
  std::string settle = "120s";
};

void AddPolicyOptions(CLI::App& app, PolicyFlags& flags);

// Validates sizes, percentages and choices; errors are ExitCode::kUsage.
Result<Request> ToRequest(const PolicyFlags& flags);

}  // namespace gpupin
