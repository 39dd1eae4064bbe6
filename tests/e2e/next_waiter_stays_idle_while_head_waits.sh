#!/usr/bin/env bash
# While the head of the queue waits for more cards than are free, a holder's
# exit gives it a card it keeps (no backfill): the waiter behind it is not
# woken to look at NVML in vain. It looks when the head, counting the
# leases, is about to look itself, or when the head's ticket goes. Counted
# through the simulated library's call trace of the second waiter alone.
source "$(dirname "$0")/lib.sh"

shared_copies "$EXAMPLES/server-4gpu.json"
trace="$TEST_TMP/next.trace"
looks() { grep -c '^nvmlDeviceGetCount' "$trace" || true; }

holders=()
for card in 0 1 2 3; do
  "$GPUPIN" --simulate "$scenario" run --only "$card" -- "$WORKLOAD" --seconds 60 --name "h$card" \
    --log "$log" 2>/dev/null &
  holders+=($!)
  wait_for_line "$log" "\"name\":\"h$card\""
done
"$GPUPIN" --simulate "$scenario" run -n 4 --wait -- "$WORKLOAD" --seconds 0.2 --name head \
  --log "$log" 2>"$TEST_TMP/head.err" &
head=$!
wait_for_line "$TEST_TMP/head.err" 'waiting: next in queue'
GPUPIN_SIM_NVML_TRACE="$trace" "$GPUPIN" --simulate "$scenario" run --wait -- "$WORKLOAD" \
  --seconds 0.05 --name next --log "$log" 2>"$TEST_TMP/next.err" &
next=$!
wait_for_line "$TEST_TMP/next.err" 'waiting: '
wait_until 10 "the second waiter's trace" test -s "$trace"
looked=$(looks)

# Three holders end one by one; after each the head counts the leases, sees
# too few cards and keeps waiting.
for card in 0 1 2; do
  kill -9 "$(event_field "$log" start "h$card" pid)"
  wait "${holders[$card]}" || true
  wait_for_line "$TEST_TMP/head.err" "$((3 - card)) of the 4 GPUs (is|are) leased"
done
expect_eq "$(looks)" "$looked" "NVML looks of the second waiter while the head kept every freed card"
kill -0 "$next" 2>/dev/null || fail "the second waiter left the queue"

# The last holder ends: the head takes all four cards, then the second
# waiter gets one once the head's job is done.
kill -9 "$(event_field "$log" start h3 pid)"
wait "${holders[3]}" || true
wait "$head" || fail "the head failed with status $?"
wait "$next" || fail "the second waiter failed with status $?"
expect_eq "$(jq -r 'select(.event == "start" and .name == "head") | .cuda_visible_devices | split(",") | length' "$log")" 4 \
  "the head's job got the 4 cards"
expect_contains "$(jq -r 'select(.event == "start") | .name' "$log")" "next" "the second waiter's job started"
echo PASS
