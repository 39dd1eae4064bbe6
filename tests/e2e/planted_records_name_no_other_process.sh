#!/usr/bin/env bash
# Another user writes, under their own name, a lease on the only card and a
# queue ticket, both naming init (pid 1, which never exits) as their holder
# and waiter. Neither may hold anything: a record counts only on processes
# of its own user, or the card and the head of the queue would be taken for
# as long as the machine runs.
source "$(dirname "$0")/lib.sh"

as_nobody_setup
scenario="$GPUPIN_SOURCE_DIR/tests/e2e/fixtures/one-gpu.json"
"$GPUPIN" --simulate "$scenario" leases >/dev/null  # creates the state directory
uuid=$("$GPUPIN" --simulate "$scenario" --json ls | jq -r '.gpus[0].uuid')
init_start=$(awk '{ print $22 }' /proc/1/stat)
nobody_uid=$(id -u nobody)
lease_id="1-$init_start-0000beef"
ticket_id="1-$init_start-0000cafe"
jq -n --arg id "$lease_id" --arg uuid "$uuid" --argjson start "$init_start" --argjson uid "$nobody_uid" \
  '{format_version: 1, id: $id, gpu_uuids: [$uuid], holder: {pid: 1, start_time_ticks: $start},
    uid: $uid, user: "nobody", command: "hog", created_unix_ms: 0, reservation_baseline_pids: []}' \
  >"$TEST_TMP/lease.json"
jq -n --arg id "$ticket_id" --argjson start "$init_start" --argjson uid "$nobody_uid" \
  '{format_version: 1, id: $id, seq: 0, holder: {pid: 1, start_time_ticks: $start},
    waiter: {pid: 1, start_time_ticks: $start}, uid: $uid, user: "nobody", command: "hog",
    request: "1 GPU", created_unix_ms: 0}' >"$TEST_TMP/ticket.json"
chmod 0644 "$TEST_TMP/lease.json" "$TEST_TMP/ticket.json"
"${AS_NOBODY[@]}" cp "$TEST_TMP/lease.json" "$GPUPIN_STATE_DIR/leases/$lease_id.json"
"${AS_NOBODY[@]}" cp "$TEST_TMP/ticket.json" "$GPUPIN_STATE_DIR/queue/0-$ticket_id.json"

run_status timeout $((10 * TIME_FACTOR)) "$GPUPIN" --simulate "$scenario" run -- true
expect_eq "$STATUS" 0 "run beside a planted lease and ticket naming init"
expect_eq "$("$GPUPIN" --simulate "$scenario" --json leases | jq -c '[.leases[], .queue[]] | length')" 0 \
  "live leases and tickets"
# nobody's own gpupin may not hand a lease to init either. The checkout may
# be private (a mktemp -d clone is 0700): nobody runs copies.
install -d -m 0755 "$TEST_TMP/bin"
install -m 0755 "$GPUPIN" "$GPUPIN_BIN_DIR/libgpupin-sim-nvml.so" "$TEST_TMP/bin"
install -m 0644 "$scenario" "$TEST_TMP/one-gpu.json"
run_status "${AS_NOBODY[@]}" "$TEST_TMP/bin/gpupin" --simulate "$TEST_TMP/one-gpu.json" env --for 1
expect_eq "$STATUS" 2 "env --for another user's process"
expect_contains "$ERR" "pid 1 runs as another user" "env --for another user's process"
echo PASS
