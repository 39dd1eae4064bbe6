#!/usr/bin/env bash
# Another user writes a queue ticket numbered 0 (lower than every real one)
# for a process of theirs, behind a waiter already queued: the waiter is
# still served first, because the queue's order is the order in which the
# kernel saw the tickets put in place, which no user can set back. (The
# forged ticket then heads the queue, like any waiter that arrived before
# the next one, until its holder exits.) A ticket counts only while a
# gpupin waits for it: the process it names is a copy of `sleep` that runs
# under gpupin's name, as a user may name any program of theirs.
# The admin's queue is fifo, so that `gpupin leases`, which lists the queue
# in the order it is served, lists it in arrival order (under fair share
# nobody, holding no card, would be served before root anyway).
source "$(dirname "$0")/lib.sh"

as_nobody_setup
house_rules '[limits]\nqueue = "fifo"\n'
scenario="$GPUPIN_SOURCE_DIR/tests/e2e/fixtures/one-gpu.json"
log="$TEST_TMP/workload.log"
"$GPUPIN" --simulate "$scenario" run -- "$WORKLOAD" --seconds 60 --name holder --log "$log" 2>/dev/null &
wait_for_line "$log" '"name":"holder"'
"$GPUPIN" --simulate "$scenario" run --wait -- "$WORKLOAD" --seconds 0.05 --name first --log "$log" \
  2>"$TEST_TMP/first.err" &
first=$!
wait_for_line "$TEST_TMP/first.err" 'waiting'
sleep 0.05  # past the file system's clock tick

install -d -m 0755 "$TEST_TMP/named"
install -m 0755 "$(command -v sleep)" "$TEST_TMP/named/gpupin"
"${AS_NOBODY[@]}" "$TEST_TMP/named/gpupin" 60 &
cutter=$!
wait_until 5 "nobody's sleep to start" bash -c "[[ \$(stat -c %U /proc/$cutter) == nobody ]]"
start_ticks=$(awk '{ print $22 }' "/proc/$cutter/stat")
id="$cutter-$start_ticks-0000cafe"
jq -n --arg id "$id" --argjson pid "$cutter" --argjson start "$start_ticks" --argjson uid "$(id -u nobody)" \
  '{format_version: 1, id: $id, seq: 0, holder: {pid: $pid, start_time_ticks: $start}, uid: $uid,
    user: "nobody", command: "cut in", request: "1 GPU", created_unix_ms: 0}' >"$TEST_TMP/forged.json"
chmod 0644 "$TEST_TMP/forged.json"
"${AS_NOBODY[@]}" cp "$TEST_TMP/forged.json" "$GPUPIN_STATE_DIR/queue/0-$id.json"
expect_eq "$(stat -c %U "$GPUPIN_STATE_DIR/queue/0-$id.json")" nobody "owner of the forged ticket"

expect_eq "$("$GPUPIN" --json leases | jq -r '[.queue[] | .command] | join(", ")' | sed 's|.*--name first.*, |first, |')" \
  "first, cut in" "the queue: the first waiter ahead of the ticket numbered 0"

kill -9 "$(event_field "$log" start holder pid)"
wait "$first" || fail "the first waiter failed with status $?"
expect_eq "$(jq -r 'select(.event == "start" and .name != "holder") | .name' "$log")" first \
  "the job that ran when the card freed"
kill "$cutter"
echo PASS
