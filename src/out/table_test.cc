#include "out/table.h"

#include <gtest/gtest.h>

#include "out/terminal.h"

namespace gpupin {
namespace {

TEST(TableTest, PadsColumnsAndAlignsNumbersRight) {
  Table table({{"GPU", Align::kRight}, {"NAME"}, {"MEM", Align::kRight}});
  table.AddRow({"0", "H100", "80G"});
  table.AddRow({"12", "A6000", "48G"});
  EXPECT_EQ(table.Render(),
            "GPU  NAME   MEM\n"
            "  0  H100   80G\n"
            " 12  A6000  48G\n");
}

TEST(TableTest, ColourCodesDoNotCountTowardsWidth) {
  Terminal colored(true, false, true, true);
  Table table({{"A"}, {"B"}});
  table.AddRow({colored.Paint("x", Color::kRed), "y"});
  EXPECT_EQ(table.Render(), "A  B\n\x1b[31mx\x1b[0m  y\n");
}

TEST(TableTest, NotesArePrintedVerbatimBetweenRows) {
  Table table({{"A"}, {"B"}});
  table.AddRow({"1", "2"});
  table.AddNote("   └ child");
  EXPECT_EQ(table.Render(), "A  B\n1  2\n   └ child\n");
}

TEST(DisplayWidthTest, CountsCodePointsNotBytes) {
  EXPECT_EQ(DisplayWidth("└─"), 2u);
  EXPECT_EQ(DisplayWidth("\x1b[1mab\x1b[0m"), 2u);
}

}  // namespace
}  // namespace gpupin
