#include "core/time_format.h"

#include <gtest/gtest.h>

namespace gpupin {
namespace {

constexpr int64_t k1405Utc = 1704204359000;  // 2024-01-02 14:05:59 UTC
constexpr int64_t kHour = 3600 * 1000;

TEST(TimeFormatTest, SameDayIsHourMinute) {
  EXPECT_EQ(FormatUtcClock(k1405Utc, k1405Utc), "14:05");
  EXPECT_EQ(FormatUtcClock(k1405Utc, k1405Utc + 9 * kHour), "14:05");
  EXPECT_EQ(FormatUtcClock(0, 0), "00:00");
}

TEST(TimeFormatTest, AnotherDayNamesTheDay) {
  EXPECT_EQ(FormatUtcClock(k1405Utc + 24 * kHour, k1405Utc), "Jan 3 14:05");
  EXPECT_EQ(FormatUtcClock(k1405Utc - 24 * kHour, k1405Utc), "Jan 1 14:05");
  // Midnight is a new day, even a minute later.
  EXPECT_EQ(FormatUtcClock(k1405Utc + 10 * kHour, k1405Utc), "Jan 3 00:05");
}

TEST(TimeFormatTest, AnotherYearNamesTheYear) {
  EXPECT_EQ(FormatUtcClock(k1405Utc - 2 * 24 * kHour, k1405Utc), "Dec 31 2023 14:05");
  // One millisecond before the epoch is still 23:59 of the day before.
  EXPECT_EQ(FormatUtcClock(-1, 0), "Dec 31 1969 23:59");
}

TEST(TimeFormatTest, LocalClockHasTheSameShape) {
  std::string today = FormatLocalClock(k1405Utc, k1405Utc);
  ASSERT_EQ(today.size(), 5u);
  EXPECT_EQ(today[2], ':');
  // Two days on is another day in every time zone.
  EXPECT_EQ(FormatLocalClock(k1405Utc + 48 * kHour, k1405Utc).substr(0, 4), "Jan ");
}

}  // namespace
}  // namespace gpupin
