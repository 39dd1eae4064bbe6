#!/usr/bin/env bash
# ctest: RUN_SERIAL
# nobody creates and deletes files (hidden ones too) in leases/ and queue/
# as fast as it can, while root's waiter stands at the head of the queue.
# Each change used to wake the waiter for a read of the state: it spent
# nearly as much CPU as the churner. After each reported change the waiter
# now takes the next together (for four times the CPU the last cost it, 20
# ms to 2 s), so it spends a small fraction of the churner's CPU, keeps its
# place, and still starts at once when a card is freed.
source "$(dirname "$0")/lib.sh"

as_nobody_copies "$EXAMPLES/server-4gpu.json"
log="$TEST_TMP/workload.log"
root_holds_every_card

# Not through the function: $! is the waiting gpupin itself.
"$GPUPIN" --simulate "$SCENARIO" run --wait -- "$WORKLOAD" --seconds 0.1 --name waiter --log "$log" \
  2>"$TEST_TMP/waiter.err" &
waiter=$!
wait_for_line "$TEST_TMP/waiter.err" 'waiting'

expect_attack_costs_waiter_little "$waiter" "rounds of changes" 100 "$GPUPIN_STATE_DIR" 3 <<'PY'
import os, sys, time
state, seconds = sys.argv[1], float(sys.argv[2])
end = time.monotonic() + seconds
n = 0
while time.monotonic() < end:
    for folder in ("leases", "queue"):
        for name in (f"churn{n % 64}.json", f".churn{n % 64}"):  # hidden names too
            path = f"{state}/{folder}/{name}"
            open(path, "w").close()
            os.unlink(path)
    n += 1
print(n, time.process_time())
PY

kill -0 "$waiter" || fail "the waiter ended during the churn: $(cat "$TEST_TMP/waiter.err")"
expect_start_after_kill "$(event_field "$log" start holder2 pid)" "$waiter" waiter 3000
kill "$(event_field "$log" start holder0 pid)" "$(event_field "$log" start holder1 pid)" \
  "$(event_field "$log" start holder3 pid)"
echo PASS
