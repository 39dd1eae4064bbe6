#include "sys/procfs_parse.h"

#include <gtest/gtest.h>

namespace gpupin {
namespace {

// Fields 3..22 of a stat line, with `start` as field 22.
std::string StatTail(const std::string& state, const std::string& ppid, const std::string& start) {
  std::string tail = " " + state + " " + ppid;
  for (int field = 5; field <= 21; ++field) tail += " 0";
  return tail + " " + start + " 1234\n";
}

TEST(ParseStat, ThePidComesFromTheCallerNotTheText) {
  std::optional<ProcessStat> stat = ParseStat(7, "99 (x)" + StatTail("Z", "3", "55"));
  ASSERT_TRUE(stat.has_value());
  EXPECT_EQ(stat->pid, 7);
  EXPECT_EQ(stat->ppid, 3);
  EXPECT_EQ(stat->state, 'Z');
  EXPECT_EQ(stat->start_time_ticks, 55u);
}

TEST(ParseStat, TheNameIsBetweenTheFirstAndLastParenthesis) {
  std::optional<ProcessStat> stat = ParseStat(7, "7 (a) (b)" + StatTail("S", "3", "55"));
  ASSERT_TRUE(stat.has_value());
  EXPECT_EQ(stat->comm, "a) (b");
  EXPECT_EQ(stat->ppid, 3);
}

TEST(ParseFlockHolder, TheHolderOfThatFileNotItsWaiters) {
  const std::string locks =
      "1: POSIX  ADVISORY  WRITE 10 00:2a:99 0 EOF\n"
      "2: FLOCK  ADVISORY  WRITE 4711 00:2a:1234 0 EOF\n"
      "2: -> FLOCK  ADVISORY  WRITE 4712 00:2a:1234 0 EOF\n"
      "3: FLOCK  ADVISORY  WRITE 12 103:02:1234 0 EOF\n";
  EXPECT_EQ(ParseFlockHolder(locks, 0, 0x2a, 1234), 4711);
  EXPECT_EQ(ParseFlockHolder(locks, 0x103, 2, 1234), 12) << "a major above 0xff";
  EXPECT_FALSE(ParseFlockHolder(locks, 0, 0x2a, 99)) << "a POSIX lock is not gpupin's";
  EXPECT_FALSE(ParseFlockHolder(locks, 0, 0x2b, 1234)) << "another device";
  EXPECT_FALSE(ParseFlockHolder("1: FLOCK  ADVISORY  WRITE -1 00:2a:1234 0 EOF\n", 0, 0x2a, 1234))
      << "a holder in another PID namespace";
  EXPECT_FALSE(ParseFlockHolder("garbage\n\n1:", 0, 0x2a, 1234));
}

TEST(ParseStat, RejectsNumbersOutOfRange) {
  EXPECT_FALSE(ParseStat(1, "1 (x)" + StatTail("S", "99999999999", "1")));
  EXPECT_FALSE(ParseStat(1, "1 (x)" + StatTail("S", "1", "18446744073709551616")));
  EXPECT_FALSE(ParseStat(1, "1 (x)" + StatTail("S", "1", "-1")));
}

TEST(ParsePid, OnlyPositiveDecimalNames) {
  EXPECT_EQ(ParsePid("42"), 42);
  for (const char* name : {"0", "-1", "self", "4x", "", "99999999999"}) {
    EXPECT_FALSE(ParsePid(name)) << name;
  }
}

TEST(ParseStatusUid, NeedsTheUidLineAtTheStartOfALine) {
  EXPECT_EQ(ParseStatusUid("Uid:\t5\t5\t5\t5\n"), 5u);
  EXPECT_FALSE(ParseStatusUid("Name:\tUid: 5\n"));
  EXPECT_FALSE(ParseStatusUid("Uid:\n"));
  EXPECT_FALSE(ParseStatusUid("Uid:\t4294967296\n"));
}

TEST(ParseCmdline, KeepsInnerEmptyArguments) {
  using namespace std::string_literals;
  EXPECT_EQ(ParseCmdline("a\0\0b\0\0"s), "a  b");
  EXPECT_EQ(ParseCmdline("\0\0"s), "");
}

TEST(ParseEnviron, FirstDefinitionWinsAndNamelessEntriesAreSkipped) {
  using namespace std::string_literals;
  auto env = ParseEnviron("A=1\0=x\0B\0A=2\0C=a=b"s);
  EXPECT_EQ(env, (std::map<std::string, std::string>{{"A", "1"}, {"C", "a=b"}}));
}

TEST(ParseCgroupContainerId, InnermostIdWinsAndUppercaseIsNoId) {
  const std::string outer(64, 'a');
  const std::string inner(64, 'b');
  EXPECT_EQ(ParseCgroupContainerId("0::/docker/" + outer + "/kubepods/crio-" + inner + ".scope\n"),
            inner);
  EXPECT_FALSE(ParseCgroupContainerId("0::/docker/" + std::string(64, 'A') + "\n"));
  EXPECT_FALSE(ParseCgroupContainerId("/docker/" + outer));  // no hierarchy fields
}

TEST(ParseUptimeTicks, FractionsAndOverflow) {
  EXPECT_EQ(ParseUptimeTicks("12.5 3.0\n", 100), 1250u);
  EXPECT_EQ(ParseUptimeTicks("12.34", 100), 1234u);
  EXPECT_EQ(ParseUptimeTicks("12", 100), 1200u);
  EXPECT_FALSE(ParseUptimeTicks("184467440737095517.00", 100));
  EXPECT_FALSE(ParseUptimeTicks("12.x", 100));
  EXPECT_FALSE(ParseUptimeTicks("", 100));
}

}  // namespace
}  // namespace gpupin
