#!/usr/bin/env bash
# ctest: RUN_SERIAL
# The job holding the only card is killed with SIGKILL (no cleanup at all):
# the waiter's command starts within 0.5 s, woken by the holder's exit.
source "$(dirname "$0")/lib.sh"

scenario="$GPUPIN_SOURCE_DIR/tests/e2e/fixtures/one-gpu.json"
log="$TEST_TMP/workload.log"
"$GPUPIN" --simulate "$scenario" run -- "$WORKLOAD" --seconds 60 --name holder --log "$log" 2>/dev/null &
wait_for_line "$log" '"name":"holder"'
"$GPUPIN" --simulate "$scenario" run --wait -- "$WORKLOAD" --seconds 0.1 --name waiter --log "$log" 2>"$TEST_TMP/waiter.err" &
waiter=$!
wait_for_line "$TEST_TMP/waiter.err" 'waiting'

expect_start_after_kill "$(event_field "$log" start holder pid)" "$waiter" waiter 500
