#!/usr/bin/env bash
# A lease held by a process that never ends would never end: env --for 1
# (init) and a kernel thread are refused in one line. A read-only command
# given a state directory that does not exist exits 1: a mistyped path
# would show every card unleased.
source "$(dirname "$0")/lib.sh"
SIM=(--simulate "$EXAMPLES/server-4gpu.json")

run_status "$GPUPIN" "${SIM[@]}" env --for 1
expect_eq "$STATUS" 2 "env --for 1"
expect_eq "$ERR" "gpupin: --for: pid 1 is init, which never ends, and so would the lease; give the shell or job that will use the GPUs" "env --for 1's message"
kthread=$(awk '$4 == 2 {print $1; exit}' /proc/[0-9]*/stat 2>/dev/null || true)
if [[ $(id -u) == 0 && -n "$kthread" ]]; then
  run_status "$GPUPIN" "${SIM[@]}" env --for "$kthread"
  expect_eq "$STATUS" 2 "env --for a kernel thread"
  expect_contains "$ERR" "is a kernel thread, which never ends" "a kernel thread's message"
fi
run_status "$GPUPIN" "${SIM[@]}" --json leases
expect_eq "$(jq '.leases | length' <<<"$OUT")" 0 "no lease was made"

for command in ls ps leases release config; do
  run_status "$GPUPIN" "${SIM[@]}" --state-dir "$TEST_TMP/no-such-dir" $command
  expect_eq "$STATUS" 1 "$command with a state directory that does not exist"
  expect_eq "$ERR" "gpupin: state directory $TEST_TMP/no-such-dir does not exist; check --state-dir or GPUPIN_STATE_DIR (gpupin creates it when it first takes a GPU)" "$command's message"
done
GPUPIN_STATE_DIR="$TEST_TMP/no-such-dir" run_status "$GPUPIN" "${SIM[@]}" ls
expect_eq "$STATUS" 1 "ls with GPUPIN_STATE_DIR naming no directory"
[[ ! -e "$TEST_TMP/no-such-dir" ]] || fail "a read-only command created the state directory"
run_status "$GPUPIN" "${SIM[@]}" --state-dir "$TEST_TMP/no-such-dir" map
expect_eq "$STATUS" 1 "map with a state directory that does not exist"
# doctor and completion look without creating it: doctor says so as a
# finding, with its other checks; completion has no lease id to offer.
run_status "$GPUPIN" "${SIM[@]}" --state-dir "$TEST_TMP/no-such-dir" doctor
expect_eq "$STATUS" 1 "doctor with a state directory that does not exist"
expect_contains "$OUT" "$TEST_TMP/no-such-dir does not exist: named by --state-dir" "doctor's finding"
expect_contains "$OUT" "health " "doctor's other checks still run"
run_status "$GPUPIN" "${SIM[@]}" --state-dir "$TEST_TMP/no-such-dir" completion --list leases
expect_eq "$STATUS:$OUT" "0:" "completion's lease ids from a state directory that does not exist"
[[ ! -e "$TEST_TMP/no-such-dir" ]] || fail "map, doctor or completion created the state directory"
run_status "$GPUPIN" "${SIM[@]}" --state-dir "$TEST_TMP/new-dir" pick
expect_eq "$STATUS" 0 "pick creates the state directory it names"
run_status "$GPUPIN" "${SIM[@]}" --state-dir "$TEST_TMP/new-dir" ls
expect_eq "$STATUS" 0 "ls once it exists"
echo PASS
