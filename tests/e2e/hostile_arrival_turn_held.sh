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
# Any command of root's makes the state directory with the turn's file.
"$GPUPIN" --simulate "$scenario" leases >/dev/null
[[ -f $GPUPIN_STATE_DIR/arrivals ]] || fail "no arrivals file after root's gpupin leases"
expect_eq "$(stat -c '%a %U' "$GPUPIN_STATE_DIR/arrivals")" "644 root" "the turn's file"
# -o: flock itself holds the lock, so that killing it (cleanup does) ends it.
"${AS_NOBODY[@]}" flock -o "$GPUPIN_STATE_DIR/arrivals" sleep 20 >/dev/null 2>&1 &
wait_until 5 "nobody's flock" flock_held "$GPUPIN_STATE_DIR/arrivals"

started=$(now_ms)
run_status "$GPUPIN" --simulate "$scenario" -v run --wait -- true
elapsed=$(($(now_ms) - started))
expect_eq "$STATUS" 0 "run --wait while nobody holds the turn: $ERR"
expect_contains "$ERR" "looking without waiting for the turn: $GPUPIN_STATE_DIR/arrivals was held for 2000 ms" \
  "what -v says"
((elapsed >= 2000 && elapsed < 2000 + 3000 * TIME_FACTOR)) || fail "run --wait took ${elapsed} ms"

run_status "$GPUPIN" --simulate "$scenario" -v run --wait=1s -- true
expect_eq "$STATUS" 0 "run --wait=1s while nobody holds the turn: $ERR"
grep -Eq "looking without waiting for the turn: .*/arrivals was held for (9[0-9][0-9]|1000) ms" <<<"$ERR" ||
  fail "run --wait=1s waited for the turn beyond its own time: $ERR"

started=$(now_ms)
run_status "$GPUPIN" --simulate "$scenario" run -- true
elapsed=$(($(now_ms) - started))
expect_eq "$STATUS" 0 "run without --wait while nobody holds the turn: $ERR"
((elapsed < 1000 * TIME_FACTOR)) || fail "run without --wait took ${elapsed} ms"
echo PASS
