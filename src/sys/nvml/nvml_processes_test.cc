#include "sys/nvml/nvml_processes.h"

#include <gtest/gtest.h>

#include <cstring>

namespace gpupin {
namespace {

struct FakeEntry {
  uint32_t pid;
  unsigned long long used;
  uint32_t gpu_instance = kNvmlInstanceIdNone;
  uint32_t compute_instance = kNvmlInstanceIdNone;
};

// A process-list function that follows NVML's size protocol and writes
// entries with a chosen stride, as the driver would.
struct FakeProcessList {
  std::vector<FakeEntry> entries;
  size_t stride = 24;
  // Entries that appear after each call, as new processes would.
  int grow_calls = 0;
  // Always one more than the caller made room for: a list that never settles.
  bool always_more = false;
  nvmlReturn_t failure = NVML_SUCCESS;
  int calls = 0;
};
FakeProcessList* fake = nullptr;

nvmlReturn_t FakeProcesses(nvmlDevice_t, unsigned* count, void* infos) {
  ++fake->calls;
  if (fake->failure != NVML_SUCCESS) return fake->failure;
  const unsigned capacity = *count;
  if (fake->always_more) {
    *count = capacity + 1;
    return NVML_ERROR_INSUFFICIENT_SIZE;
  }
  const unsigned size = static_cast<unsigned>(fake->entries.size());
  *count = size;
  // Processes start between this call and the next.
  if (fake->grow_calls > 0) {
    --fake->grow_calls;
    const uint32_t next = fake->entries.back().pid + 1;
    for (uint32_t pid = next; pid < next + 10; ++pid) fake->entries.push_back({pid, 1u << 20});
  }
  if (size == 0) return NVML_SUCCESS;
  if (!infos || capacity < size) return NVML_ERROR_INSUFFICIENT_SIZE;
  auto* out = static_cast<std::byte*>(infos);
  for (unsigned i = 0; i < size; ++i) {
    const FakeEntry& e = fake->entries[i];
    std::byte* entry = out + i * fake->stride;
    std::memcpy(entry, &e.pid, 4);
    std::memset(entry + 4, 0, 4);
    std::memcpy(entry + 8, &e.used, 8);
    if (fake->stride >= 24) {
      std::memcpy(entry + 16, &e.gpu_instance, 4);
      std::memcpy(entry + 20, &e.compute_instance, 4);
    }
    if (fake->stride == 32) std::memset(entry + 24, 0, 8);  // usedGpuCcProtectedMemory
  }
  return NVML_SUCCESS;
}

class ProcessListTest : public testing::Test {
 protected:
  void SetUp() override { fake = &list_; }
  void TearDown() override { fake = nullptr; }

  nvmlReturn_t Read(int version, ProcessKind kind = ProcessKind::kCompute) {
    const NvmlProcessQuery query{{{FakeProcesses, version}}};
    return ReadProcessList(query, nullptr, kind, scratch_, processes_);
  }

  FakeProcessList list_;
  std::vector<std::byte> scratch_;
  std::vector<GpuProcess> processes_;
};

TEST_F(ProcessListTest, EmptyListIsOneCall) {
  EXPECT_EQ(Read(3), NVML_SUCCESS);
  EXPECT_TRUE(processes_.empty());
  EXPECT_EQ(list_.calls, 1);
}

TEST_F(ProcessListTest, V3StrideIsDetectedFromWhatTheDriverWrote) {
  const std::vector<FakeEntry> entries = {
      {100, 1ull << 30, 1, 0}, {200, 5ull << 20, 2, 0}, {300, 7, 2, 1}};
  std::vector<std::vector<GpuProcess>> results;
  for (size_t stride : {24, 32}) {
    list_ = {.entries = entries, .stride = stride};
    processes_.clear();
    ASSERT_EQ(Read(3), NVML_SUCCESS) << "stride " << stride;
    results.push_back(processes_);
  }
  for (const std::vector<GpuProcess>& processes : results) {
    ASSERT_EQ(processes.size(), 3u);
    for (size_t i = 0; i < 3; ++i) {
      EXPECT_EQ(processes[i].pid, entries[i].pid);
      EXPECT_EQ(processes[i].used_memory_bytes, entries[i].used);
      EXPECT_EQ(processes[i].gpu_instance_id, entries[i].gpu_instance);
      EXPECT_EQ(processes[i].compute_instance_id, entries[i].compute_instance);
      EXPECT_TRUE(processes[i].compute);
      EXPECT_FALSE(processes[i].graphics);
    }
  }
}

TEST_F(ProcessListTest, V1EntriesAreSixteenBytesWithoutInstances) {
  list_ = {.entries = {{11, 1000, 3, 4}, {12, 2000, 3, 4}}, .stride = 16};
  ASSERT_EQ(Read(1), NVML_SUCCESS);
  ASSERT_EQ(processes_.size(), 2u);
  EXPECT_EQ(processes_[1].pid, 12u);
  EXPECT_EQ(processes_[1].used_memory_bytes, 2000u);
  EXPECT_EQ(processes_[1].gpu_instance_id, std::nullopt);
}

TEST_F(ProcessListTest, UnavailableMemoryIsUnknown) {
  list_ = {.entries = {{7, kNvmlValueNotAvailable}}, .stride = 24};
  ASSERT_EQ(Read(2), NVML_SUCCESS);
  ASSERT_EQ(processes_.size(), 1u);
  EXPECT_EQ(processes_[0].used_memory_bytes, std::nullopt);
}

TEST_F(ProcessListTest, ListThatGrowsBetweenCallsIsReadAgain) {
  list_ = {.entries = {{1, 10}}, .stride = 24, .grow_calls = 3};
  ASSERT_EQ(Read(3), NVML_SUCCESS);
  // 1 entry at the size query, 11 at the first read (room for 7), 21 at the
  // second (room for 27).
  EXPECT_EQ(list_.calls, 3);
  ASSERT_EQ(processes_.size(), 21u);
  EXPECT_EQ(processes_.back().pid, 21u);
}

TEST_F(ProcessListTest, ListThatNeverSettlesGivesUp) {
  list_ = {.entries = {{1, 10}}, .stride = 24, .always_more = true};
  EXPECT_EQ(Read(3), NVML_ERROR_INSUFFICIENT_SIZE);
  EXPECT_TRUE(processes_.empty());
  EXPECT_LT(list_.calls, 20);
}

TEST_F(ProcessListTest, FailuresAreReturned) {
  list_ = {.entries = {{1, 10}}, .failure = NVML_ERROR_NO_PERMISSION};
  EXPECT_EQ(Read(3), NVML_ERROR_NO_PERMISSION);
  EXPECT_TRUE(processes_.empty());
}

TEST_F(ProcessListTest, ComputeAndGraphicsMergeByPid) {
  list_ = {.entries = {{5, 100}, {6, 200}}, .stride = 24};
  ASSERT_EQ(Read(2, ProcessKind::kCompute), NVML_SUCCESS);
  list_ = {.entries = {{6, 300}, {8, kNvmlValueNotAvailable}}, .stride = 24};
  ASSERT_EQ(Read(2, ProcessKind::kGraphics), NVML_SUCCESS);
  ASSERT_EQ(processes_.size(), 3u);
  EXPECT_TRUE(processes_[0].compute && !processes_[0].graphics);
  EXPECT_TRUE(processes_[1].compute && processes_[1].graphics);
  EXPECT_EQ(processes_[1].used_memory_bytes, 300u);
  EXPECT_TRUE(!processes_[2].compute && processes_[2].graphics);
  EXPECT_EQ(processes_[2].used_memory_bytes, std::nullopt);
}

}  // namespace
}  // namespace gpupin
