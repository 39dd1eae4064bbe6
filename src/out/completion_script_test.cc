#include "out/completion_script.h"

#include <gtest/gtest.h>

namespace gpupin {
namespace {

// gpupin itself with one global option, and `pick` with a choice, GPU ids
// and a help text that a shell must see quoted.
std::vector<CompletableCommand> SmallCommandLine() {
  return {
      {.path = {},
       .summary = "gpupin",
       .options = {{.names = {"--simulate"}, .help = "a server", .value = CompletionValue::kFile}}},
      {.path = {"pick"},
       .summary = "choose GPUs",
       .options = {{.names = {"--prefer"},
                    .help = "the user's ranking",
                    .value = CompletionValue::kChoices,
                    .choices = {"free", "util", "index"}},
                   {.names = {"--only"}, .help = "ids", .value = CompletionValue::kGpuIds}}},
  };
}

TEST(CompletionScript, BashNamesTheCommandsTheOptionsAndTheirValues) {
  const std::string script = BashCompletion(SmallCommandLine());
  EXPECT_NE(script.find("complete -F _gpupin gpupin"), std::string::npos) << script;
  EXPECT_NE(script.find("'pick|--prefer') echo 'choices free util index'"), std::string::npos)
      << script;
  EXPECT_NE(script.find("'pick|--only') echo 'gpus'"), std::string::npos) << script;
}

TEST(CompletionScript, FishQuotesAnApostropheInAHelpText) {
  const std::string script = FishCompletion(SmallCommandLine());
  EXPECT_NE(script.find(R"('the user\'s ranking')"), std::string::npos) << script;
}

TEST(CompletionScript, ZshQuotesAnApostropheInAHelpText) {
  const std::string script = ZshCompletion(SmallCommandLine());
  EXPECT_NE(script.find("'--prefer=[the user'\\''s ranking]:value:(free util index)'"),
            std::string::npos)
      << script;
}

}  // namespace
}  // namespace gpupin
