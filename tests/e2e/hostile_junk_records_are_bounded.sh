#!/usr/bin/env bash
# nobody floods the state directory with 20,000 junk lease records of its
# own, each valid and naming its own live `sleep` (so nobody else may remove
# them), 300 of them 60 KB large. A record larger than a lease can be is
# skipped unread, and a reader goes through at most 1024 records of one
# user, so root's `pick` chooses a card in under 0.2 s of CPU time and
# 50 MB (release build; CPU time, user and system, so that a loaded machine
# does not count; the elapsed time is printed).
# ctest: RUN_SERIAL
source "$(dirname "$0")/lib.sh"

as_nobody_copies "$EXAMPLES/server-4gpu.json"
gpupin() { "$GPUPIN" --simulate "$SCENARIO" "$@"; }
gpupin leases >/dev/null # creates the state directory
nobody_sleeps 120
# Written here and given to nobody: the same files nobody could write.
python3 - "$GPUPIN_STATE_DIR" "$SLEEPER" "$SLEEPER_START" "$(id -u nobody)" "$(id -g nobody)" <<'PY'
import json, os, sys
state, pid, start, uid, gid = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
holder = {"pid": pid, "start_time_ticks": start}
for i in range(20000):
    rid = f"{pid}-{start}-{i:08x}"
    lease = {"format_version": 1, "id": rid, "gpu_uuids": [f"GPU-junk-{i}"], "holder": holder,
             "uid": uid, "user": "nobody", "command": "junk" + ("x" * 60000 if i < 300 else ""),
             "created_unix_ms": 0, "reservation_baseline_pids": []}
    with open(f"{state}/leases/{rid}.json", "w") as f:
        json.dump(lease, f)
        os.fchown(f.fileno(), uid, gid)
PY
expect_eq "$(ls "$GPUPIN_STATE_DIR/leases" | wc -l)" 20000 "nobody's junk leases"

for round in 1 2; do
  run_status /usr/bin/time -f '%e %U %S %M' "$GPUPIN" --simulate "$SCENARIO" pick --ttl 1s
  expect_eq "$STATUS" 0 "root's pick among the junk, round $round"
  read -r elapsed user system kilobytes < <(tail -1 <<<"$ERR")
  cpu=$(awk -v u="$user" -v s="$system" 'BEGIN { print u + s }')
  echo "round $round: pick took ${cpu} s of CPU (${elapsed} s elapsed) and ${kilobytes} KB among 20,000 junk records"
  awk -v c="$cpu" -v f="$TIME_FACTOR" 'BEGIN { exit !(c < 0.2 * f) }' ||
    fail "pick took ${cpu} s of CPU among the junk (limit $(awk -v f="$TIME_FACTOR" 'BEGIN { print 0.2 * f }') s)"
  ((kilobytes < 50 * 1024 * TIME_FACTOR)) || fail "pick used ${kilobytes} KB among the junk"
done
expect_eq "$(find "$GPUPIN_STATE_DIR/leases" -user nobody | wc -l)" 20000 "nobody's live junk, which root leaves alone"
echo PASS
