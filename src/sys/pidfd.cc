#include "sys/pidfd.h"

#include <sys/syscall.h>
#include <unistd.h>

namespace gpupin {

int PidfdOpen(int pid) { return static_cast<int>(syscall(SYS_pidfd_open, pid, 0)); }

}  // namespace gpupin
