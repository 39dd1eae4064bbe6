#include "core/printable.h"

#include <gtest/gtest.h>

#include <string>

namespace gpupin {
namespace {

TEST(PrintableTest, ControlCharactersCannotReachTheTerminal) {
  EXPECT_EQ(Printable("bob\x1b[2J\nrm\x7f\t"), "bob?[2J?rm??");
}

TEST(PrintableTest, UnicodeControlsAndBrokenUtf8CannotReachTheTerminalEither) {
  // U+009B (CSI), U+0085 (next line), U+2028 (line separator), U+202E
  // (right-to-left override), U+2066 (isolate), U+200F (RLM).
  EXPECT_EQ(Printable("a\u009b2Jb\u0085c\u2028d\u202ee\u2066f\u200fg"), "a?2Jb?c?d?e?f?g");
  // U+00AD (soft hyphen) is invisible on most terminals: "ro\u00adot" would
  // pass for "root".
  EXPECT_EQ(Printable("ro\u00adot"), "ro?ot");
  // So are zero width spaces and joiners, the byte order mark, invisible
  // operators, Hangul fillers, variation selectors and tags.
  EXPECT_EQ(Printable("r\u200bo\u200do\ufefft\u2060 \u3164\u115f\ufe0f\U000E0041\U000E0001."),
            "r?o?o?t? ?????.");
  EXPECT_EQ(Printable("a\U000E0100b\U0001D173c\ufff9d\U0001BCA0e\U000E0FFFf"), "a?b?c?d?e?f");
  // A lone C1 byte (a CSI under an 8-bit terminal), a truncated sequence,
  // an overlong "/", a surrogate, a byte never in UTF-8.
  EXPECT_EQ(Printable("a\x9b"
                      "b\xc3"
                      "c\xc0\xaf"
                      "d\xed\xa0\x80"
                      "e\xff"),
            "a?b?c??d???e?");
  // Ordinary text beyond ASCII is kept.
  EXPECT_EQ(Printable("J\u00fcrgen \u4e2d\u6587 \U0001F680"),
            "J\u00fcrgen \u4e2d\u6587 \U0001F680");
}

TEST(PrintableTest, LongTextIsCutWithAMark) {
  EXPECT_EQ(Printable("abcdef", 3), "abc...");
  EXPECT_EQ(Printable("abc", 3), "abc");
  EXPECT_EQ(Printable(std::string(300, 'x')).size(), 203u);
}

TEST(PrintableTest, WholeTextIsNeverCutButStillEscaped) {
  const std::string long_line(300, 'x');
  EXPECT_EQ(PrintableWhole(long_line), long_line);
  EXPECT_EQ(PrintableWhole(long_line + "\x1b]0;owned\a"), long_line + "?]0;owned?");
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
