#!/usr/bin/env bash
# A job suspended with Ctrl-Z while it waits (SIGSTOP to gpupin and its
# pending child, as a terminal stops the whole job) does not hold up the
# queue: the waiter behind it takes the freed card, noticing the stop at
# its --poll interval. Continued, the suspended job keeps its place and runs
# next, on the same card, once the other has ended.
source "$(dirname "$0")/lib.sh"

scenario="$GPUPIN_SOURCE_DIR/tests/e2e/fixtures/one-gpu.json"
log="$TEST_TMP/workload.log"
"$GPUPIN" --simulate "$scenario" run -- "$WORKLOAD" --seconds 60 --name holder --log "$log" 2>/dev/null &
wait_for_line "$log" '"name":"holder"'
"$GPUPIN" --simulate "$scenario" run --wait --poll 200ms -- \
  "$WORKLOAD" --seconds 0.5 --name suspended --log "$log" 2>"$TEST_TMP/suspended.err" &
suspended=$!
wait_for_line "$TEST_TMP/suspended.err" 'waiting: next in queue'
"$GPUPIN" --simulate "$scenario" run --wait --poll 200ms -- \
  "$WORKLOAD" --seconds 0.5 --name behind --log "$log" 2>"$TEST_TMP/behind.err" &
behind=$!
wait_for_line "$TEST_TMP/behind.err" 'waiting: 2nd in queue'

mapfile -t children < <(pgrep -P "$suspended")
job=("$suspended" "${children[@]}")
((${#job[@]} == 2)) || fail "expected gpupin and its pending child, found: ${job[*]}"
expect_passed_over_while_stopped "$behind" "${job[@]}"
wait "$suspended" || fail "the suspended job failed after it was continued: $(cat "$TEST_TMP/suspended.err")"
expect_ran_after suspended behind
