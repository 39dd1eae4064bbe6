#include "cli/version.h"

#include <gtest/gtest.h>

namespace gpupin {
namespace {

TEST(VersionLine, ProjectVersionAlone) { EXPECT_EQ(VersionLine("1.2.3", ""), "gpupin 1.2.3"); }

TEST(VersionLine, GitDescriptionInParentheses) {
  EXPECT_EQ(VersionLine("1.2.3", "v1.2.3-4-gabc1234-dirty"),
            "gpupin 1.2.3 (v1.2.3-4-gabc1234-dirty)");
}

}  // namespace
}  // namespace gpupin
