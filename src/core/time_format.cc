#include "core/time_format.h"

#include <fmt/format.h>

#include <array>
#include <ctime>

namespace gpupin {
namespace {

using Breakdown = std::tm* (*)(const time_t*, std::tm*);

// Floor division so that times before 1970 still land in the right minute.
time_t ToSeconds(int64_t unix_ms) {
  int64_t seconds = unix_ms / 1000;
  if (unix_ms % 1000 < 0) --seconds;
  return static_cast<time_t>(seconds);
}

// English month names whatever the locale: the rest of the output is English.
constexpr std::array<const char*, 12> kMonths = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                 "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

std::string Clock(int64_t unix_ms, int64_t now_unix_ms, Breakdown breakdown) {
  time_t seconds = ToSeconds(unix_ms);
  time_t now_seconds = ToSeconds(now_unix_ms);
  std::tm parts{};
  std::tm now_parts{};
  if (breakdown(&seconds, &parts) == nullptr || breakdown(&now_seconds, &now_parts) == nullptr)
    return "?";
  std::string hour_minute = fmt::format("{:02}:{:02}", parts.tm_hour, parts.tm_min);
  if (parts.tm_year == now_parts.tm_year && parts.tm_yday == now_parts.tm_yday) return hour_minute;
  std::string day =
      fmt::format("{} {}", kMonths.at(static_cast<size_t>(parts.tm_mon)), parts.tm_mday);
  if (parts.tm_year != now_parts.tm_year) day += fmt::format(" {}", parts.tm_year + 1900);
  return day + " " + hour_minute;
}

}  // namespace

std::string FormatLocalClock(int64_t unix_ms, int64_t now_unix_ms) {
  return Clock(unix_ms, now_unix_ms, localtime_r);
}

std::string FormatUtcClock(int64_t unix_ms, int64_t now_unix_ms) {
  return Clock(unix_ms, now_unix_ms, gmtime_r);
}

}  // namespace gpupin
