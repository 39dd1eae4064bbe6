#include "cli/policy_options.h"

#include <gtest/gtest.h>

namespace gpupin {
namespace {

TEST(PolicyOptionsTest, FlagsBecomeARequest) {
  CLI::App app;
  PolicyFlags flags;
  AddPolicyOptions(app, flags);
  app.parse("-n 2 --mem 20G --max-used 50% --only 1,3 --only 5 --prefer util --no-near --mine-free",
            false);
  Result<Request> request = ToRequest(flags);
  ASSERT_TRUE(request.ok()) << request.error().message;
  EXPECT_EQ(request->count, 2);
  EXPECT_EQ(request->mem_bytes, 20ULL << 30);
  ASSERT_TRUE(request->max_used && request->max_used->percent);
  EXPECT_DOUBLE_EQ(*request->max_used->percent, 50);
  EXPECT_EQ(request->only, (std::vector<std::string>{"1", "3", "5"}));
  EXPECT_EQ(request->prefer, Preference::kUtil);
  EXPECT_FALSE(request->near);
  EXPECT_TRUE(request->mine_free);
}

TEST(PolicyOptionsTest, NearIsOnUnlessTurnedOffOrAnOrderIsGiven) {
  for (auto [args, near] :
       std::vector<std::pair<std::string, bool>>{{"", true},
                                                 {"--near", true},
                                                 {"--no-near", false},
                                                 {"--no-near --near", true},
                                                 {"--order 1,2,3,0", false},
                                                 {"--order 1,2,3,0 --near", true},
                                                 {"--near --order 3,0", true},
                                                 {"--order 1 --no-near", false}}) {
    CLI::App app;
    PolicyFlags flags;
    AddPolicyOptions(app, flags);
    app.parse(args, false);
    Result<Request> request = ToRequest(flags);
    ASSERT_TRUE(request.ok()) << request.error().message;
    EXPECT_EQ(request->near, near) << args;
  }
}

TEST(PolicyOptionsTest, BadValuesAreUsageErrorsNamingTheOption) {
  for (auto [field, value] : std::vector<std::pair<std::string, std::string>>{
           {"mem", "lots"}, {"mem", "0"}, {"max-used", "120%"}, {"max-util", "x"}}) {
    PolicyFlags flags;
    if (field == "mem") flags.mem = value;
    if (field == "max-used") flags.max_used = value;
    if (field == "max-util") flags.max_util = value;
    Result<Request> request = ToRequest(flags);
    ASSERT_FALSE(request.ok()) << field << "=" << value;
    EXPECT_EQ(request.error().code, ExitCode::kUsage);
    EXPECT_NE(request.error().message.find("--" + field), std::string::npos)
        << request.error().message;
  }
}

}  // namespace
}  // namespace gpupin
