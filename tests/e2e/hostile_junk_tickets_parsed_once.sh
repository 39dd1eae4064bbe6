#!/usr/bin/env bash
# ctest: RUN_SERIAL
# nobody fills queue/ with 1000 junk tickets of 16 KiB each: valid JSON,
# named as tickets, but no ticket a reader accepts, so each costs a full
# parse. root's waiter stands at the head while the cards are held, and is
# woken by 10 changes in leases/, 400 ms apart. Each wake-up used to parse
# all the junk again (16 MB of JSON); a gpupin now keeps its verdict on a
# file that has not changed, so the waiter spends its CPU on the first read
# only, and still starts at once when a card is freed.
source "$(dirname "$0")/lib.sh"

as_nobody_copies "$EXAMPLES/server-4gpu.json"
log="$TEST_TMP/workload.log"
root_holds_every_card

"${AS_NOBODY[@]}" /usr/bin/python3 - "$GPUPIN_STATE_DIR/queue" <<'PY'
import sys
queue = sys.argv[1]
junk = '{"numbers": [' + ",".join(["12345"] * 2700) + "]}"
assert len(junk) < 16 * 1024
for i in range(1000):
    with open(f"{queue}/{i + 1}-junk{i:06d}.json", "w") as f:
        f.write(junk)
PY
expect_eq "$(ls "$GPUPIN_STATE_DIR/queue" | wc -l)" 1000 "nobody's junk tickets"

# Not through the function: $! is the waiting gpupin itself.
"$GPUPIN" --simulate "$SCENARIO" run --wait -- "$WORKLOAD" --seconds 0.1 --name waiter --log "$log" \
  2>"$TEST_TMP/waiter.err" &
waiter=$!
wait_for_line "$TEST_TMP/waiter.err" 'waiting'
sleep 1 # past the quiet spell of its first read

before=$(cpu_ticks "$waiter")
for change in $(seq 10); do
  touch "$GPUPIN_STATE_DIR/leases/change$change.json"
  sleep 0.4
done
after=$(cpu_ticks "$waiter")
waiter_seconds=$(awk -v t=$((after - before)) -v hz="$(getconf CLK_TCK)" 'BEGIN { print t / hz }')
echo "the waiter spent ${waiter_seconds}s of CPU on 10 wake-ups among 1000 junk tickets"
awk -v w="$waiter_seconds" -v f="$TIME_FACTOR" 'BEGIN { exit !(w <= 0.25 * f) }' ||
  fail "the waiter spent ${waiter_seconds}s of CPU on 10 wake-ups (limit $(awk -v f="$TIME_FACTOR" 'BEGIN { print 0.25 * f }') s)"

kill -0 "$waiter" || fail "the waiter ended: $(cat "$TEST_TMP/waiter.err")"
expect_start_after_kill "$(event_field "$log" start holder2 pid)" "$waiter" waiter 3000
kill "$(event_field "$log" start holder0 pid)" "$(event_field "$log" start holder1 pid)" \
  "$(event_field "$log" start holder3 pid)"
echo PASS
