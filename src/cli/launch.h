// What pick, run, env and docker share around AcquireGpus: reading the
// policy flags into a request, and telling the user where a job landed.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/acquire.h"
#include "cli/policy_options.h"
#include "core/job_env.h"

namespace gpupin {

// Request, wait and poll settings from the flags; `wait_given` is whether
// --wait appeared at all (with or without a duration).
Result<AcquireRequest> MakeAcquireRequest(const World& world, const PolicyFlags& flags,
                                          bool wait_given);

// The --ttl of a reservation (pick, env, docker --print). 0 is refused: a
// reservation of no time holds nothing, and the next pick gets the same card.
Result<int64_t> ParseReservationTtlMs(const std::string& text);

// Identity of a process that must exist (the caller's shell for pick/env).
Result<ProcessIdentity> IdentifyProcess(const World& world, int pid);

// The process a reservation made now (pick, env, docker --print) follows:
// `given` (env --for), else the shell that will start the job
// (sys/procfs ReservationHolder), which -v names.
Result<ProcessIdentity> IdentifyReservationHolder(World& world, std::optional<int> given);

// The shell a pick run here would reserve for (see IdentifyReservationHolder),
// for `run` and `docker` to recognise its reservations as the caller's own.
std::optional<ProcessIdentity> CallingShell(const World& world);

// The environment a job started by gpupin gets for an acquired lease.
EnvChanges EnvironmentFor(const Acquired& acquired, bool uuids);

// "GPU 2 (NVIDIA RTX A6000, GPU-8932f937)": one line per chosen card.
std::string DescribeChosen(const Acquired& acquired);

// Per-card reasons, as `pick --explain` prints them.
std::string RenderVerdicts(const std::vector<CardVerdict>& verdicts);

// Per-card reasons, as JSON: [{"index", "eligible", "chosen", "reason"}, …].
nlohmann::ordered_json VerdictsToJson(const std::vector<CardVerdict>& verdicts);

// JSON for the outcome of a choice: chosen GPUs and per-card verdicts.
nlohmann::ordered_json AcquiredToJson(const Acquired& acquired);

}  // namespace gpupin
