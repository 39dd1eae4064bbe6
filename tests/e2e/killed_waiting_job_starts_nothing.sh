#!/usr/bin/env bash
# The process `gpupin run --wait` made for its command is killed while it
# waits for a card still held by another job, with a second waiter behind
# it: the wait ends at once (nothing is left to take the card for), gpupin
# says how the command's process ended, in one line and without announcing
# a start, and ends as its command would have (137); nothing ran, no lease
# or ticket is left, and the waiter behind takes the card when it frees.
# (It died of SIGPIPE, 141, writing to the dead process.)
source "$(dirname "$0")/lib.sh"
scenario="$GPUPIN_SOURCE_DIR/tests/e2e/fixtures/one-gpu.json"
log="$TEST_TMP/workload.log"
"$GPUPIN" --simulate "$scenario" run -- "$WORKLOAD" --seconds 60 --name holder --log "$log" 2>/dev/null &
wait_for_line "$log" '"name":"holder"'
"$GPUPIN" --simulate "$scenario" run --wait -- touch "$TEST_TMP/ran" 2>"$TEST_TMP/waiter.err" &
waiter=$!
wait_for_line "$TEST_TMP/waiter.err" 'waiting'
"$GPUPIN" --simulate "$scenario" run --wait -- "$WORKLOAD" --seconds 0 --name behind --log "$log" \
  2>"$TEST_TMP/behind.err" &
behind=$!
wait_for_line "$TEST_TMP/behind.err" 'waiting: 2nd in queue'
pending=$(pgrep -P "$waiter")
[[ -n $pending ]] || fail "the waiter has no pending child"
kill -9 "$pending"
killed_ms=$(now_ms)
status=0
wait "$waiter" || status=$?
took=$(($(now_ms) - killed_ms))
expect_eq "$status" 137 "the waiter's exit status"
((took < 2000 * TIME_FACTOR)) || fail "the waiter went on waiting ${took} ms after its command's process was killed"
expect_eq "$(grep -v '^gpupin: waiting' "$TEST_TMP/waiter.err")" \
  "gpupin: the command's process was killed by SIGKILL while gpupin waited for GPUs; nothing ran" \
  "what the waiter said"
[[ ! -e $TEST_TMP/ran ]] || fail "the command ran"
kill -9 "$(event_field "$log" start holder pid)"
wait "$behind" || fail "the waiter behind failed: $(cat "$TEST_TMP/behind.err")"
[[ -n $(event_field "$log" start behind pid) ]] || fail "the waiter behind did not run"
expect_eq "$("$GPUPIN" --simulate "$scenario" --json leases | jq '[.leases, .queue] | map(length)' -c)" "[0,0]" \
  "leases and tickets left"
echo PASS
