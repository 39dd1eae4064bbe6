#include "cli/number_checks.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace gpupin {
namespace {

std::string Check(const CLI::Validator& validator, std::string text) { return validator(text); }

TEST(WholeNumber, AcceptsTheRangeAndSaysWhatToWriteOtherwise) {
  CLI::Validator count = WholeNumber(1, 64);
  EXPECT_EQ(Check(count, "1"), "");
  EXPECT_EQ(Check(count, "64"), "");
  EXPECT_EQ(Check(count, "0"), "'0': write a whole number from 1 to 64");
  for (const char* bad : {"65", "-1", "abc", "1.5", "2x", "", " 3", "99999999999999999999"})
    EXPECT_EQ(Check(count, bad), fmt::format("'{}': write a whole number from 1 to 64", bad));
}

TEST(Seconds, AcceptsFractionsInTheRangeAndNothingElse) {
  CLI::Validator watch = Seconds(0.1, 86400);
  EXPECT_EQ(Check(watch, "0.5"), "");
  EXPECT_EQ(Check(watch, "86400"), "");
  for (const char* bad : {"0", "0.05", "86401", "1e300", "nan", "inf", "abc", "50ms", "2d", ""})
    EXPECT_EQ(Check(watch, bad),
              fmt::format("'{}': write a number of seconds from 0.1 to 86400, or a duration (2s, "
                          "500ms)",
                          bad));
}

TEST(Seconds, ADurationWithItsUnitBecomesItsSeconds) {
  CLI::Validator watch = Seconds(0.1, 86400);
  for (const auto& [given, seconds] : std::vector<std::pair<std::string, std::string>>{
           {"2s", "2"}, {"500ms", "0.5"}, {"1m", "60"}}) {
    std::string text = given;
    EXPECT_EQ(watch(text), "") << given;
    EXPECT_EQ(text, seconds) << given;
  }
}

}  // namespace
}  // namespace gpupin
