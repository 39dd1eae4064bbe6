#include "core/error.h"

#include <gtest/gtest.h>

namespace gpupin {
namespace {

TEST(ResultTest, HoldsValueOrError) {
  Result<int> good = 3;
  ASSERT_TRUE(good.ok());
  EXPECT_EQ(*good, 3);
  Result<int> bad = MakeError(ExitCode::kNoGpu, "no GPU free");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, ExitCode::kNoGpu);
}

TEST(ErrorTest, ContextKeepsCodeAndPrefixesMessage) {
  Error e = MakeError(ExitCode::kNvmlUnavailable, "Driver Not Loaded");
  Error wrapped = e.WithContext("cannot initialise NVML");
  EXPECT_EQ(wrapped.code, ExitCode::kNvmlUnavailable);
  EXPECT_EQ(wrapped.message, "cannot initialise NVML: Driver Not Loaded");
}

TEST(ErrorTest, OfOptionIsAUsageErrorThatNamesTheOption) {
  Error refused = MakeError(ExitCode::kError, "invalid size 'lots'").OfOption("--max-used");
  EXPECT_EQ(refused.code, ExitCode::kUsage);
  EXPECT_EQ(refused.message, "--max-used: invalid size 'lots'");
  EXPECT_EQ(refused.option, "--max-used");
  EXPECT_EQ(refused.WithContext("pick").option, "--max-used");
  EXPECT_EQ(OptionError("--poll", "at least 10ms").message, "--poll: at least 10ms");
}

}  // namespace
}  // namespace gpupin
