#!/usr/bin/env bash
# nobody floods leases/ with 70,000 empty files of its own (no record, no
# reader limit of one user's records applies: they are not records). Read
# in full, millions of such names cost every command of every user seconds
# and hundreds of MiB under the state lock; read in part, a lease could be
# missed. A reader goes through at most 65,536 names of a folder and then
# refuses at once, with one line that names nobody and the fix, in under
# 0.5 s of CPU and 100 MB; a job that holds a card keeps its lease, one
# queued keeps its place (saying why it waits), and gpupin works again once
# the names are gone.
# ctest: RUN_SERIAL
source "$(dirname "$0")/lib.sh"

as_nobody_copies "$EXAMPLES/server-4gpu.json"
gpupin() { "$GPUPIN" --simulate "$SCENARIO" "$@"; }
"$GPUPIN" --simulate "$SCENARIO" -q run --only 1 -- sleep 120 >/dev/null 2>&1 &
job=$!
# SIGTERM, which gpupin passes on to its sleep, before cleanup's SIGKILL.
# shellcheck disable=SC2064 # the job's pid now
trap "kill $job 2>/dev/null || true; wait $job 2>/dev/null || true; cleanup" EXIT
has_lease() { [[ $(gpupin --json leases | jq '.leases | length') == 1 ]]; }
wait_until 20 "the job's lease" has_lease
# A queued job for the same card, which keeps its place through the flood.
"$GPUPIN" --simulate "$SCENARIO" run --wait --only 1 --poll 200ms -- true 2>"$TEST_TMP/waiter.err" &
waiter=$!
queued() { [[ $(gpupin --json leases | jq '.queue | length') == 1 ]]; }
wait_until 20 "the queued job" queued

"${AS_NOBODY[@]}" /usr/bin/python3 - "$GPUPIN_STATE_DIR/leases" <<'PY'
import os, sys
folder = sys.argv[1]
for i in range(70000):
    os.close(os.open(os.path.join(folder, f"flood-{i:06d}.json"), os.O_CREAT | os.O_WRONLY, 0o644))
PY

for command in leases "ps --leftovers --kill --yes"; do
  # shellcheck disable=SC2086 # the command's words
  run_status /usr/bin/time -f '%e %U %S %M' "$GPUPIN" --simulate "$SCENARIO" $command
  expect_eq "$STATUS" 1 "$command in a flooded leases/: $ERR"
  message=$(head -n -1 <<<"$ERR" | grep -v '^Command exited with non-zero status')
  expect_eq "$(wc -l <<<"$message")" 1 "$command says it in one line: $message"
  expect_contains "$message" "leases holds more than 65536 names" "$command names the folder"
  expect_contains "$message" "owned by nobody (uid $(id -u nobody))" "$command names who flooded it"
  expect_contains "$message" "find $GPUPIN_STATE_DIR/leases -user $(id -u nobody) -delete" "$command gives the fix"
  read -r elapsed user system kilobytes < <(tail -1 <<<"$ERR")
  cpu=$(awk -v u="$user" -v s="$system" 'BEGIN { print u + s }')
  echo "$command: refused in ${cpu} s of CPU (${elapsed} s elapsed), ${kilobytes} KB"
  awk -v c="$cpu" -v f="$TIME_FACTOR" 'BEGIN { exit !(c < 0.5 * f) }' ||
    fail "$command took ${cpu} s of CPU to refuse the flood"
  ((kilobytes < 100 * 1024 * TIME_FACTOR)) || fail "$command used ${kilobytes} KB on the flood"
done
kill -0 "$job" || fail "the job ended during the flood"
says_it_waits() { grep -q "keeping our place: state directory part .* holds more than 65536 names" "$TEST_TMP/waiter.err"; }
wait_until 10 "the queued job says why it waits" says_it_waits
kill -0 "$waiter" || fail "the queued job left the queue in the flood: $(cat "$TEST_TMP/waiter.err")"

find "$GPUPIN_STATE_DIR/leases" -user "$(id -u nobody)" -delete
expect_eq "$(gpupin --json leases | jq -r '.leases[0].gpu_indices | join(",")')" 1 \
  "the job's lease is still there once the flood is gone"
expect_eq "$(gpupin --json leases | jq '.queue | length')" 1 "and the queued job's place"
kill "$job"
wait "$job" || true
wait "$waiter" || fail "the queued job did not run once the card was free: $(cat "$TEST_TMP/waiter.err")"
run_status gpupin pick --ttl 1s
expect_eq "$STATUS:$OUT" "0:0" "pick works again"
echo PASS
