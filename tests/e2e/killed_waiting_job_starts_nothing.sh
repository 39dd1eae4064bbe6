#!/usr/bin/env bash
# The process `gpupin run --wait` made for its command is killed while it
# waits for a card: when the card frees, nothing runs, no lease is left,
# gpupin says so in one line (and announces no start) and ends as its
# command would have (137).
# (It died of SIGPIPE, 141, writing to the dead process.)
source "$(dirname "$0")/lib.sh"
scenario="$GPUPIN_SOURCE_DIR/tests/e2e/fixtures/one-gpu.json"
log="$TEST_TMP/workload.log"
"$GPUPIN" --simulate "$scenario" run -- "$WORKLOAD" --seconds 60 --name holder --log "$log" 2>/dev/null &
wait_for_line "$log" '"name":"holder"'
"$GPUPIN" --simulate "$scenario" run --wait -- touch "$TEST_TMP/ran" 2>"$TEST_TMP/waiter.err" &
waiter=$!
wait_for_line "$TEST_TMP/waiter.err" 'waiting'
pending=$(pgrep -P "$waiter")
[[ -n $pending ]] || fail "the waiter has no pending child"
kill -9 "$pending"
kill -9 "$(event_field "$log" start holder pid)"
status=0
wait "$waiter" || status=$?
expect_eq "$status" 137 "the waiter's exit status"
expect_contains "$(cat "$TEST_TMP/waiter.err")" \
  "gpupin: the command's process was killed by SIGKILL while gpupin waited for GPUs; nothing ran" \
  "what the waiter said"
[[ $(cat "$TEST_TMP/waiter.err") != *"running on"* ]] || fail "a start was announced: $(cat "$TEST_TMP/waiter.err")"
[[ ! -e $TEST_TMP/ran ]] || fail "the command ran"
expect_eq "$("$GPUPIN" --simulate "$scenario" --json leases | jq '.leases | length')" 0 "leases left"
echo PASS
