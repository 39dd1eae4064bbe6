#include "sys/read_to_end.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

#include "sys/unique_fd.h"

namespace gpupin {
namespace {

// A pipe holding `text`, its writing end closed: reads see `text`, then the end.
UniqueFd PipeHolding(const std::string& text) {
  int ends[2];
  if (pipe(ends) != 0) ADD_FAILURE() << "pipe";
  UniqueFd reader(ends[0]);
  UniqueFd writer(ends[1]);
  EXPECT_EQ(write(writer.get(), text.data(), text.size()), static_cast<ssize_t>(text.size()));
  return reader;
}

TEST(ReadToEndTest, AFileShorterThanExpectedIsReadWhole) {
  UniqueFd fd = PipeHolding("short");
  Result<std::string> text = ReadToEnd(fd.get(), 100, 1000);
  ASSERT_TRUE(text.ok()) << text.error().message;
  EXPECT_EQ(text.value(), "short");
}

TEST(ReadToEndTest, AFileThatGrewPastItsExpectedSizeIsReadWhole) {
  std::string grown(5000, 'x');
  UniqueFd fd = PipeHolding(grown);
  Result<std::string> text = ReadToEnd(fd.get(), 3, 10000);
  ASSERT_TRUE(text.ok()) << text.error().message;
  EXPECT_EQ(text.value(), grown);
}

TEST(ReadToEndTest, ExactlyTheLimitIsAllowed) {
  std::string full(100, 'x');
  UniqueFd fd = PipeHolding(full);
  Result<std::string> text = ReadToEnd(fd.get(), 100, 100);
  ASSERT_TRUE(text.ok()) << text.error().message;
  EXPECT_EQ(text.value(), full);
}

TEST(ReadToEndTest, OneByteOverTheLimitIsRefused) {
  UniqueFd fd = PipeHolding(std::string(101, 'x'));
  Result<std::string> text = ReadToEnd(fd.get(), 10, 100);
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.error().message, "grew past the 100 bytes allowed while read");
}

TEST(ReadToEndTest, AnExpectedSizeOverTheLimitStillStopsAtTheLimit) {
  UniqueFd fd = PipeHolding(std::string(300, 'x'));
  EXPECT_FALSE(ReadToEnd(fd.get(), 1000, 100).ok());
}

TEST(ReadToEndTest, AReadErrorSaysWhy) {
  Result<std::string> text = ReadToEnd(-1, 10, 100);
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.error().message, "Bad file descriptor");
}

}  // namespace
}  // namespace gpupin
