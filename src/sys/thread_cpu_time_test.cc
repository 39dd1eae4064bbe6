#include "sys/thread_cpu_time.h"

#include <gtest/gtest.h>

#include <thread>

namespace gpupin {
namespace {

using namespace std::chrono_literals;

TEST(ThreadCpuTime, CountsWorkAndNotSleep) {
  const auto before_sleep = ThreadCpuTime();
  std::this_thread::sleep_for(100ms);
  EXPECT_LT(ThreadCpuTime() - before_sleep, 20ms) << "asleep, the thread spends no CPU";
  const auto start = std::chrono::steady_clock::now();
  const auto before_work = ThreadCpuTime();
  while (std::chrono::steady_clock::now() - start < 50ms) {
  }
  EXPECT_GT(ThreadCpuTime() - before_work, 0ms) << "busy, it does";
}

}  // namespace
}  // namespace gpupin
