// Wall-clock times as tables and messages print them ("since 14:05").
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace gpupin {

// Turns a time (milliseconds since the Unix epoch) into the text a user
// reads on the day of now_unix_ms. Injected where messages mention times, so
// that tests can pin the time zone.
using ClockFormatter = std::function<std::string(int64_t unix_ms, int64_t now_unix_ms)>;

// "14:05" in the local time zone of this process (TZ, /etc/localtime) when
// unix_ms falls on the same day as now_unix_ms; "Dec 5 14:05" on any other
// day, so that a lease from last week or a reservation until tomorrow does
// not read as today.
std::string FormatLocalClock(int64_t unix_ms, int64_t now_unix_ms);

// The same in UTC: deterministic, for tests.
std::string FormatUtcClock(int64_t unix_ms, int64_t now_unix_ms);

}  // namespace gpupin
