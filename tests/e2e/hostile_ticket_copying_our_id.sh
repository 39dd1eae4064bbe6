#!/usr/bin/env bash
# nobody holds the 4 cards and copies root's waiting ticket, id and all, into
# a ticket of its own later in the queue, held by a live gpupin of nobody's.
# Root's waiter once took that copy for its own place, waited behind itself,
# and never started on the cards nobody freed. Its place is its own ticket:
# it stays first, and starts as soon as a card is freed.
source "$(dirname "$0")/lib.sh"

as_nobody_copies "$EXAMPLES/server-4gpu.json"
log="$TEST_TMP/workload.log"
install -m 0666 /dev/null "$log"
"$GPUPIN" --simulate "$SCENARIO" leases >/dev/null # root creates the state directory's parts
for card in 0 1 2 3; do
  "${AS_NOBODY[@]}" "$GPUPIN" --simulate "$SCENARIO" run --only "$card" -- \
    "$WORKLOAD" --seconds 120 --name "nobody$card" --log "$log" 2>>"$TEST_TMP/nobody.err" &
done
kill_workloads_at_exit
wait_until 10 "nobody's four jobs started" lines_at_least "$log" '"event":"start"' 4
# A live gpupin of nobody's, for the copy to name: it never takes a turn.
"${AS_NOBODY[@]}" "$GPUPIN" --simulate "$SCENARIO" ls --watch 3600 >/dev/null 2>&1 &
watcher=$!

"$GPUPIN" --simulate "$SCENARIO" run --wait -- "$WORKLOAD" --seconds 0.1 --name root --log "$log" \
  2>"$TEST_TMP/root.err" &
waiter=$!
wait_for_line "$TEST_TMP/root.err" 'waiting'

"${AS_NOBODY[@]}" /usr/bin/python3 - "$GPUPIN_STATE_DIR/queue" "$watcher" <<'PY'
import glob, json, os, sys
queue, watcher = sys.argv[1], int(sys.argv[2])
with open(f"/proc/{watcher}/stat") as stat:
    start = int(stat.read().rsplit(")", 1)[1].split()[19])
[victim] = [json.load(open(name)) for name in glob.glob(f"{queue}/*.json")]
copy = dict(victim, uid=os.getuid(), user="nobody", seq=victim["seq"] + 1, command="copy",
            holder={"pid": watcher, "start_time_ticks": start})
copy["waiter"] = copy["holder"]
with open(f"{queue}/.copy", "w") as f:
    json.dump(copy, f)
os.chmod(f"{queue}/.copy", 0o644)
os.rename(f"{queue}/.copy", f"{queue}/{copy['seq']}-{victim['id']}.json")
PY
# Any change in leases/ makes the head waiter read the queue again.
"${AS_NOBODY[@]}" sh -c ": >'$GPUPIN_STATE_DIR/leases/wake.json'; rm '$GPUPIN_STATE_DIR/leases/wake.json'"
sleep 0.5
kill -0 "$waiter" || fail "root's waiter ended: $(cat "$TEST_TMP/root.err")"
[[ $(tail -n 1 "$TEST_TMP/root.err") != *"in queue ("*"ahead"* ]] ||
  fail "root's waiter counts a ticket ahead of it: $(tail -n 1 "$TEST_TMP/root.err")"

expect_start_after_kill "$(event_field "$log" start nobody2 pid)" "$waiter" root 3000
kill "$watcher"
echo PASS
