#!/usr/bin/env bash
# ctest: RUN_SERIAL
# A workload started outside gpupin makes GPU 0 busy: pick passes it over
# and --explain says why; a waiter for GPU 0 starts within 200 ms of that
# process being killed (its exit is watched, not polled).
source "$(dirname "$0")/lib.sh"

scenario="$EXAMPLES/server-4gpu.json"
log="$TEST_TMP/workload.log"
CUDA_VISIBLE_DEVICES=0 GPUPIN_SIM_SCENARIO=$scenario "$WORKLOAD" --mem 4G --name foreign --log "$log" &
wait_for_line "$log" '"name":"foreign"'
foreign=$(event_field "$log" start foreign pid)

run_status "$GPUPIN" --simulate "$scenario" pick --explain --ttl 1s
expect_eq "$STATUS" 0 "pick's status"
[[ "$OUT" != 0 ]] || fail "pick chose the busy GPU 0"
gpu0=$(grep -E '^ +0 ' <<<"$ERR")
expect_contains "$gpu0" "passed" "GPU 0's verdict"
expect_contains "$gpu0" "busy: 4G used > 1G (--max-used)" "why GPU 0 was passed over"
expect_contains "$gpu0" "pid $foreign" "the process named in GPU 0's verdict"

"$GPUPIN" --simulate "$scenario" run --only 0 --wait -- "$WORKLOAD" --seconds 0.1 --name waiter --log "$log" 2>"$TEST_TMP/waiter.err" &
waiter=$!
wait_for_line "$TEST_TMP/waiter.err" 'waiting'
expect_start_after_kill "$foreign" "$waiter" waiter 200
