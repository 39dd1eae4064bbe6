#!/usr/bin/env bash
# A job that queues behind others opens NVML only once it is next in line
# (the real nvmlInit takes tens of milliseconds, and 64 jobs submitted at
# once would otherwise pay it together while the first ones start). Seen
# from outside with an NVML library that cannot be loaded: third in the
# queue, the job waits instead of failing at once; next in line, it fails
# with NVML's error and exit status 4, and leaves no ticket behind.
source "$(dirname "$0")/lib.sh"

scenario="$GPUPIN_SOURCE_DIR/tests/e2e/fixtures/one-gpu.json"
log="$TEST_TMP/workload.log"
"$GPUPIN" --simulate "$scenario" run -- "$WORKLOAD" --seconds 60 --name holder --log "$log" 2>/dev/null &
wait_for_line "$log" '"name":"holder"'
for name in first second; do
  "$GPUPIN" --simulate "$scenario" run --wait -- "$WORKLOAD" --seconds 0.05 --name "$name" --log "$log" \
    2>"$TEST_TMP/$name.err" &
  waiters+=($!)
  wait_for_line "$TEST_TMP/$name.err" 'waiting'
done
"$GPUPIN" --simulate "$scenario" --nvml "$TEST_TMP/missing/libnvidia-ml.so.1" run --wait -- true \
  2>"$TEST_TMP/broken.err" &
broken=$!
wait_for_line "$TEST_TMP/broken.err" 'waiting: 3rd in queue'
kill -0 "$broken" 2>/dev/null || fail "the queued job failed before its turn"

kill -9 "$(event_field "$log" start holder pid)"
status=0
wait "$broken" || status=$?
for pid in "${waiters[@]}"; do wait "$pid" || fail "a waiter failed with status $?"; done
expect_eq "$status" 4 "exit status of the job whose NVML cannot be loaded, at its turn"
expect_contains "$(cat "$TEST_TMP/broken.err")" "cannot load NVML" "its message"
expect_eq "$(ls -A "$GPUPIN_STATE_DIR/queue")" "" "tickets left in the queue"
echo PASS
