#!/usr/bin/env bash
# Traps planted in the shared state directory: a symlink at a lease path,
# garbage, a truncated lease, a FIFO in the queue. Each is skipped with a
# line under -v, nothing is followed or changed, and `run` still works. A
# state directory that is a symlink, or writable by all without the sticky
# bit, is refused with a message.
source "$(dirname "$0")/lib.sh"

scenario="$EXAMPLES/server-4gpu.json"
"$GPUPIN" --simulate "$scenario" ls >/dev/null  # creates the directory
leases="$GPUPIN_STATE_DIR/leases"
echo "precious" >"$TEST_TMP/target"
ln -s "$TEST_TMP/target" "$leases/123-456-deadbeef.json"
echo "garbage" >"$leases/999-1-aaaaaaaa.json"
printf '{"schema_version":1,"lease_id":"77-1-bbbbbbbb","gpus":[{"uu' >"$leases/77-1-bbbbbbbb.json"
head -c 100000 /dev/zero >"$leases/88-1-cccccccc.json"
echo "x" >"$leases/not a lease"
mkfifo "$GPUPIN_STATE_DIR/queue/5-5-dddddddd.json"

run_status timeout 10 "$GPUPIN" --simulate "$scenario" -v run -- true
expect_eq "$STATUS" 0 "run among the traps"
expect_contains "$ERR" "123-456-deadbeef.json: is a symbolic link (not followed)" "the symlink"
expect_contains "$ERR" "999-1-aaaaaaaa.json: lease is not valid JSON" "the garbage file"
expect_contains "$ERR" "77-1-bbbbbbbb.json: lease is not valid JSON (truncated?)" "the truncated lease"
expect_contains "$ERR" "88-1-cccccccc.json" "the oversized file"
expect_contains "$ERR" "5-5-dddddddd.json: is not a regular file" "the FIFO"
expect_contains "$ERR" "running on GPU" "the job's start"
[[ -L "$leases/123-456-deadbeef.json" ]] || fail "the planted symlink was replaced or removed"
expect_eq "$(cat "$TEST_TMP/target")" "precious" "the symlink's target"
[[ -p "$GPUPIN_STATE_DIR/queue/5-5-dddddddd.json" ]] || fail "the planted FIFO was touched"

ln -s "$GPUPIN_STATE_DIR" "$TEST_TMP/link"
run_status env GPUPIN_STATE_DIR="$TEST_TMP/link" "$GPUPIN" --simulate "$scenario" run -- true
expect_eq "$STATUS" 1 "run with a symlinked state directory"
expect_contains "$ERR" "is a symbolic link; refusing to follow it" "why the symlink is refused"

mkdir "$TEST_TMP/open"
chmod 0777 "$TEST_TMP/open"
run_status env GPUPIN_STATE_DIR="$TEST_TMP/open" "$GPUPIN" --simulate "$scenario" run -- true
expect_eq "$STATUS" 1 "run with a 0777 state directory"
expect_contains "$ERR" "writable by others without the sticky bit (mode 0777)" "why 0777 is refused"
expect_contains "$ERR" "chmod 1777" "the fix for 0777"
