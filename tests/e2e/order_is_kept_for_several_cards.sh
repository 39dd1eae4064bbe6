#!/usr/bin/env bash
# --order is the user's own preference: for several cards it is not
# overruled by closeness in the topology, which is only a default. On the
# lab server GPUs 0 and 1 share a PCIe switch and are free, as are 3, 5, 6
# and 7; GPU 2 is busy.
source "$(dirname "$0")/lib.sh"
SIM=(--simulate "$EXAMPLES/lab-8gpu.json")
export GPUPIN_SIM_SCENARIO="$EXAMPLES/lab-8gpu.json" CUDA_DEVICE_ORDER=PCI_BUS_ID

pick_in_own_state() {
  GPUPIN_STATE_DIR=$(mktemp -d "$TEST_TMP/state.XXXXXX") "$GPUPIN" "${SIM[@]}" pick --ttl 1s "$@"
}
expect_eq "$(pick_in_own_state -n 2)" "6,7" "without --order, the closest free pair"
# Keeping GPU 0 for interactive work, as doc/policy.md shows it.
expect_eq "$(pick_in_own_state -n 2 --order 1,2,3,0)" "1,3" "--order 1,2,3,0: 1, then 3 (2 is busy)"
expect_eq "$(pick_in_own_state -n 2 --order 3,0)" "0,3" "--order 3,0: both listed cards"
# Typed together, closeness chooses the set as before.
expect_eq "$(pick_in_own_state -n 2 --order 3,0 --near)" "0,1" "--near typed with --order"
printf '[pick]\norder = "1,3"\n' >"$TEST_TMP/order.toml"
expect_eq "$(GPUPIN_CONFIG="$TEST_TMP/order.toml" pick_in_own_state -n 2)" "1,3" "an order from a config file"
# A near that a config file gives does not overrule an order typed on the
# command line (the command line wins); typed, it does.
printf '[pick]\nnear = true\n' >"$TEST_TMP/near.toml"
expect_eq "$(GPUPIN_CONFIG="$TEST_TMP/near.toml" pick_in_own_state -n 2 --order 1,2,3,0)" "1,3" \
  "a config file's near beside a typed --order"
expect_eq "$(GPUPIN_CONFIG="$TEST_TMP/near.toml" pick_in_own_state -n 2 --order 3,0 --near)" "0,1" \
  "--near typed beside a config file's near"
echo PASS
