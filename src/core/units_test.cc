#include "core/units.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace gpupin {
namespace {

TEST(ParseSizeTest, BinaryUnits) {
  EXPECT_EQ(*ParseSize("24G"), 24ULL << 30);
  EXPECT_EQ(*ParseSize("500M"), 500ULL << 20);
  EXPECT_EQ(*ParseSize("5Gi"), 5ULL << 30);
  EXPECT_EQ(*ParseSize("1P"), 1ULL << 50);
  EXPECT_EQ(*ParseSize("2pib"), 2ULL << 50);
  EXPECT_EQ(*ParseSize("1.5GiB"), 3ULL << 29);
  EXPECT_EQ(*ParseSize("1024B"), 1024ULL);
  EXPECT_EQ(*ParseSize("0"), 0ULL);
  EXPECT_EQ(*ParseSize("2t"), 2ULL << 40);
}

TEST(ParseSizeTest, RejectsGarbageWithUsageError) {
  for (const char* bad : {"", "G", "-1G", "12X", "1e400", "nan"}) {
    auto result = ParseSize(bad);
    ASSERT_FALSE(result.ok()) << bad;
    EXPECT_EQ(result.error().code, ExitCode::kUsage);
    EXPECT_NE(result.error().message.find(bad), std::string::npos);
  }
}

TEST(ParseSizeTest, ASizeBeyondWhatABytesCountHoldsIsRefusedNotClamped) {
  EXPECT_EQ(*ParseSize("8191P"), 8191ULL << 50);
  for (const char* huge : {"9999999999999999999B", "8192P", "18446744073709551615B", "1e6P"}) {
    auto result = ParseSize(huge);
    ASSERT_FALSE(result.ok()) << huge << " gave " << *result;
    EXPECT_EQ(result.error().code, ExitCode::kUsage);
    EXPECT_EQ(result.error().message, fmt::format("size '{}' is too large: at most 8191P", huge));
  }
}

TEST(ParseSizeTest, ANumberWithoutAUnitIsRefused) {
  Result<uint64_t> bare = ParseSize("10");
  ASSERT_FALSE(bare.ok());
  EXPECT_EQ(bare.error().code, ExitCode::kUsage);
  EXPECT_EQ(bare.error().message, "size '10' has no unit; write e.g. 10G, 10M, or 10B for bytes");
}

TEST(ParsePercentTest, AcceptsWithOrWithoutSign) {
  EXPECT_DOUBLE_EQ(*ParsePercent("80%"), 80);
  EXPECT_DOUBLE_EQ(*ParsePercent("7.5"), 7.5);
  EXPECT_FALSE(ParsePercent("101").ok());
  EXPECT_FALSE(ParsePercent("ten").ok());
}

TEST(ParseDurationTest, UnitsAndPlainSeconds) {
  EXPECT_EQ(*ParseDurationMs("500ms"), 500);
  EXPECT_EQ(*ParseDurationMs("30s"), 30'000);
  EXPECT_EQ(*ParseDurationMs("1.5"), 1'500);
  EXPECT_EQ(*ParseDurationMs("5m"), 300'000);
  EXPECT_EQ(*ParseDurationMs("2h"), 7'200'000);
  EXPECT_EQ(*ParseDurationMs("1d"), 86'400'000);
  EXPECT_EQ(*ParseDurationMs("1000d"), int64_t{1000} * 86'400'000);
  EXPECT_FALSE(ParseDurationMs("1001d").ok());
  EXPECT_EQ(ParseDurationMs("soon").error().code, ExitCode::kUsage);
  EXPECT_FALSE(ParseDurationMs("-1s").ok());
  EXPECT_EQ(*ParseDurationMs("24000h"), int64_t{24000} * 3'600'000);
  for (const char* huge : {"1e10s", "2562047h", "1e300", "24001h"}) {
    ASSERT_FALSE(ParseDurationMs(huge).ok()) << huge;
    EXPECT_EQ(ParseDurationMs(huge).error().message,
              fmt::format("duration '{}' is over 1000 days", huge));
  }
}

using Texts = std::pair<std::string, std::string>;

TEST(FormatBytesTest, ApartWhereTheyWouldReadAlike) {
  EXPECT_EQ(FormatBytesApart(23ULL << 30, 1ULL << 30), Texts("23G", "1G"));
  EXPECT_EQ(FormatBytesApart(1025ULL << 20, 1ULL << 30), Texts("1025M", "1024M"));
  EXPECT_EQ(FormatBytesApart((1ULL << 30) + 1, 1ULL << 30), Texts("1073741825B", "1073741824B"));
  EXPECT_EQ(FormatBytesApart(1ULL << 30, 1ULL << 30), Texts("1G", "1G"));
}

TEST(FormatBytesTest, ShortHumanUnits) {
  EXPECT_EQ(FormatBytes(512), "512B");
  EXPECT_EQ(FormatBytes(80ULL << 30), "80G");
  EXPECT_EQ(FormatBytes(1536ULL << 20), "1.5G");
  EXPECT_EQ(FormatBytes(0), "0B");
}

}  // namespace
}  // namespace gpupin
