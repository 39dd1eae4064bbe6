#include "sys/source_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace gpupin {
namespace {

using ::testing::HasSubstr;

class SourceFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(testing::TempDir()) /
           ("gpupin_source_file_" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& text) {
    std::string path = dir_ / name;
    std::ofstream(path) << text;
    return path;
  }

  std::filesystem::path dir_;
};

TEST_F(SourceFileTest, ReadsARegularFileAndASymlinkToOne) {
  std::string path = Write("train.py", "import torch\n");
  std::filesystem::create_symlink(path, dir_ / "link.py");
  EXPECT_EQ(*ReadSourceFile(path), "import torch\n");
  EXPECT_EQ(*ReadSourceFile(dir_ / "link.py"), "import torch\n");
}

TEST_F(SourceFileTest, MissingFileIsNamed) {
  Result<std::string> text = ReadSourceFile(dir_ / "missing.py");
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.error().code, ExitCode::kUsage);
  EXPECT_THAT(text.error().message, HasSubstr("missing.py: No such file or directory"));
}

TEST_F(SourceFileTest, RefusesDirectoriesAndFifosWithoutBlocking) {
  Result<std::string> directory = ReadSourceFile(dir_);
  ASSERT_FALSE(directory.ok());
  EXPECT_THAT(directory.error().message, HasSubstr("not a regular file"));
  std::string fifo = dir_ / "fifo.py";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  Result<std::string> from_fifo = ReadSourceFile(fifo);
  ASSERT_FALSE(from_fifo.ok());
  EXPECT_THAT(from_fifo.error().message, HasSubstr("not a regular file"));
}

TEST_F(SourceFileTest, RefusesFilesOverTheLimit) {
  std::string path = Write("big.py", std::string(2 * 1024 * 1024 + 1, 'x'));
  Result<std::string> text = ReadSourceFile(path, 2 * 1024 * 1024);
  ASSERT_FALSE(text.ok());
  EXPECT_THAT(text.error().message, HasSubstr("larger than 2 MiB"));
  EXPECT_TRUE(ReadSourceFile(path).ok());
}

}  // namespace
}  // namespace gpupin
