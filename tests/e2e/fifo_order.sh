#!/usr/bin/env bash
# Waiters queued one after another are served in that order.
source "$(dirname "$0")/lib.sh"

scenario="$GPUPIN_SOURCE_DIR/tests/e2e/fixtures/one-gpu.json"
log="$TEST_TMP/workload.log"
"$GPUPIN" --simulate "$scenario" run -- "$WORKLOAD" --seconds 60 --name holder --log "$log" 2>/dev/null &
wait_for_line "$log" '"name":"holder"'
for i in 1 2 3 4 5; do
  "$GPUPIN" --simulate "$scenario" run --wait -- "$WORKLOAD" --seconds 0.05 --name "w$i" --log "$log" 2>"$TEST_TMP/w$i.err" &
  waiters+=($!)
  wait_for_line "$TEST_TMP/w$i.err" 'waiting'
  sleep 0.1
done
kill -9 "$(event_field "$log" start holder pid)"
for pid in "${waiters[@]}"; do wait "$pid" || fail "a waiter failed with status $?"; done
order=$(jq -r 'select(.event == "start" and .name != "holder") | .name' "$log" | tr '\n' ' ')
expect_eq "$order" "w1 w2 w3 w4 w5 " "order in which the waiters ran"
