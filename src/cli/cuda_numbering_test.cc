#include "cli/cuda_numbering.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

namespace gpupin {
namespace {

using ::testing::Contains;
using ::testing::Key;
using ::testing::Not;
using ::testing::Pair;

// The variables gpupin itself was started with, set for one test.
class OwnVariables {
 public:
  OwnVariables(std::initializer_list<std::pair<const char*, const char*>> variables) {
    for (const auto& [name, value] : variables) {
      names_.push_back(name);
      setenv(name, value, 1);
    }
  }
  ~OwnVariables() {
    for (const char* name : names_) unsetenv(name);
  }

 private:
  std::vector<const char*> names_;
};

TEST(ProbeEnvironmentTest, TakesOnlyTheNumberingVariablesOfTheExaminedEnvironment) {
  OwnVariables own({{"GPUPIN_TEST_OWN", "kept"}});
  std::map<std::string, std::string> probe =
      ProbeEnvironment({{"CUDA_VISIBLE_DEVICES", "1,0"},
                        {"CUDA_DEVICE_ORDER", "PCI_BUS_ID"},
                        {"CUDA_INJECTION64_PATH", "/tmp/theirs.so"},
                        {"CUDA_MODULE_LOADING", "EAGER"},
                        {"LD_PRELOAD", "/tmp/theirs.so"}});
  EXPECT_THAT(probe, Contains(Pair("CUDA_VISIBLE_DEVICES", "1,0")));
  EXPECT_THAT(probe, Contains(Pair("CUDA_DEVICE_ORDER", "PCI_BUS_ID")));
  EXPECT_THAT(probe, Contains(Pair("GPUPIN_TEST_OWN", "kept")));
  EXPECT_THAT(probe, Not(Contains(Key("CUDA_INJECTION64_PATH"))));
  EXPECT_THAT(probe, Not(Contains(Key("CUDA_MODULE_LOADING"))));
  EXPECT_THAT(probe, Not(Contains(Pair("LD_PRELOAD", "/tmp/theirs.so"))));
}

TEST(ProbeEnvironmentTest, LeavesOutGpupinsOwnCudaVariables) {
  OwnVariables own({{"CUDA_VISIBLE_DEVICES", "3"}, {"CUDA_INJECTION64_PATH", "/tmp/mine.so"}});
  std::map<std::string, std::string> probe = ProbeEnvironment({});
  EXPECT_THAT(probe, Not(Contains(Key("CUDA_VISIBLE_DEVICES"))));
  EXPECT_THAT(probe, Not(Contains(Key("CUDA_INJECTION64_PATH"))));
}

}  // namespace
}  // namespace gpupin
