#include "sys/mps.h"

#include <sys/stat.h>

#include <cstdlib>
#include <string>

namespace gpupin {

bool MpsRunning() {
  const char* dir = std::getenv("CUDA_MPS_PIPE_DIRECTORY");
  std::string control = std::string(dir && *dir ? dir : "/tmp/nvidia-mps") + "/control";
  struct stat info;
  return lstat(control.c_str(), &info) == 0 && (S_ISFIFO(info.st_mode) || S_ISSOCK(info.st_mode));
}

}  // namespace gpupin
