#include "sys/c_string_array.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>

namespace gpupin {
namespace {

TEST(CStringArrayTest, PointsAtEachStringAndEndsWithNull) {
  CStringArray array({"gpupin", "", "a string too long to be stored inside the string object"});
  ASSERT_EQ(array.size(), 3u);
  EXPECT_STREQ(array.data()[0], "gpupin");
  EXPECT_STREQ(array.data()[1], "");
  EXPECT_STREQ(array.data()[2], "a string too long to be stored inside the string object");
  EXPECT_EQ(array.data()[3], nullptr);
}

TEST(CStringArrayTest, EmptyIsJustTheTerminator) {
  CStringArray array;
  EXPECT_EQ(array.size(), 0u);
  EXPECT_EQ(array.data()[0], nullptr);
}

// Short strings live inside the string objects: a move must not leave the
// pointers aimed at the moved-from array.
TEST(CStringArrayTest, PointersSurviveAMove) {
  CStringArray original({"a", "b"});
  CStringArray moved(std::move(original));
  CStringArray assigned;
  assigned = std::move(moved);
  EXPECT_STREQ(assigned.data()[0], "a");
  EXPECT_STREQ(assigned.data()[1], "b");
  EXPECT_EQ(assigned.data()[2], nullptr);
}

TEST(CStringArrayTest, EnvironmentBlockJoinsNameAndValue) {
  CStringArray block = EnvironmentBlock({{"A", "1"}, {"EMPTY", ""}, {"PATH", "/bin:/usr/bin"}});
  ASSERT_EQ(block.size(), 3u);
  EXPECT_STREQ(block.data()[0], "A=1");
  EXPECT_STREQ(block.data()[1], "EMPTY=");
  EXPECT_STREQ(block.data()[2], "PATH=/bin:/usr/bin");
  EXPECT_EQ(block.data()[3], nullptr);
}

}  // namespace
}  // namespace gpupin
