#include "core/hex.h"

#include <gtest/gtest.h>

#include <string>

namespace gpupin {
namespace {

TEST(IsLowerHex, ExactlyThatManyLowercaseDigits) {
  EXPECT_TRUE(IsLowerHex("0123456789abcdef", 16));
  EXPECT_TRUE(IsLowerHex("", 0));
  EXPECT_FALSE(IsLowerHex("0123456789abcdef", 15)) << "too long";
  EXPECT_FALSE(IsLowerHex("0123456789abcde", 16)) << "too short";
  EXPECT_FALSE(IsLowerHex("0123456789ABCDEF", 16)) << "uppercase";
  EXPECT_FALSE(IsLowerHex("0123456789abcdeg", 16));
  EXPECT_FALSE(IsLowerHex(std::string("01234567\0"
                                      "9abcdef",
                                      16),
                          16))
      << "a NUL inside";
  EXPECT_FALSE(IsLowerHex("0123456789abcde/", 16));
}

}  // namespace
}  // namespace gpupin
