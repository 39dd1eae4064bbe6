#include "sys/nvml/nvml_source.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gpupin {
namespace {

using testing::HasSubstr;

TEST(NvmlLibraryCandidatesTest, ExplicitPathIsTheOnlyCandidate) {
  NvmlOptions options{.library_path = "/opt/nvml/libnvidia-ml.so.1"};
  EXPECT_THAT(NvmlLibraryCandidates(options, "/from/env.so"),
              testing::ElementsAre("/opt/nvml/libnvidia-ml.so.1"));
}

TEST(NvmlLibraryCandidatesTest, EnvironmentComesNext) {
  EXPECT_THAT(NvmlLibraryCandidates({}, "/from/env.so"), testing::ElementsAre("/from/env.so"));
}

TEST(NvmlLibraryCandidatesTest, DefaultsPreferTheDriversSoname) {
  const std::vector<std::string> defaults = {"libnvidia-ml.so.1", "libnvidia-ml.so"};
  EXPECT_EQ(NvmlLibraryCandidates({}, nullptr), defaults);
  EXPECT_EQ(NvmlLibraryCandidates({}, ""), defaults);
}

TEST(OpenNvmlTest, MissingLibraryNamesThePathAndWhatToCheck) {
  auto source = OpenNvml({.library_path = "/nonexistent"});
  ASSERT_FALSE(source.ok());
  EXPECT_EQ(source.error().code, ExitCode::kNvmlUnavailable);
  EXPECT_EQ(static_cast<int>(source.error().code), 4);
  EXPECT_THAT(source.error().message, HasSubstr("/nonexistent"));
  EXPECT_THAT(source.error().message, HasSubstr("is the NVIDIA driver installed? Try nvidia-smi"));
  EXPECT_THAT(source.error().message, HasSubstr("--simulate FILE"));
  EXPECT_EQ(source.error().message.find('\n'), std::string::npos);
}

TEST(OpenNvmlTest, LibraryWithoutNvmlNamesTheMissingFunction) {
  // Any real shared library that is not NVML: the C math library.
  auto source = OpenNvml({.library_path = "libm.so.6"});
  ASSERT_FALSE(source.ok());
  EXPECT_EQ(source.error().code, ExitCode::kNvmlUnavailable);
  EXPECT_THAT(source.error().message, HasSubstr("libm.so.6"));
  EXPECT_THAT(source.error().message, HasSubstr("nvmlInit_v2 or nvmlInit"));
}

}  // namespace
}  // namespace gpupin
