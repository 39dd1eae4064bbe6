#!/usr/bin/env bash
# A bare `gpupin release` ends only the caller's reservations that no job
# has taken over: a running job's lease ends only by its id (or --all),
# with the warning that the job runs on without it.
source "$(dirname "$0")/lib.sh"
SIM=(--simulate "$EXAMPLES/server-4gpu.json")
log="$TEST_TMP/workload.log"

"$GPUPIN" "${SIM[@]}" run -- "$WORKLOAD" --mem 500M --name training --log "$log" 2>"$TEST_TMP/run.err" &
wait_for_line "$log" '"name":"training"'
job=$(jq -r '.leases[] | select(.command | contains("training")) | .lease_id' \
  <<<"$("$GPUPIN" "${SIM[@]}" --json leases)")
[[ -n "$job" ]] || fail "the running job's lease"
"$GPUPIN" "${SIM[@]}" pick >/dev/null  # a stale reservation of this shell

run_status "$GPUPIN" "${SIM[@]}" --json release
expect_eq "$STATUS" 0 "bare release"
expect_eq "$(jq '.released | length' <<<"$OUT")" 1 "one reservation released"
[[ "$(jq -r '.released[0]' <<<"$OUT")" != "$job" ]] || fail "bare release ended the job's lease"
expect_contains "$ERR" "kept $job (" "says which job lease it kept"
expect_contains "$ERR" "gpupin release $job (or --all)" "and how to end it"
run_status "$GPUPIN" "${SIM[@]}" --json leases
expect_eq "$(jq -r '.leases[].lease_id' <<<"$OUT")" "$job" "the job's lease is still there"
# So the next pick does not take the job's card, although it uses under 1G.
run_status "$GPUPIN" "${SIM[@]}" pick --only 0 --explain
expect_eq "$STATUS" 3 "a pick of the job's card"
"$GPUPIN" "${SIM[@]}" release >/dev/null 2>&1

# By id it ends, with today's warning.
run_status "$GPUPIN" "${SIM[@]}" release "$job"
expect_eq "$STATUS" 0 "release by id"
expect_contains "$OUT" "released $job" "the id"
expect_contains "$ERR" "still runs, now without a lease" "the warning"
kill %1 2>/dev/null || true
wait || true

# --all ends every lease of the caller's.
"$GPUPIN" "${SIM[@]}" run -- "$WORKLOAD" --mem 500M --name second --log "$log" 2>"$TEST_TMP/run2.err" &
wait_for_line "$log" '"name":"second"'
run_status "$GPUPIN" "${SIM[@]}" --json release --all
expect_eq "$(jq '.released | length' <<<"$OUT")" 1 "--all ends the running job's lease"
# The workload itself, so that nothing holds the test's output open.
kill "$(event_field "$log" start second pid)" || true
wait || true

# A shell's several env leases end together: one warning for its one job.
bash -c 'for _ in 1 2; do eval "$("$0" "$1" "$2" env 2>/dev/null)"; unset GPUPIN_LEASE_ID CUDA_VISIBLE_DEVICES; done
  "$0" "$1" "$2" release --all' "$GPUPIN" "${SIM[@]}" >"$TEST_TMP/two.out" 2>"$TEST_TMP/two.err"
expect_eq "$(grep -c '^released ' "$TEST_TMP/two.out")" 2 "the shell's two env leases"
expect_eq "$(grep -c 'now without a lease' "$TEST_TMP/two.err")" 1 "the warning, once"
echo PASS
