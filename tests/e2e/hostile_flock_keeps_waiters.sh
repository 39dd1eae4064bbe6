#!/usr/bin/env bash
# nobody holds the state lock with flock(1) for 15 s while root's job waits
# in the queue for the only card. The waiter keeps its place, says who holds
# the lock (pid, user, command) and runs its job once the lock is free.
# Meanwhile a `run --wait=5s` exits 3 at its 5 s, a `pick` without --wait
# fails after the documented 10 s naming the holder (and ps --kill, in one
# line, kills nothing), and doctor reports the
# lock held too long, by whom. The holder's job ends under the lock: its
# gpupin exits with it, leaving the dead lease's file to the next gpupin
# rather than waiting out the lock.
# ctest: RUN_SERIAL
source "$(dirname "$0")/lib.sh"

as_nobody_copies "$GPUPIN_SOURCE_DIR/tests/e2e/fixtures/one-gpu.json"
log="$TEST_TMP/workload.log"
gpupin() { "$GPUPIN" --simulate "$SCENARIO" "$@"; }
gpupin leases >/dev/null # creates the state directory and its lock

(
  gpupin run -- "$WORKLOAD" --seconds 2 --name holder --log "$log" 2>"$TEST_TMP/holder.err"
  now_ms >"$TEST_TMP/holder.exited"
) &
wait_for_line "$log" '"event":"start".*"name":"holder"'
gpupin run --wait -- "$WORKLOAD" --seconds 0.2 --name waiter --log "$log" 2>"$TEST_TMP/waiter.err" &
waiter=$!
wait_for_line "$TEST_TMP/waiter.err" "waiting: next in queue"

"${AS_NOBODY[@]}" flock "$GPUPIN_STATE_DIR/lock" sleep 15 &
locked_ms=$(now_ms)
wait_until 5 "nobody's flock" flock_held "$GPUPIN_STATE_DIR/lock"

started=$(now_ms)
gpupin run --wait=5s -- true 2>"$TEST_TMP/wait5.err" &
wait5=$!
gpupin pick 2>"$TEST_TMP/pick.err" &
pick=$!
gpupin ps --leftovers --kill --yes >/dev/null 2>"$TEST_TMP/kill.err" &
kill_leftovers=$!
run_status gpupin doctor
grep -Eq "^state_dir +fail .*lock has been held by pid [0-9]+ \(nobody: flock " <<<"$OUT" ||
  fail "doctor while nobody holds the lock: $OUT"
# The directory is sound: the fix is about the holder, never to remove it.
grep -A1 -E "^state_dir " <<<"$OUT" | grep -q "fix: the directory is sound, leave it" ||
  fail "doctor's fix while nobody holds the lock: $OUT"

status=0
wait "$wait5" || status=$?
elapsed=$(($(now_ms) - started))
expect_eq "$status" 3 "run --wait=5s under the held lock"
echo "run --wait=5s exited after ${elapsed} ms"
((elapsed >= 4500 && elapsed < 7000 * TIME_FACTOR)) || fail "run --wait=5s exited after ${elapsed} ms"
expect_contains "$(cat "$TEST_TMP/wait5.err")" "the state lock is held by pid" "why run --wait=5s gave up"

status=0
wait "$pick" || status=$?
expect_eq "$status" 1 "pick without --wait under the held lock"
expect_contains "$(cat "$TEST_TMP/pick.err")" "(nobody: flock $GPUPIN_STATE_DIR/lock sleep 15) for 10000 ms" \
  "pick's message"

ended_ms=$(event_field "$log" end holder t_ms)
[[ -n $ended_ms ]] || fail "the holder's job did not end"
wait_until 5 "the holder's gpupin to exit" test -s "$TEST_TMP/holder.exited"
exited_ms=$(cat "$TEST_TMP/holder.exited")
echo "the holder's gpupin exited $((exited_ms - ended_ms)) ms after its job, under the held lock"
((exited_ms - ended_ms < 2000 * TIME_FACTOR)) ||
  fail "the holder's gpupin waited $((exited_ms - ended_ms)) ms for the lock after its job ended"

status=0
wait "$kill_leftovers" || status=$?
expect_eq "$status" 1 "ps --leftovers --kill under the held lock"
expect_eq "$(wc -l <"$TEST_TMP/kill.err")" 1 "ps --kill's error is one line: $(cat "$TEST_TMP/kill.err")"
expect_contains "$(cat "$TEST_TMP/kill.err")" "ps --kill: cannot tell live jobs from leftovers" "ps --kill's error"

wait "$waiter" || fail "the queued job failed"
started_ms=$(event_field "$log" start waiter t_ms)
((started_ms >= locked_ms + 14000)) || fail "the waiter started $((started_ms - locked_ms)) ms into the 15 s lock"
expect_contains "$(cat "$TEST_TMP/waiter.err")" "waiting: the state lock is held by pid" "the waiter's line"
expect_contains "$(cat "$TEST_TMP/waiter.err")" "(nobody: flock" "the waiter names the lock's holder"
expect_contains "$(cat "$TEST_TMP/waiter.err")" "running on GPU" "the waiter's job start"
echo PASS
