#!/usr/bin/env bash
# nobody holds the newcomers' turn to look (the state directory's
# `arrivals`, LeaseStore::TakeArrivalTurn) with flock(1). root's `run
# --wait` onto a free card waits for the turn at most its 2 s, then looks
# and starts all the same, saying why under -v; a `--wait=1s` waits for it
# no longer than its own time, and a command without --wait never waits
# for it.
# ctest: RUN_SERIAL
source "$(dirname "$0")/lib.sh"

as_nobody_setup
scenario="$EXAMPLES/server-4gpu.json"
"$GPUPIN" --simulate "$scenario" run --wait -- true # creates the state directory and the turn's file
[[ -f $GPUPIN_STATE_DIR/arrivals ]] || fail "no arrivals file in the state directory"
# -o: flock itself holds the lock, so that killing it (cleanup does) ends it.
"${AS_NOBODY[@]}" flock -o "$GPUPIN_STATE_DIR/arrivals" sleep 20 >/dev/null 2>&1 &
held() { ! flock -n "$GPUPIN_STATE_DIR/arrivals" true; }
wait_until 5 "nobody's flock" held

started=$(now_ms)
run_status "$GPUPIN" --simulate "$scenario" -v run --wait -- true
elapsed=$(($(now_ms) - started))
expect_eq "$STATUS" 0 "run --wait while nobody holds the turn: $ERR"
expect_contains "$ERR" "looking without waiting for the turn: $GPUPIN_STATE_DIR/arrivals was held for 2000 ms" \
  "what -v says"
((elapsed >= 2000 && elapsed < 2000 + 3000 * TIME_FACTOR)) || fail "run --wait took ${elapsed} ms"

started=$(now_ms)
run_status "$GPUPIN" --simulate "$scenario" run --wait=1s -- true
elapsed=$(($(now_ms) - started))
expect_eq "$STATUS" 0 "run --wait=1s while nobody holds the turn: $ERR"
((elapsed < 1000 + 2000 * TIME_FACTOR)) || fail "run --wait=1s took ${elapsed} ms"

started=$(now_ms)
run_status "$GPUPIN" --simulate "$scenario" run -- true
elapsed=$(($(now_ms) - started))
expect_eq "$STATUS" 0 "run without --wait while nobody holds the turn: $ERR"
((elapsed < 1000 * TIME_FACTOR)) || fail "run without --wait took ${elapsed} ms"
echo PASS
