#include <cstdio>

int main() {
  std::puts("gpupin " GPUPIN_VERSION);
  return 0;
}
