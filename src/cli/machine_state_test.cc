#include "cli/machine_state.h"

#include <gtest/gtest.h>

namespace gpupin {
namespace {

Lease HeldBy(const std::string& id, int pid) {
  Lease lease;
  lease.id = id;
  lease.holder = {pid, 1};
  return lease;
}

TEST(AttributeToLeases, AProcessBelongsToTheFirstLeaseWhoseHolderIsItOrAnAncestor) {
  GpuProcessFacts facts;
  facts.owners[30] = {};  // the holder itself
  facts.ancestry[30] = {30, 1};
  facts.owners[41] = {};  // a grandchild of holder 40
  facts.ancestry[41] = {41, 45, 40, 1};
  facts.owners[50] = {};  // foreign
  facts.ancestry[50] = {50, 1};
  facts.owners[60] = {};  // attributed by an earlier call, to a lease that ended since
  facts.ancestry[60] = {60, 1};
  facts.owners[60].lease_id = "ended";

  AttributeToLeases(facts, {HeldBy("a", 30), HeldBy("b", 40)});

  EXPECT_EQ(facts.owners[30].lease_id, "a");
  EXPECT_EQ(facts.owners[41].lease_id, "b");
  EXPECT_FALSE(facts.owners[50].lease_id.has_value());
  EXPECT_FALSE(facts.owners[60].lease_id.has_value());
}

}  // namespace
}  // namespace gpupin
