#!/usr/bin/env bash
# A CUDA driver that hangs in cuInit costs the probe's whole time-out (5 s).
# ls and map keep that failure beside the driver's order, under the same
# key, so that the next commands (this user's, and everyone's when root's)
# guess at once instead of waiting again; ten minutes after the failure the
# driver is asked again, and an order it then gives replaces the failure.
# map --probe always asks the driver itself.
source "$(dirname "$0")/lib.sh"
as_nobody_setup
MIXED="$EXAMPLES/workstation-mixed.json"
HANG="$TEST_TMP/hang.json"
jq '.cuda_init_hangs = true' "$MIXED" >"$HANG"
KEPT="$GPUPIN_STATE_DIR/cuda-order-$(id -u).json"
RETRY_MS=$((10 * 60 * 1000))

inode() { stat -c %i "$1"; }
# timed CMD...: run_status CMD, and how long it took in TOOK (ms).
timed() {
  local start
  start=$(now_ms)
  run_status "$@"
  TOOK=$(($(now_ms) - start))
}
# age MS: the kept failure, recorded MS earlier than it was.
age() {
  jq --argjson ms "$1" '.probe_failed.unix_ms -= $ms' "$KEPT" >"$TEST_TMP/aged.json"
  install -m 0644 "$TEST_TMP/aged.json" "$KEPT"
}
# The timed-out probe takes 5 s; a command that does not probe takes tens of ms.
QUICK_MS=$((1500 * TIME_FACTOR))

# The first ls waits out the time-out, guesses, and keeps why.
timed "$GPUPIN" --simulate "$HANG" -v --json ls
expect_eq "$STATUS" 0 "ls with a hung driver"
((TOOK >= 5000)) || fail "the first ls did not wait for the driver: ${TOOK} ms"
expect_eq "$(jq -r .cuda_order <<<"$OUT")" guess "the first ls guesses"
expect_contains "$ERR" "did not answer within 5000 ms (stuck in cuInit)" "-v: why"
expect_contains "$ERR" "kept: the CUDA driver is not asked again before" "-v: until when"
expect_eq "$(jq -c '[.format_version, has("fastest_first_uuids"), (.probe_failed.reason | test("stuck in cuInit"))]' "$KEPT")" \
  '[2,false,true]' "the kept failure"
failed_at=$(jq .probe_failed.unix_ms "$KEPT")
((failed_at > $(now_ms) - 60000)) || fail "the failure is not dated now: $failed_at"
expect_eq "$(stat -c '%U %a' "$KEPT")" "root 644" "kept as the caller's, 0644"
kept=$(inode "$KEPT")

# The next ls does not ask the driver: quick, the same file, the guess said.
timed "$GPUPIN" --simulate "$HANG" -v --json ls
((TOOK < QUICK_MS)) || fail "the second ls waited for the driver again: ${TOOK} ms"
expect_eq "$(jq -r .cuda_order <<<"$OUT")" guess "the second ls guesses"
expect_contains "$ERR" "cuda:N is a guess: at " "-v: the kept failure"
expect_contains "$ERR" "the CUDA driver's numbering could not be read (asked again from " "-v: the retry"
expect_contains "$ERR" "): the CUDA driver did not answer within 5000 ms (stuck in cuInit)" "-v: the reason"
expect_eq "$(inode "$KEPT")" "$kept" "the second ls did not probe"
timed "$GPUPIN" --simulate "$HANG" ls
((TOOK < QUICK_MS)) || fail "the table waited for the driver: ${TOOK} ms"
expect_contains "$OUT" "cuda:N is a guess" "the table says it guesses"
# map (without --probe) likewise.
timed "$GPUPIN" --simulate "$HANG" --json map
((TOOK < QUICK_MS)) || fail "map waited for the driver: ${TOOK} ms"
expect_eq "$(jq -c '[.cuda_order_is_guess, .cuda_order]' <<<"$OUT")" '[true,"guess"]' "map guesses"
expect_eq "$(inode "$KEPT")" "$kept" "map did not probe"

# Root's kept failure spares every user the wait: nobody, whose gpupin could
# ask the driver, does not.
as_nobody_copies "$HANG"
install -m 0755 "$GPUPIN_BIN_DIR/libgpupin-sim-cuda.so" "$TEST_TMP/bin"
timed "${AS_NOBODY[@]}" "$GPUPIN" --simulate "$SCENARIO" --json ls
expect_eq "$STATUS" 0 "nobody's ls"
((TOOK < QUICK_MS)) || fail "nobody waited for the driver despite root's kept failure: ${TOOK} ms"
expect_eq "$(jq -r .cuda_order <<<"$OUT")" guess "nobody guesses"
[[ ! -e $GPUPIN_STATE_DIR/cuda-order-65534.json ]] || fail "nobody probed"

# map --probe asks the driver whatever is kept.
timed "$GPUPIN" --simulate "$HANG" --json map --probe
((TOOK >= 5000)) || fail "map --probe did not ask the driver: ${TOOK} ms"
expect_eq "$(jq -r .probe.status <<<"$OUT")" timed_out "map --probe: the driver hung"

# Just short of ten minutes later the failure still stands.
age $((RETRY_MS - 60000))
kept=$(inode "$KEPT")
timed "$GPUPIN" --simulate "$HANG" --json ls
((TOOK < QUICK_MS)) || fail "nine minutes after, ls asked the driver: ${TOOK} ms"
expect_eq "$(inode "$KEPT")" "$kept" "nine minutes after, no probe"

# Ten minutes after, ls asks again (and, the driver still hung, keeps the
# new failure). The file as aged is the one to be replaced: the inode
# that aging freed may be the new record's.
age 60000
kept=$(inode "$KEPT")
timed "$GPUPIN" --simulate "$HANG" -v --json ls
((TOOK >= 5000)) || fail "ten minutes after, ls did not ask the driver: ${TOOK} ms"
expect_contains "$ERR" "asking the CUDA driver again: at " "-v: the old failure, asked again"
[[ $(inode "$KEPT") != "$kept" ]] || fail "the new failure was not kept"
(($(jq .probe_failed.unix_ms "$KEPT") > $(now_ms) - 60000)) || fail "the new failure is not dated now"

# The driver recovers: once the failure no longer stands, its order replaces it.
age "$RETRY_MS"
timed "$GPUPIN" --simulate "$MIXED" --json ls
expect_eq "$(jq -c '[[.gpus | sort_by(.cuda_ordinal) | .[].index], .cuda_order]' <<<"$OUT")" \
  '[[1,2,0],"driver"]' "the recovered driver's order"
expect_eq "$(jq -c '[has("probe_failed"), (.fastest_first_uuids | length)]' "$KEPT")" '[false,3]' \
  "the order replaced the failure"
cp "$KEPT" "$TEST_TMP/order.json"

# Root's order beats a user's own kept failure: nobody, whose own file says
# the driver hung a moment ago, numbers by root's order.
jq --argjson at "$(now_ms)" 'del(.fastest_first_uuids) | .probe_failed = {unix_ms: $at, reason: "hung"}' \
  "$TEST_TMP/order.json" >"$TEST_TMP/nobody-failure.json"
chmod 0644 "$TEST_TMP/nobody-failure.json"
"${AS_NOBODY[@]}" cp "$TEST_TMP/nobody-failure.json" "$GPUPIN_STATE_DIR/cuda-order-65534.json"
run_status "${AS_NOBODY[@]}" "$GPUPIN" --simulate "$SCENARIO" --json ls
expect_eq "$(jq -r .cuda_order <<<"$OUT")" driver "root's order over nobody's own failure"

# A failure dated in the future (the clock was set back) is not believed.
jq --argjson at $(($(now_ms) + 3600000)) '.probe_failed.unix_ms = $at' \
  "$TEST_TMP/nobody-failure.json" >"$TEST_TMP/failure.json"
install -m 0644 "$TEST_TMP/failure.json" "$KEPT"
expect_eq "$("$GPUPIN" --simulate "$MIXED" --json ls | jq -r .cuda_order)" driver "a failure from the future"
# Nor is one that another user planted under root's name.
rm "$KEPT"
jq --argjson at "$(now_ms)" '.probe_failed.unix_ms = $at' "$TEST_TMP/failure.json" >"$TEST_TMP/planted.json"
chmod 0644 "$TEST_TMP/planted.json"
"${AS_NOBODY[@]}" cp "$TEST_TMP/planted.json" "$KEPT"
run_status "$GPUPIN" --simulate "$MIXED" -v --json ls
expect_contains "$ERR" "cuda-order-0.json skipped: belongs to uid 65534, not to uid 0" "-v: the planted failure"
expect_eq "$(jq -r .cuda_order <<<"$OUT")" driver "a planted failure is not followed"

# map --probe of an environment that leaves the driver its own numbering
# (neither CUDA_VISIBLE_DEVICES nor CUDA_DEVICE_ORDER) asks what the kept
# order's probe asks: map checks what gpupin had (here the guess) against
# the answer, which then replaces the failure that still stood, and the
# next ls follows it without asking again. Asked for part of the machine,
# its answer is not kept.
standing_failure() {
  jq --argjson at "$(now_ms)" '.probe_failed.unix_ms = $at' "$TEST_TMP/failure.json" >"$TEST_TMP/standing.json"
  rm -f "$KEPT"
  install -m 0644 "$TEST_TMP/standing.json" "$KEPT"
}
standing_failure
run_status "$GPUPIN" --simulate "$MIXED" --json map --env 'CUDA_VISIBLE_DEVICES=1,0' --probe
expect_eq "$STATUS" 0 "map --probe of part of the machine"
expect_eq "$(jq -c 'has("probe_failed")' "$KEPT")" true "a probe of part of the machine is not kept"
run_status "$GPUPIN" --simulate "$MIXED" --json map --probe
expect_eq "$STATUS" 0 "map --probe over a standing failure"
expect_eq "$(jq -c '[.cuda_order, .probe.status]' <<<"$OUT")" '["guess","ok"]' "map checks the guess against the driver"
expect_eq "$(jq -c '[has("probe_failed"), (.fastest_first_uuids | length)]' "$KEPT")" '[false,3]' \
  "map --probe's order replaced the standing failure"
kept=$(inode "$KEPT")
timed "$GPUPIN" --simulate "$MIXED" --json ls
expect_eq "$(jq -c '[[.gpus | sort_by(.cuda_ordinal) | .[].index], .cuda_order]' <<<"$OUT")" \
  '[[1,2,0],"driver"]' "ls follows the order map --probe kept"
expect_eq "$(inode "$KEPT")" "$kept" "ls did not probe again"
# A map --probe whose driver hangs leaves that order alone.
timed "$GPUPIN" --simulate "$HANG" --json map --probe
expect_eq "$(jq -r .probe.status <<<"$OUT")" timed_out "map --probe: the driver hung"
expect_eq "$(jq -c '[has("probe_failed"), (.fastest_first_uuids | length)]' "$KEPT")" '[false,3]' \
  "a failed map --probe does not replace a kept order"
echo PASS
