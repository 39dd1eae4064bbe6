#!/usr/bin/env bash
# Jobs of two users (root and nobody) started at one instant on a shared
# state directory and a shared simulated server never share a card.
source "$(dirname "$0")/lib.sh"

as_nobody_setup
shared_copies "$EXAMPLES/server-4gpu.json"
jobs=8
job() {
  local as=()
  (($1 % 2 == 0)) && as=("${AS_NOBODY[@]}")
  exec "${as[@]}" "$GPUPIN" --simulate "$scenario" run --wait -- \
    "$WORKLOAD" --seconds 0.3 --name "job$1" --log "$log" 2>"$TEST_TMP/job$1.err"
}
start_at_once "$jobs" job
wait_all_ok "${STARTED[@]}"
expect_eq "$(grep -c '"event":"end"' "$log")" "$jobs" "workloads that ran to the end"
expect_eq "$(stat -c %a "$GPUPIN_STATE_DIR")" 1777 "the shared state directory's mode"
expect_no_overlap "$log"
