#!/usr/bin/env bash
# `gpupin pick --wait` queues on behalf of its shell, which outlives it. A
# pick killed with SIGKILL while it waits (no cleanup at all) leaves its
# ticket behind with a live holder; the queue must not wait for that shell:
# the job behind takes the card as soon as it is freed.
source "$(dirname "$0")/lib.sh"

scenario="$GPUPIN_SOURCE_DIR/tests/e2e/fixtures/one-gpu.json"
log="$TEST_TMP/workload.log"
"$GPUPIN" --simulate "$scenario" run -- "$WORKLOAD" --seconds 60 --name holder --log "$log" 2>/dev/null &
wait_for_line "$log" '"name":"holder"'
# The shell lives on after its pick, as an interactive one would.
bash -c '"$0" --simulate "$1" pick --wait 2>"$2"; sleep 60' "$GPUPIN" "$scenario" "$TEST_TMP/pick.err" &
shell=$!
wait_for_line "$TEST_TMP/pick.err" 'waiting: next in queue'
"$GPUPIN" --simulate "$scenario" run --wait -- \
  "$WORKLOAD" --seconds 0.1 --name behind --log "$log" 2>"$TEST_TMP/behind.err" &
behind=$!
wait_for_line "$TEST_TMP/behind.err" 'waiting: 2nd in queue'

pick=$(pgrep -P "$shell")
[[ -n $pick ]] || fail "the pick is not running"
kill -9 "$pick"
wait_for_line "$TEST_TMP/behind.err" 'waiting: next in queue'
expect_start_after_kill "$(event_field "$log" start holder pid)" "$behind" behind 500
