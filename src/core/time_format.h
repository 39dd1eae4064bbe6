// Wall-clock times as tables and messages print them ("since 14:05").
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace gpupin {

// Turns a time (milliseconds since the Unix epoch) into the text a user reads.
// Injected where messages mention times, so that tests can pin the time zone.
using ClockFormatter = std::function<std::string(int64_t unix_ms)>;

// "14:05" in the local time zone of this process (TZ, /etc/localtime).
std::string FormatLocalHourMinute(int64_t unix_ms);

// "14:05" in UTC: deterministic, for tests and logs.
std::string FormatUtcHourMinute(int64_t unix_ms);

}  // namespace gpupin
