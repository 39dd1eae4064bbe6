#include "core/cpu_list.h"

#include <gtest/gtest.h>

#include <vector>

namespace gpupin {
namespace {

TEST(CpuListTest, EmptySetIsEmptyText) {
  std::vector<unsigned long> mask(4, 0);
  EXPECT_EQ(FormatCpuList(mask), "");
  EXPECT_EQ(FormatCpuList({}), "");
}

TEST(CpuListTest, SingleCpusAndRanges) {
  std::vector<unsigned long> mask = {0b1011'0001UL};
  EXPECT_EQ(FormatCpuList(mask), "0,4-5,7");
}

TEST(CpuListTest, RangesAcrossWords) {
  // CPUs 0-15 and 32-47 of the first word, 60-71 spanning into the second.
  std::vector<unsigned long> mask = {0xFFFFUL | (0xFFFFUL << 32) | (0xFUL << 60), 0xFFUL};
  EXPECT_EQ(FormatCpuList(mask), "0-15,32-47,60-71");
}

TEST(CpuListTest, LastCpuOfTheMask) {
  std::vector<unsigned long> mask = {0, 1UL << 63};
  EXPECT_EQ(FormatCpuList(mask), "127");
  std::vector<unsigned long> all = {~0UL, ~0UL};
  EXPECT_EQ(FormatCpuList(all), "0-127");
}

TEST(CpuListTest, FormatsASetOfIds) {
  EXPECT_EQ(FormatCpuIds({}), "");
  EXPECT_EQ(FormatCpuIds({0, 1, 2, 3, 8, 64, 65}), "0-3,8,64-65");
}

TEST(CpuListTest, ParsesTheKernelsListFormat) {
  using Ids = std::vector<uint32_t>;
  EXPECT_EQ(ParseCpuList(""), Ids{});
  EXPECT_EQ(ParseCpuList("7"), Ids{7});
  EXPECT_EQ(ParseCpuList("0-3,8"), (Ids{0, 1, 2, 3, 8}));
  EXPECT_EQ(ParseCpuList("8,0-1,1"), (Ids{0, 1, 8}));  // sorted, once each
  EXPECT_EQ(FormatCpuIds({0, 1, 2, 3, 8}), "0-3,8");
}

TEST(CpuListTest, RejectsMalformedLists) {
  for (const char* bad : {",", "0,", ",0", "a", "1-", "-1", "3-1", "0-1-2", "1 ", " 1", "0x1",
                          "65536", "0-4294967295", "99999999999999999999"}) {
    EXPECT_EQ(ParseCpuList(bad), std::nullopt) << bad;
  }
}

}  // namespace
}  // namespace gpupin
