// Whether a process exists only to run one command and ends with it:
// `timeout 30 gpupin pick`, `sudo gpupin pick`, or a `sh -c 'gpupin pick'`
// (what Python's shell=True and os.popen start; dash forks rather than execs
// its last command). A reservation held by such a wrapper would end as soon
// as gpupin's output is read, so its holder is looked for above it. Pure:
// the arguments come from /proc/PID/cmdline (sys/procfs).
#pragma once

#include <string>
#include <vector>

namespace gpupin {

// True when `parent` (a process's arguments) only runs `child` (the
// arguments of its child): its arguments end with all of the child's, or it
// is a shell whose `-c` script is exactly the child's command. Anything more
// (a `;`, a redirection, a variable) is a script that may go on to run the
// job, and is not a wrapper.
bool OnlyRunsCommand(const std::vector<std::string>& parent, const std::vector<std::string>& child);

}  // namespace gpupin
