#!/usr/bin/env bash
# A gpupin started under another name (a link `gp`, as an alias or a
# wrapper might make) neither jumps the queue nor ends anyone's place in
# it: it counts the waiters of gpupin, and a gpupin that passes over a
# waiter named otherwise leaves its ticket while that waiter lives.
source "$(dirname "$0")/lib.sh"

as_nobody_copies "$EXAMPLES/server-4gpu.json"
ln -s gpupin "$TEST_TMP/bin/gp"
GP="$TEST_TMP/bin/gp"
log="$TEST_TMP/log"

# Root's job on card 0; nobody queues for that card.
"$GPUPIN" --simulate "$SCENARIO" -q run --only 0 -- "$WORKLOAD" --seconds 60 --name holder --log "$log" &
wait_for_line "$log" '"name":"holder"'
ALSO_KILL=("$(event_field "$log" start holder pid)")
"${AS_NOBODY[@]}" "$GPUPIN" --simulate "$SCENARIO" run --wait --only 0,1 --exclude 1 -- true 2>"$TEST_TMP/nobody.err" &
nobody=$!
wait_for_line "$TEST_TMP/nobody.err" "waiting: next in queue"

# Root's gp, as root, on a free card: behind nobody's waiter, whose ticket stays.
run_status "$GP" --simulate "$SCENARIO" run --only 2 -- true
expect_eq "$STATUS" 3 "gp's run beside nobody's waiter"
expect_contains "$ERR" "1 job is already waiting for GPUs (first: nobody, 1 GPU (--only 0,1 --exclude 1))" \
  "gp queues behind gpupin's waiter, whose cards are named"
expect_eq "$(find "$GPUPIN_STATE_DIR/queue" -name '*.json' | wc -l)" 1 "nobody's ticket is still there"
kill -0 "$nobody" || fail "nobody's waiter gave up: $(cat "$TEST_TMP/nobody.err")"

# nobody waits as gp: root's gpupin passes over that ticket, and leaves it.
kill "$nobody"
wait "$nobody" 2>/dev/null || true
"${AS_NOBODY[@]}" "$GP" --simulate "$SCENARIO" run --wait --only 0 -- true 2>"$TEST_TMP/gp.err" &
gp_waiter=$!
wait_for_line "$TEST_TMP/gp.err" "waiting: next in queue"
run_status "$GPUPIN" --simulate "$SCENARIO" run --only 2 -- true
expect_eq "$STATUS" 0 "gpupin passes over a waiter of another name"
expect_eq "$(find "$GPUPIN_STATE_DIR/queue" -name '*.json' | wc -l)" 1 "and leaves its ticket"
kill -0 "$gp_waiter" || fail "gp's waiter lost its place: $(cat "$TEST_TMP/gp.err")"

# When card 0 frees, gp's waiter takes it.
kill "${ALSO_KILL[@]}"
wait "$gp_waiter"
expect_eq "$?" 0 "gp's waiter ran its job: $(cat "$TEST_TMP/gp.err")"
wait || true
echo PASS
