#include "core/printable.h"

#include <gtest/gtest.h>

#include <string>

namespace gpupin {
namespace {

TEST(PrintableTest, ControlCharactersCannotReachTheTerminal) {
  EXPECT_EQ(Printable("bob\x1b[2J\nrm\x7f\t"), "bob?[2J?rm??");
}

TEST(PrintableTest, LongTextIsCutWithAMark) {
  EXPECT_EQ(Printable("abcdef", 3), "abc...");
  EXPECT_EQ(Printable("abc", 3), "abc");
  EXPECT_EQ(Printable(std::string(300, 'x')).size(), 203u);
}

TEST(PrintableTest, ACutNeverSplitsAUtf8Sequence) {
  // "été": the cut at 2 bytes would fall inside the first "é".
  EXPECT_EQ(Printable("\xc3\xa9t\xc3\xa9", 1), "...");
  EXPECT_EQ(Printable("\xc3\xa9t\xc3\xa9", 2), "\xc3\xa9...");
  EXPECT_EQ(Printable("\xc3\xa9t\xc3\xa9", 4), "\xc3\xa9t...");
  EXPECT_EQ(Printable("\xc3\xa9t\xc3\xa9", 5), "\xc3\xa9t\xc3\xa9");
}

}  // namespace
}  // namespace gpupin
