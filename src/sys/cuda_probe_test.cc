#include "sys/cuda_probe.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

namespace gpupin {
namespace {

using ::testing::HasSubstr;

TEST(CudaProbeTest, FormatsRawUuidBytes) {
  const unsigned char bytes[16] = {0x89, 0x32, 0xf9, 0x37, 0xd7, 0x2c, 0x41, 0x06,
                                   0xc1, 0x2f, 0x20, 0xbd, 0x9f, 0xae, 0xd9, 0xf6};
  EXPECT_EQ(FormatCudaUuid(bytes), "GPU-8932f937-d72c-4106-c12f-20bd9faed9f6");
}

TEST(CudaProbeTest, MissingLibraryIsUnavailable) {
  ProbeOptions options;
  options.libcuda_path = "/nonexistent/libcuda.so.1";
  const Result<ProbeResult> probe = ProbeCuda(options);
  ASSERT_TRUE(probe.ok()) << probe.error().message;
  EXPECT_EQ(probe->status, ProbeStatus::kUnavailable);
  EXPECT_THAT(probe->detail, HasSubstr("cannot load /nonexistent/libcuda.so.1"));
  EXPECT_TRUE(probe->devices.empty());
}

TEST(CudaProbeTest, LibraryWithoutCudaSymbolsIsUnavailable) {
  ProbeOptions options;
  options.libcuda_path = "libc.so.6";
  const Result<ProbeResult> probe = ProbeCuda(options);
  ASSERT_TRUE(probe.ok());
  EXPECT_EQ(probe->status, ProbeStatus::kUnavailable);
  EXPECT_THAT(probe->detail, HasSubstr("lacks cuInit"));
}

// Opening a FIFO blocks until a writer comes, so dlopen never returns: a
// driver that hangs, as far as the probe can tell.
TEST(CudaProbeTest, HungDriverIsKilledAfterTheTimeout) {
  const std::string fifo = testing::TempDir() + "gpupin_hung_libcuda_" + std::to_string(getpid());
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  ProbeOptions options;
  options.libcuda_path = fifo;
  options.timeout = std::chrono::milliseconds(300);
  const auto start = std::chrono::steady_clock::now();
  const Result<ProbeResult> probe = ProbeCuda(options);
  const auto took = std::chrono::steady_clock::now() - start;
  std::filesystem::remove(fifo);
  ASSERT_TRUE(probe.ok());
  EXPECT_EQ(probe->status, ProbeStatus::kTimedOut);
  EXPECT_THAT(probe->detail,
              HasSubstr("did not answer within 300 ms (stuck while loading libcuda)"));
  EXPECT_LT(took, std::chrono::seconds(5));
}

}  // namespace
}  // namespace gpupin
