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

}  // namespace
}  // namespace gpupin
