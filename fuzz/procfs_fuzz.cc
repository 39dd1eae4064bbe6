// Arbitrary bytes as each /proc file gpupin reads (stat, status, cmdline,
// environ, cgroup, uptime, a directory name): no crash, and what comes out
// keeps the promises of sys/procfs_parse.h.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "sys/procfs_parse.h"

namespace {

void Check(bool condition) {
  if (!condition) std::abort();
}

bool IsLowerHex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gpupin;
  std::string_view text(reinterpret_cast<const char*>(data), size);

  if (std::optional<ProcessStat> stat = ParseStat(4242, text)) {
    Check(stat->pid == 4242);
    Check(stat->state != ' ' && stat->state != '\t' && stat->state != '\n');
    Check(text.find(')') != std::string_view::npos);
  }

  ParseStatusUid(text);

  std::string cmdline = ParseCmdline(text);
  Check(cmdline.size() <= text.size());
  Check(cmdline.find('\0') == std::string::npos);
  // The arguments, put back together, are the file up to its padding.
  std::string rejoined;
  for (const std::string& argument : ParseArgv(text)) {
    Check(argument.find('\0') == std::string::npos);
    rejoined += argument + '\0';
  }
  std::string_view unpadded = text.substr(0, text.find_last_not_of('\0') + 1);
  Check(rejoined == std::string(unpadded) + (unpadded.empty() ? "" : std::string(1, '\0')));

  for (const auto& [name, value] : ParseEnviron(text)) {
    Check(!name.empty());
    Check(name.find('=') == std::string::npos && name.find('\0') == std::string::npos);
    Check(value.find('\0') == std::string::npos);
  }

  if (std::optional<std::string> id = ParseCgroupContainerId(text)) {
    Check(id->size() == 64);
    for (char c : *id) Check(IsLowerHex(c));
    Check(text.find(*id) != std::string_view::npos);
  }

  // At 100 Hz a tick is a hundredth: the same text read at 1 Hz gives the
  // whole seconds.
  if (std::optional<uint64_t> ticks = ParseUptimeTicks(text, 100)) {
    std::optional<uint64_t> seconds = ParseUptimeTicks(text, 1);
    Check(seconds && *seconds == *ticks / 100);
  }

  if (std::optional<int> pid = ParsePid(text)) Check(*pid > 0);
  return 0;
}
