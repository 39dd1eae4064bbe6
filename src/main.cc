#include <cstdlib>

#include "cli/commands.h"

int main(int argc, char** argv) {
#ifdef GPUPIN_TEST_ADMIN_CONFIG_VARIABLE
  // gpupin-testing only (never installed): the e2e tests give each test its
  // own admin file, since they must not write the machine's /etc.
  if (const char* file = std::getenv(GPUPIN_TEST_ADMIN_CONFIG_VARIABLE); file && *file)
    return gpupin::Dispatch(argc, argv, file);
#endif
  return gpupin::Dispatch(argc, argv, GPUPIN_ADMIN_CONFIG);
}
