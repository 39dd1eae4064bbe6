#include "sys/record_cache.h"

#include <gtest/gtest.h>

namespace gpupin {
namespace {

struct Text {
  std::string value;
};

FileInfo Version(uint64_t inode, int64_t change_time_ns, int64_t size = 100) {
  FileInfo info;
  info.owner_uid = 1000;
  info.inode = inode;
  info.change_time_ns = change_time_ns;
  info.modify_time_ns = change_time_ns;
  info.size = size;
  return info;
}

TEST(RecordCache, AnEntryServesOnlyTheVersionItWasMadeOf) {
  RecordCache<Text> cache;
  cache.Keep("a.json", {Version(1, 10), Text{"first"}, ""});
  const RecordCache<Text>::Entry* hit = cache.Find("a.json", Version(1, 10));
  ASSERT_NE(hit, nullptr);
  EXPECT_EQ(hit->record->value, "first");
  EXPECT_EQ(cache.Find("b.json", Version(1, 10)), nullptr);
  EXPECT_EQ(cache.Find("a.json", Version(2, 10)), nullptr) << "another inode";
  EXPECT_EQ(cache.Find("a.json", Version(1, 11)), nullptr) << "changed since";
  EXPECT_EQ(cache.Find("a.json", Version(1, 10, 101)), nullptr) << "another size";
  FileInfo chowned = Version(1, 10);
  chowned.owner_uid = 0;
  EXPECT_EQ(cache.Find("a.json", chowned), nullptr);
  FileInfo written = Version(1, 10);
  written.modify_time_ns = 12;
  EXPECT_EQ(cache.Find("a.json", written), nullptr);
}

TEST(RecordCache, ANewerVersionReplacesTheOlderAndASkippedFileIsKept) {
  RecordCache<Text> cache;
  cache.Keep("a.json", {Version(1, 10), Text{"first"}, ""});
  cache.Keep("a.json", {Version(1, 20), std::nullopt, "not valid JSON"});
  EXPECT_EQ(cache.size(), 1u);
  EXPECT_EQ(cache.Find("a.json", Version(1, 10)), nullptr);
  const RecordCache<Text>::Entry* skipped = cache.Find("a.json", Version(1, 20));
  ASSERT_NE(skipped, nullptr);
  EXPECT_FALSE(skipped->record);
  EXPECT_EQ(skipped->skipped, "not valid JSON");
}

TEST(RecordCache, GoneProcessesStayGoneForTheVersionThatNamedThem) {
  RecordCache<Text> cache;
  cache.Keep("a.json", {Version(1, 10), Text{"a"}, ""});
  cache.ProcessesGone("a.json");
  cache.Keep("a.json", {Version(1, 10), Text{"a"}, ""});
  EXPECT_TRUE(cache.Find("a.json", Version(1, 10))->processes_gone)
      << "the same version read again";
  cache.Keep("a.json", {Version(1, 11), Text{"a, rewritten"}, ""});
  EXPECT_FALSE(cache.Find("a.json", Version(1, 11))->processes_gone) << "it may name others now";
  cache.ProcessesGone("b.json");
  EXPECT_EQ(cache.size(), 1u) << "nothing made of a file never read";
}

TEST(RecordCache, FilesGoneFromTheListingAreForgotten) {
  RecordCache<Text> cache;
  cache.Keep("a.json", {Version(1, 10), Text{"a"}, ""});
  cache.Keep("b.json", {Version(2, 10), Text{"b"}, ""});
  cache.KeepOnly({"b.json", "c.json"});
  EXPECT_EQ(cache.size(), 1u);
  EXPECT_EQ(cache.Find("a.json", Version(1, 10)), nullptr);
  EXPECT_NE(cache.Find("b.json", Version(2, 10)), nullptr);
}

TEST(RecordCache, RecordsAreKeptUpToTheMemoryBoundAndVerdictsBeyondIt) {
  RecordCache<Text> cache;
  constexpr int64_t kSize = int64_t{16} * 1024;
  const int64_t fit = static_cast<int64_t>(RecordCache<Text>::kMaxCachedBytes) / kSize;
  for (int64_t i = 0; i < fit; ++i)
    cache.Keep(std::to_string(i), {Version(static_cast<uint64_t>(i), 1, kSize), Text{"x"}, ""});
  EXPECT_EQ(cache.size(), static_cast<size_t>(fit));
  cache.Keep("over", {Version(9999, 1, kSize), Text{"x"}, ""});
  const RecordCache<Text>::Entry* over = cache.Find("over", Version(9999, 1, kSize));
  ASSERT_NE(over, nullptr) << "its verdicts are kept";
  EXPECT_FALSE(over->record) << "its text is not, past the bound";
  EXPECT_TRUE(over->skipped.empty());
  cache.ProcessesGone("over");
  EXPECT_TRUE(cache.Find("over", Version(9999, 1, kSize))->processes_gone);
  cache.Keep("junk", {Version(10000, 1, kSize), std::nullopt, "not valid JSON"});
  EXPECT_NE(cache.Find("junk", Version(10000, 1, kSize)), nullptr) << "verdicts cost no text";
  // Room made by a file that went is used again.
  cache.KeepOnly({"1", "junk"});
  cache.Keep("over", {Version(9999, 1, kSize), Text{"x"}, ""});
  ASSERT_NE(cache.Find("over", Version(9999, 1, kSize)), nullptr);
  EXPECT_TRUE(cache.Find("over", Version(9999, 1, kSize))->record);
}

}  // namespace
}  // namespace gpupin
