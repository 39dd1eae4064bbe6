#!/usr/bin/env bash
# nobody writes, under its own name, a queue ticket whose holder and waiter
# are its own `sleep`. A ticket holds a place only while a gpupin waits for
# it, so root's plain `pick` is not held up: all 4 cards are free.
source "$(dirname "$0")/lib.sh"

as_nobody_copies "$EXAMPLES/server-4gpu.json"
gpupin() { "$GPUPIN" --simulate "$SCENARIO" "$@"; }
gpupin leases >/dev/null # creates the state directory
nobody_sleeps 60
id="$SLEEPER-$SLEEPER_START-0000cafe"
jq -n --arg id "$id" --argjson pid "$SLEEPER" --argjson start "$SLEEPER_START" --argjson uid "$(id -u nobody)" \
  '{format_version: 1, id: $id, seq: 1, holder: {pid: $pid, start_time_ticks: $start},
    waiter: {pid: $pid, start_time_ticks: $start}, uid: $uid, user: "nobody", command: "sleep 60",
    request: "1 GPU", created_unix_ms: 0}' >"$TEST_TMP/ticket.json"
chmod 0644 "$TEST_TMP/ticket.json"
"${AS_NOBODY[@]}" cp "$TEST_TMP/ticket.json" "$GPUPIN_STATE_DIR/queue/1-$id.json"

run_status gpupin pick --only 0 --ttl 5s
expect_eq "$STATUS" 0 "root's pick beside nobody's ticket naming sleep: $ERR"
expect_eq "$OUT" 0 "the card root's pick chose"
# A ticket a real gpupin of nobody's waits for does hold a place: nobody's
# job waits for card 0, which root's pick now holds.
"${AS_NOBODY[@]}" "$GPUPIN" --simulate "$SCENARIO" run --only 0 --wait -- true 2>"$TEST_TMP/nobody.err" &
wait_for_line "$TEST_TMP/nobody.err" "waiting: next in queue"
run_status gpupin pick --ttl 5s
expect_eq "$STATUS" 3 "root's pick behind nobody's real waiter"
expect_contains "$ERR" "1 job is already waiting for GPUs (first: nobody, 1 GPU (--only 0))" "root's pick behind nobody's waiter, and the card it waits for"
echo PASS
