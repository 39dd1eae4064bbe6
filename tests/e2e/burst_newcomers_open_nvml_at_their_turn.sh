#!/usr/bin/env bash
# ctest: RUN_SERIAL
# A burst of `run --wait` onto free cards: the newcomers that arrive while
# others look at the cards wait for their turn to look, and those that then
# find others queued wait without opening NVML, until they are next in line.
# With an nvmlInit of 100 ms, as a real driver's, every newcomer of the
# burst would otherwise find the queue still empty and open it. 16 jobs on
# 4 cards, counted while the first round runs: the jobs running, the one
# that queued first and the next in line may have opened it, and on a slow
# machine a newcomer or two that waited out its turn.
source "$(dirname "$0")/lib.sh"

jobs=16 cards=4
scenario="$TEST_TMP/slow-nvml.json"
jq '.nvml_init_ms = 100' "$EXAMPLES/server-4gpu.json" >"$scenario"
log="$TEST_TMP/workload.log"
job() {
  GPUPIN_SIM_NVML_TRACE="$TEST_TMP/trace.$1" exec "$GPUPIN" --simulate "$scenario" \
    run --wait -- "$WORKLOAD" --seconds 3 --log "$log" 2>"$TEST_TMP/gpupin.$1.err"
}
start_at_once "$jobs" job
wait_until 20 "the first round to start" lines_at_least "$log" '"event":"start"' "$cards"
sleep 1
opened=$(grep -l '^nvmlInit' "$TEST_TMP"/trace.* 2>/dev/null | wc -l)
started=$(grep -c '"event":"start"' "$log")
wait_all_ok "${STARTED[@]}"
expect_eq "$(grep -c '"event":"end"' "$log")" "$jobs" "workloads that ran to the end"
expect_no_overlap "$log"
echo "NVML opened by $opened of $jobs jobs while $started ran"
expect_eq "$started" "$cards" "jobs running in the first round"
((opened <= cards + 4)) || fail "$opened of $jobs jobs opened NVML while the first $cards ran"
echo PASS
