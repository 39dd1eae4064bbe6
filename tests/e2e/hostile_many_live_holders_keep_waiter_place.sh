#!/usr/bin/env bash
# ctest: RUN_SERIAL
# nobody writes 150 valid leases of its own on one card, each held by a live
# `sleep` of nobody's, more than the descriptors root's waiter may open
# (ulimit -n 128). The waiter watches at most a quarter of them with a
# pidfd and polls for the rest, so it still lists the queue, keeps its
# place, and starts when one of root's own jobs is killed.
source "$(dirname "$0")/lib.sh"

as_nobody_copies "$EXAMPLES/server-4gpu.json"
gpupin() { "$GPUPIN" --simulate "$SCENARIO" "$@"; }
log="$TEST_TMP/workload.log"
names=(first second third)
for card in 0 1 2; do
  gpupin run --only "$card" -- "$WORKLOAD" --seconds 120 --name "${names[card]}" --log "$log" 2>/dev/null &
done
wait_until 10 "root's three jobs started" lines_at_least "$log" '"event":"start"' 3
last_card=$(gpupin --json ls | jq -r '.gpus[3].uuid')

# Written by nobody, as nobody could write them: valid leases, each held by
# a live process of nobody's.
"${AS_NOBODY[@]}" /usr/bin/python3 - "$GPUPIN_STATE_DIR/leases" "$last_card" 150 >"$TEST_TMP/sleepers" <<'PY'
import json, os, subprocess, sys, time
leases, card, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
sleepers = [subprocess.Popen(["sleep", "120"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             start_new_session=True) for _ in range(count)]
for sleeper in sleepers:
    with open(f"/proc/{sleeper.pid}/stat") as stat:
        start = int(stat.read().rsplit(")", 1)[1].split()[19])
    rid = f"{sleeper.pid}-{start}-{os.urandom(4).hex()}"
    lease = {"format_version": 1, "id": rid, "gpu_uuids": [card],
             "holder": {"pid": sleeper.pid, "start_time_ticks": start}, "uid": os.getuid(),
             "user": "nobody", "command": "sleep", "created_unix_ms": int(time.time() * 1000),
             "reservation_baseline_pids": []}
    with open(f"{leases}/.{rid}", "w") as f:
        json.dump(lease, f)
    os.rename(f"{leases}/.{rid}", f"{leases}/{rid}.json")
print(" ".join(str(sleeper.pid) for sleeper in sleepers))
PY
# shellcheck disable=SC2064 # the pids are known now
trap "kill -9 $(cat "$TEST_TMP/sleepers") 2>/dev/null || true; cleanup" EXIT
expect_eq "$(find "$GPUPIN_STATE_DIR/leases" -user nobody | wc -l)" 150 "nobody's leases"

(
  ulimit -n 128
  exec "$GPUPIN" --simulate "$SCENARIO" run --wait --poll 200ms -- "$WORKLOAD" --seconds 0.1 --name waiter --log "$log"
) 2>"$TEST_TMP/waiter.err" &
waiter=$!
wait_for_line "$TEST_TMP/waiter.err" 'waiting'
sleep 1
kill -0 "$waiter" || fail "the waiter ended while the cards were held: $(cat "$TEST_TMP/waiter.err")"
expect_start_after_kill "$(event_field "$log" start first pid)" "$waiter" waiter 3000
kill "$(event_field "$log" start second pid)" "$(event_field "$log" start third pid)"
echo PASS
