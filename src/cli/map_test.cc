#include "cli/map.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gpupin {
namespace {

TEST(ParseCudaOrdinalTest, TakesCudaNOrN) {
  EXPECT_EQ(*ParseCudaOrdinal("cuda:0"), 0);
  EXPECT_EQ(*ParseCudaOrdinal("cuda:12"), 12);
  EXPECT_EQ(*ParseCudaOrdinal("3"), 3);
}

TEST(ParseCudaOrdinalTest, RefusesAnythingElseNamingIt) {
  for (const char* text : {"", "cuda:", "cuda:-1", "-1", "gpu1", "cuda:1x", "cuda1", " 1"}) {
    Result<int> ordinal = ParseCudaOrdinal(text);
    ASSERT_FALSE(ordinal.ok()) << text;
    EXPECT_EQ(ordinal.error().code, ExitCode::kUsage);
    EXPECT_THAT(ordinal.error().message, ::testing::HasSubstr(std::string("'") + text + "'"));
  }
}

}  // namespace
}  // namespace gpupin
