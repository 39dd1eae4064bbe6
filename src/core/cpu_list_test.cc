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

}  // namespace
}  // namespace gpupin
