#!/usr/bin/env bash
# A request this machine can never meet is exit 3 (no GPU), whatever its
# size, with or without --wait; a command that does not exist fails with
# exit 127 (126: not executable) in one line before any GPU is chosen.
source "$(dirname "$0")/lib.sh"
SIM=(--simulate "$EXAMPLES/server-4gpu.json")

for count in 5 999; do
  run_status "$GPUPIN" "${SIM[@]}" pick -n "$count"
  expect_eq "$STATUS" 3 "pick -n $count on 4 cards"
  expect_eq "$ERR" "gpupin: asked for $count GPUs but this machine has 4" "pick -n $count's message"
  run_status timeout 10 "$GPUPIN" "${SIM[@]}" run -n "$count" --wait -- true
  expect_eq "$STATUS" 3 "run -n $count --wait on 4 cards"
done
run_status "$GPUPIN" "${SIM[@]}" pick --only 1,2 -n 3
expect_eq "$STATUS" 3 "more than --only leaves"

run_status "$GPUPIN" "${SIM[@]}" run -- /no/such/command
expect_eq "$STATUS" 127 "run of a command that does not exist"
expect_eq "$ERR" "gpupin: /no/such/command: command not found" "its one line"
run_status "$GPUPIN" "${SIM[@]}" run -- no-such-command-here
expect_eq "$STATUS" 127 "run of a name found nowhere in PATH"
expect_eq "$ERR" "gpupin: no-such-command-here: command not found in PATH" "its one line"
printf 'echo hi\n' >"$TEST_TMP/script"
chmod 0644 "$TEST_TMP/script"
run_status "$GPUPIN" "${SIM[@]}" run -- "$TEST_TMP/script"
expect_eq "$STATUS" 126 "run of a file that is not executable"
expect_eq "$ERR" "gpupin: $TEST_TMP/script: not an executable file" "its one line"
run_status "$GPUPIN" "${SIM[@]}" run -- "$TEST_TMP"
expect_eq "$STATUS" 126 "run of a directory"
run_status "$GPUPIN" "${SIM[@]}" --json leases
expect_eq "$(jq '.leases | length' <<<"$OUT")" 0 "no lease was made"
run_status "$GPUPIN" "${SIM[@]}" run -- true
expect_eq "$STATUS" 0 "a command found in PATH runs"
echo PASS
