#include "core/time_format.h"

#include <fmt/format.h>

#include <ctime>

namespace gpupin {
namespace {

// Floor division so that times before 1970 still land in the right minute.
time_t ToSeconds(int64_t unix_ms) {
  int64_t seconds = unix_ms / 1000;
  if (unix_ms % 1000 < 0) --seconds;
  return static_cast<time_t>(seconds);
}

std::string HourMinute(const std::tm& parts) {
  return fmt::format("{:02}:{:02}", parts.tm_hour, parts.tm_min);
}

}  // namespace

std::string FormatLocalHourMinute(int64_t unix_ms) {
  time_t seconds = ToSeconds(unix_ms);
  std::tm parts{};
  if (localtime_r(&seconds, &parts) == nullptr) return "?";
  return HourMinute(parts);
}

std::string FormatUtcHourMinute(int64_t unix_ms) {
  time_t seconds = ToSeconds(unix_ms);
  std::tm parts{};
  if (gmtime_r(&seconds, &parts) == nullptr) return "?";
  return HourMinute(parts);
}

}  // namespace gpupin
