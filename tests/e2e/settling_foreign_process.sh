#!/usr/bin/env bash
# Another user's compute process younger than --settle (default 120 s)
# makes its card busy even far under --max-used, since it may still be
# allocating, and --explain says so; once older, an idle one does not; a
# young graphics process never does.
source "$(dirname "$0")/lib.sh"
as_nobody_setup
install -d -m 0755 "$TEST_TMP/bin"
install -m 0755 "$WORKLOAD" "$TEST_TMP/bin"
install -m 0644 "$EXAMPLES/server-4gpu.json" "$TEST_TMP/server-4gpu.json"
install -d -m 1777 "$GPUPIN_SIM_LIVE_DIR"
scenario="$TEST_TMP/server-4gpu.json"
log="$TEST_TMP/workload.log"
install -m 0666 /dev/null "$log"

started=$(date +%s%3N)
"${AS_NOBODY[@]}" env CUDA_VISIBLE_DEVICES=0 GPUPIN_SIM_SCENARIO="$scenario" \
  "$TEST_TMP/bin/gpupin-sim-workload" --mem 300M --name loading --log "$log" &
wait_for_line "$log" '"name":"loading"'
foreign=$(event_field "$log" start loading pid)
"${AS_NOBODY[@]}" env CUDA_VISIBLE_DEVICES=1 GPUPIN_SIM_SCENARIO="$scenario" \
  "$TEST_TMP/bin/gpupin-sim-workload" --mem 300M --graphics --name xorg --log "$log" &
wait_for_line "$log" '"name":"xorg"'

run_status "$GPUPIN" --simulate "$scenario" pick --only 0 --settle 3s --explain
expect_eq "$STATUS" 3 "the card of a process still settling"
gpu0=$(grep -E '^ +0 ' <<<"$ERR")
expect_contains "$gpu0" "busy: pid $foreign started " "GPU 0's verdict names the process"
expect_contains "$gpu0" "may still be allocating (--settle 3s)" "and why"
(($(date +%s%3N) - started < 3000)) || fail "the check ran after the settling time (slow machine)"
run_status "$GPUPIN" --simulate "$scenario" pick --only 0 --explain
expect_eq "$STATUS" 3 "the default settling time is 120 s"
run_status "$GPUPIN" --simulate "$scenario" pick --only 1
expect_eq "$STATUS" 0 "a young graphics process does not settle"
"$GPUPIN" --simulate "$scenario" release >/dev/null 2>&1

sleep 3.2
run_status "$GPUPIN" --simulate "$scenario" pick --only 0 --settle 3s --explain
expect_eq "$STATUS" 0 "an older idle process under --max-used leaves its card free: $ERR"
expect_eq "$OUT" 0 "GPU 0 chosen"
run_status "$GPUPIN" --simulate "$scenario" pick --only 2 --settle 0
expect_eq "$STATUS" 0 "--settle 0"
kill %1 %2 2>/dev/null || true
echo PASS
