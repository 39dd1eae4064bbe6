#include "core/env_words.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gpupin {
namespace {

using ::testing::HasSubstr;
using Env = std::map<std::string, std::string>;

TEST(EnvWordsTest, SplitsOnWhitespace) {
  Result<Env> env = ParseEnvWords("  CUDA_VISIBLE_DEVICES=0,7,1\tCUDA_DEVICE_ORDER=PCI_BUS_ID ");
  ASSERT_TRUE(env.ok()) << env.error().message;
  EXPECT_EQ(*env, (Env{{"CUDA_VISIBLE_DEVICES", "0,7,1"}, {"CUDA_DEVICE_ORDER", "PCI_BUS_ID"}}));
}

TEST(EnvWordsTest, EmptyTextIsEmptyEnvironment) {
  Result<Env> env = ParseEnvWords("   ");
  ASSERT_TRUE(env.ok());
  EXPECT_TRUE(env->empty());
}

TEST(EnvWordsTest, QuotesKeepSpacesAndEmptyValues) {
  Result<Env> env = ParseEnvWords(R"(A='0, 1' B="x \"y\" \\ z" C= D='' E=a\ b)");
  ASSERT_TRUE(env.ok()) << env.error().message;
  EXPECT_EQ(*env, (Env{{"A", "0, 1"}, {"B", R"(x "y" \ z)"}, {"C", ""}, {"D", ""}, {"E", "a b"}}));
}

TEST(EnvWordsTest, SingleQuotesKeepBackslashes) {
  Result<Env> env = ParseEnvWords(R"(A='a\b')");
  ASSERT_TRUE(env.ok());
  EXPECT_EQ(env->at("A"), R"(a\b)");
}

TEST(EnvWordsTest, LaterWordWins) {
  Result<Env> env = ParseEnvWords("A=1 A=2");
  ASSERT_TRUE(env.ok());
  EXPECT_EQ(env->at("A"), "2");
}

TEST(EnvWordsTest, WordWithoutEqualsIsNamed) {
  Result<Env> env = ParseEnvWords("CUDA_VISIBLE_DEVICES=0 python");
  ASSERT_FALSE(env.ok());
  EXPECT_EQ(env.error().code, ExitCode::kUsage);
  EXPECT_THAT(env.error().message, HasSubstr("'python' is not NAME=VALUE"));
}

TEST(EnvWordsTest, InvalidNamesAreRefused) {
  for (const char* text : {"=1", "1A=2", "A-B=3"}) {
    Result<Env> env = ParseEnvWords(text);
    ASSERT_FALSE(env.ok()) << text;
    EXPECT_THAT(env.error().message, HasSubstr("is not a variable name")) << text;
  }
}

TEST(EnvWordsTest, UnterminatedQuotesAreRefused) {
  for (const char* text : {"A='0,1", "A=\"0,1", "A=\"0\\\""}) {
    Result<Env> env = ParseEnvWords(text);
    ASSERT_FALSE(env.ok()) << text;
    EXPECT_THAT(env.error().message, HasSubstr("unterminated")) << text;
  }
}

}  // namespace
}  // namespace gpupin
