#!/usr/bin/env bash
# The head of the queue, woken by a change in the leases, counts them before
# it asks NVML: while leases hold too many cards for it to start, it waits
# on without a look (no NVML call), and says how many are leased; once the
# leases leave it enough, it looks and starts. Counted through the simulated
# library's call trace (GPUPIN_SIM_NVML_TRACE) of the waiting gpupin alone.
source "$(dirname "$0")/lib.sh"

# A second user's job passes the waiter by fair share (it holds no card).
shared_copies "$EXAMPLES/server-4gpu.json"
trace="$TEST_TMP/waiter.trace"
looks() { grep -c '^nvmlDeviceGetMemoryInfo' "$trace" || true; }

"$GPUPIN" --simulate "$scenario" run -n 3 -- "$WORKLOAD" --seconds 60 --name holder --log "$log" \
  2>/dev/null &
holder=$!
wait_for_line "$log" '"name":"holder"'
GPUPIN_SIM_NVML_TRACE="$trace" "$GPUPIN" --simulate "$scenario" run -n 2 --wait -- \
  "$WORKLOAD" --seconds 0.05 --name waiter --log "$log" 2>"$TEST_TMP/waiter.err" &
waiter=$!
wait_for_line "$TEST_TMP/waiter.err" 'waiting: next in queue'
looked=$(looks)
((looked >= 4)) || fail "the waiter looked at the 4 cards once before it waited (looked $looked)"

# nobody's job, first by fair share, takes the fourth card and ends: two
# changes in the leases, each waking the head, neither leaving it 2 cards.
"${AS_NOBODY[@]}" "$GPUPIN" --simulate "$scenario" run --wait -- "$WORKLOAD" --seconds 0.3 \
  --name passer --log "$log" 2>/dev/null || fail "nobody's job on the fourth card failed"
wait_for_line "$TEST_TMP/waiter.err" '3 of the 4 GPUs are leased'
expect_contains "$(cat "$TEST_TMP/waiter.err")" "4 of the 4 GPUs are leased" \
  "the head counted the leases when the fourth card was taken"
expect_eq "$(looks)" "$looked" "NVML memory queries of the head while leases held the cards"
kill -0 "$waiter" 2>/dev/null || fail "the waiter left the queue"

# The holder's job ends: 3 cards free of leases, and the head looks and starts.
holder_pid=$(event_field "$log" start holder pid)
killed_ms=$(now_ms)
kill -9 "$holder_pid"
wait "$holder" || true
# Its end, for the overlap check: when the kill was sent.
echo "{\"event\":\"end\",\"name\":\"holder\",\"pid\":$holder_pid,\"t_ms\":$killed_ms}" >>"$log"
wait "$waiter" || fail "the waiter failed with status $?"
(($(looks) > looked)) || fail "the head started without looking at the cards"
expect_eq "$(jq -r 'select(.event == "start" and .name == "waiter") | .cuda_visible_devices | split(",") | length' "$log")" 2 \
  "the waiter's job got 2 cards"
expect_no_overlap "$log"
echo PASS
