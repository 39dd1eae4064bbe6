#!/usr/bin/env bash
# nobody floods the state directory: 20,000 junk records of its own, each
# valid and naming its own live `sleep` (so nobody else may remove them),
# 300 of them 60 KB large, and 2,000 queue tickets naming the same `sleep`.
# A record larger than a lease can be is skipped unread, and a reader goes
# through at most 1024 records of one user, so root's `pick` stays under
# 0.2 s and 50 MB (release build) and chooses a card.
# ctest: RUN_SERIAL
source "$(dirname "$0")/lib.sh"

as_nobody_copies "$EXAMPLES/server-4gpu.json"
gpupin() { "$GPUPIN" --simulate "$SCENARIO" "$@"; }
gpupin leases >/dev/null # creates the state directory
nobody_sleeps 120
"${AS_NOBODY[@]}" python3 - "$GPUPIN_STATE_DIR" "$SLEEPER" "$SLEEPER_START" "$(id -u nobody)" <<'PY'
import json, sys
state, pid, start, uid = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
holder = {"pid": pid, "start_time_ticks": start}
for i in range(20000):
    rid = f"{pid}-{start}-{i:08x}"
    lease = {"format_version": 1, "id": rid, "gpu_uuids": [f"GPU-junk-{i}"], "holder": holder,
             "uid": uid, "user": "nobody", "command": "junk" + ("x" * 60000 if i < 300 else ""),
             "created_unix_ms": 0, "reservation_baseline_pids": []}
    with open(f"{state}/leases/{rid}.json", "w") as f:
        json.dump(lease, f)
for i in range(2000):
    rid = f"{pid}-{start}-t{i:07x}"
    ticket = {"format_version": 1, "id": rid, "seq": i + 1, "holder": holder, "waiter": holder,
              "uid": uid, "user": "nobody", "command": "junk", "request": "1 GPU", "created_unix_ms": 0}
    with open(f"{state}/queue/{i + 1}-{rid}.json", "w") as f:
        json.dump(ticket, f)
PY
expect_eq "$(ls "$GPUPIN_STATE_DIR/leases" | wc -l)" 20000 "nobody's junk leases"

for round in 1 2; do
  run_status /usr/bin/time -f '%e %M' "$GPUPIN" --simulate "$SCENARIO" pick --ttl 1s
  expect_eq "$STATUS" 0 "root's pick among the junk, round $round"
  read -r seconds kilobytes < <(tail -1 <<<"$ERR")
  echo "round $round: pick took ${seconds} s and ${kilobytes} KB among 22,000 junk records"
  awk -v s="$seconds" -v f="$TIME_FACTOR" 'BEGIN { exit !(s < 0.2 * f) }' ||
    fail "pick took ${seconds} s among the junk (limit $(awk -v f="$TIME_FACTOR" 'BEGIN { print 0.2 * f }') s)"
  ((kilobytes < 50 * 1024 * TIME_FACTOR)) || fail "pick used ${kilobytes} KB among the junk"
done
expect_eq "$(find "$GPUPIN_STATE_DIR/leases" -user nobody | wc -l)" 20000 "nobody's live junk, which root leaves alone"
echo PASS
