#include "core/time_format.h"

#include <gtest/gtest.h>

namespace gpupin {
namespace {

TEST(TimeFormatTest, UtcHourMinute) {
  // 2024-01-02 14:05:59 UTC.
  EXPECT_EQ(FormatUtcHourMinute(1704204359000), "14:05");
  EXPECT_EQ(FormatUtcHourMinute(0), "00:00");
  // One millisecond before the epoch is still 23:59 of the day before.
  EXPECT_EQ(FormatUtcHourMinute(-1), "23:59");
}

TEST(TimeFormatTest, LocalHourMinuteHasTheSameShape) {
  std::string text = FormatLocalHourMinute(1704204359000);
  ASSERT_EQ(text.size(), 5u);
  EXPECT_EQ(text[2], ':');
}

}  // namespace
}  // namespace gpupin
