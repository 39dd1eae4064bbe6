#!/usr/bin/env bash
# ctest: RUN_SERIAL
# In a fifo queue, nobody's waiter stands just ahead of root's, and nobody
# opens its own ticket for writing and closes it as fast as it can: each
# close is a nudge, which tells the waiter behind to look at the cards now.
# Each used to cost root's waiter a look and a read of the state. Nudges
# are now taken together as changes are, so root's waiter spends a small
# fraction of the nudger's CPU, and still starts when its turn comes.
source "$(dirname "$0")/lib.sh"

as_nobody_setup
house_rules '[limits]\nqueue = "fifo"\n'
as_nobody_copies "$EXAMPLES/server-4gpu.json"
log="$TEST_TMP/workload.log"
install -m 0666 /dev/null "$log"
root_holds_every_card

"${AS_NOBODY[@]}" "$GPUPIN" --simulate "$SCENARIO" run --wait -- "$WORKLOAD" --seconds 0.1 \
  --name nobody --log "$log" 2>"$TEST_TMP/nobody.err" &
wait_for_line "$TEST_TMP/nobody.err" 'waiting'
sleep 0.05 # past the file system's clock tick: nobody's ticket is first
"$GPUPIN" --simulate "$SCENARIO" run --wait -- "$WORKLOAD" --seconds 0.1 --name root --log "$log" \
  2>"$TEST_TMP/root.err" &
waiter=$!
wait_for_line "$TEST_TMP/root.err" '2nd in queue'

expect_attack_costs_waiter_little "$waiter" nudges 1000 "$GPUPIN_STATE_DIR/queue" 3 <<'PY'
import glob, os, sys, time
queue, seconds = sys.argv[1], float(sys.argv[2])
[ticket] = [name for name in glob.glob(f"{queue}/*.json") if os.stat(name).st_uid == os.getuid()]
end = time.monotonic() + seconds
n = 0
while time.monotonic() < end:
    os.close(os.open(ticket, os.O_WRONLY))
    n += 1
print(n, time.process_time())
PY

kill -0 "$waiter" || fail "root's waiter ended during the nudges: $(cat "$TEST_TMP/root.err")"
kill "$(event_field "$log" start holder0 pid)"
wait_until 10 "nobody's job, first in line, started" lines_at_least "$log" '"name":"nobody"' 1
expect_start_after_kill "$(event_field "$log" start holder1 pid)" "$waiter" root 3000
kill "$(event_field "$log" start holder2 pid)" "$(event_field "$log" start holder3 pid)"
echo PASS
