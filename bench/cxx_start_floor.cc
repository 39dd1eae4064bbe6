// The least a C++ program linked as gpupin is (C++ runtime linked in, PIE)
// pays to start, print one line and exit. bench/ls_vs_floor.sh times it
// beside /bin/true and `gpupin --version`, so that what any such program
// pays at start shows apart from what gpupin's own start costs.
#include <cstdio>
#include <locale>
#include <string>

int main(int argc, char** argv) {
  // gpupin's command-line parser builds a std::locale for its first option,
  // which sets up the C++ runtime's locale data: every gpupin command pays it.
  const std::locale locale;
  const std::string line = std::string(argc > 0 ? argv[0] : "cxx_start_floor") +
                           (std::isalpha('a', locale) ? " started\n" : " no locale\n");
  return std::fputs(line.c_str(), stdout) < 0 ? 1 : 0;
}
