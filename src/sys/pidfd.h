// A descriptor that pins one process and turns readable when it exits
// (Linux 5.3+), through the raw syscall: glibc's wrapper is newer than some
// systems we run on.
#pragma once

namespace gpupin {

// pidfd_open(pid, 0): the descriptor (close-on-exec), or -1 with errno set
// (ESRCH: no such process; ENOSYS: an old kernel).
int PidfdOpen(int pid);

}  // namespace gpupin
