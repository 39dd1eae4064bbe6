#!/usr/bin/env bash
# A --simulate or --config file that is no such file gets one line on stderr
# and exit 2, at once: not a hang on a FIFO, not a read of /dev/zero until
# memory runs out, not a driver hint that does not apply.
source "$(dirname "$0")/lib.sh"

mkfifo "$TEST_TMP/fifo"
printf '[]' >"$TEST_TMP/array.json"
printf '{}' >"$TEST_TMP/object.json"
: >"$TEST_TMP/empty.json"
printf '{"gpus": [{"uuid": "GPU-1"}]}' >"$TEST_TMP/bad-uuid.json"
head -c $((17 << 20)) /dev/zero | tr '\0' ' ' >"$TEST_TMP/huge.json"

# expect_one_line_rc2 WHAT EXPECTED_PART ARGS...: gpupin ARGS fails within
# 10 s (x TIME_FACTOR) with status 2 and one line on stderr holding
# EXPECTED_PART.
expect_one_line_rc2() {
  local what=$1 part=$2
  shift 2
  run_status timeout $((10 * TIME_FACTOR)) "$GPUPIN" "$@"
  expect_eq "$STATUS" 2 "exit status for $what"
  expect_eq "$(wc -l <<<"$ERR")" 1 "lines on stderr for $what"
  expect_contains "$ERR" "$part" "$what"
}

for file in /dev/zero "$TEST_TMP/fifo" "$TEST_TMP"; do
  expect_one_line_rc2 "--simulate $file" "gpupin: cannot use the simulated server: $file: not a regular file" \
    --simulate "$file" ls
  expect_one_line_rc2 "--config $file" "gpupin: --config: $file: not a regular file" --config "$file" ls
done
expect_one_line_rc2 "an empty scenario" "empty.json: not valid JSON" --simulate "$TEST_TMP/empty.json" ls
expect_one_line_rc2 "a JSON array" "array.json: expected an object" --simulate "$TEST_TMP/array.json" pick
expect_one_line_rc2 "an empty object" "object.json: missing required key 'gpus'" \
  --simulate "$TEST_TMP/object.json" ls
# doctor too: the command line is wrong, not the machine.
expect_one_line_rc2 "doctor on a bad scenario" "object.json: missing required key 'gpus'" \
  --simulate "$TEST_TMP/object.json" doctor
expect_one_line_rc2 "doctor on a missing scenario" "cannot read simulated server" \
  --simulate "$TEST_TMP/missing.json" doctor
expect_one_line_rc2 "a bad UUID" "bad-uuid.json: gpus[0].uuid: invalid UUID" --simulate "$TEST_TMP/bad-uuid.json" ls
expect_one_line_rc2 "a 17 MiB scenario" "huge.json: larger than 16 MiB" --simulate "$TEST_TMP/huge.json" ls
expect_one_line_rc2 "a missing scenario" "cannot read simulated server" --simulate "$TEST_TMP/missing.json" ls
expect_one_line_rc2 "--config ''" "gpupin: --config: give a file name" --config "" ls
GPUPIN_CONFIG=/dev/zero expect_one_line_rc2 "GPUPIN_CONFIG=/dev/zero" \
  "gpupin: GPUPIN_CONFIG: /dev/zero: not a regular file; point it at a gpupin config file, or unset it" ls
GPUPIN_CONFIG=$TEST_TMP/none.toml expect_one_line_rc2 "a GPUPIN_CONFIG that names no file" \
  "gpupin: GPUPIN_CONFIG: $TEST_TMP/none.toml: No such file or directory" ls
# A waiter's job reads the scenario too; none of this leaves anything queued.
expect_eq "$(find "$GPUPIN_STATE_DIR" -name '*.json' 2>/dev/null | wc -l)" 0 "records left in the state directory"
echo PASS
