#include "core/process_tree.h"

#include <gtest/gtest.h>

#include <map>
#include <vector>

namespace gpupin {
namespace {

// 1 <- 10 <- 11 <- 12; 20 and 21 parents of each other; 30 is its own parent.
ParentOf Table(std::vector<int>* asked = nullptr) {
  static const std::map<int, int> parents = {{10, 1},  {11, 10}, {12, 11},
                                             {20, 21}, {21, 20}, {30, 30}};
  return [asked](int pid) -> std::optional<int> {
    if (asked) asked->push_back(pid);
    auto it = parents.find(pid);
    if (it == parents.end()) return std::nullopt;
    return it->second;
  };
}

auto Is(int wanted) {
  return [wanted](int pid) { return pid == wanted; };
}

TEST(NearestAncestor, FindsItselfOrTheNearestWantedAncestor) {
  EXPECT_EQ(NearestAncestor(12, Table(), Is(12)), 12);
  EXPECT_EQ(NearestAncestor(12, Table(), Is(10)), 10);
  EXPECT_EQ(NearestAncestor(12, Table(), [](int pid) { return pid <= 11; }), 11);
  EXPECT_FALSE(NearestAncestor(10, Table(), Is(12)).has_value());
}

TEST(NearestAncestor, StopsAtTheFirstAnswerAndWhereTheTreeEnds) {
  std::vector<int> asked;
  EXPECT_EQ(NearestAncestor(12, Table(&asked), Is(11)), 11);
  EXPECT_EQ(asked, std::vector<int>{12}) << "no parent read beyond the answer";
  EXPECT_FALSE(NearestAncestor(99, Table(), Is(1)).has_value()) << "unknown process";
  EXPECT_FALSE(NearestAncestor(0, Table(), Is(0)).has_value()) << "pid 0 is no process";
}

TEST(NearestAncestor, CyclesEnd) {
  std::vector<int> asked;
  EXPECT_FALSE(NearestAncestor(20, Table(&asked), Is(1)).has_value());
  EXPECT_LE(asked.size(), 4096u);
  EXPECT_FALSE(NearestAncestor(30, Table(), Is(1)).has_value());
}

}  // namespace
}  // namespace gpupin
