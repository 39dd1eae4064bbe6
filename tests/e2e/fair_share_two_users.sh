#!/usr/bin/env bash
# ctest: RUN_SERIAL
# Fair share (the default queue order) with two real users on 4 cards:
# alice (root) submits 16 one-second jobs at once; bob (nobody) submits one
# 0.4 s later and starts at the first card that frees (within 1.2 s), not
# after alice's batch. Then bob asks for all 4 cards among a stream of
# alice's one-card jobs and starts within 4 s. No two jobs ever share a card.
# gpupin leases lists the queue in the order it is served.
source "$(dirname "$0")/lib.sh"

as_nobody_setup
shared_copies "$EXAMPLES/server-4gpu.json"

alice_job() {
  exec "$GPUPIN" --simulate "$scenario" run --wait -- \
    "$WORKLOAD" --seconds 1 --name "alice$1" --log "$log" 2>"$TEST_TMP/alice$1.err"
}
start_at_once 16 alice_job
alice=("${STARTED[@]}")
sleep 0.4
submitted_ms=$(now_ms)
"${AS_NOBODY[@]}" "$GPUPIN" --simulate "$scenario" run --wait -- \
  "$WORKLOAD" --seconds 1 --name bob --log "$log" 2>"$TEST_TMP/bob.err" &
bob=$!
wait "$bob" || fail "bob's job failed"
started_ms=$(event_field "$log" start bob t_ms)
first_end_ms=$(jq -s 'map(select(.event == "end").t_ms) | min' "$log")
echo "bob's job started $((started_ms - submitted_ms))ms after it was submitted," \
  "$((started_ms - first_end_ms))ms after the first of alice's jobs ended"
((started_ms - submitted_ms <= 1200 * TIME_FACTOR)) ||
  fail "bob's job started $((started_ms - submitted_ms))ms after it was submitted (over 1200ms)"
wait_all_ok "${alice[@]}"
expect_eq "$(grep -c '"event":"end"' "$log")" 17 "workloads that ran to the end"
expect_no_overlap "$log"

# A stream of alice's one-card jobs, submitted one every 0.25 s, and bob's
# request for all four cards among them.
: >"$log"
stream=()
for i in $(seq 24); do
  "$GPUPIN" --simulate "$scenario" run --wait -- \
    "$WORKLOAD" --seconds 1 --name "stream$i" --log "$log" 2>"$TEST_TMP/stream$i.err" &
  stream+=($!)
  if ((i == 8)); then
    submitted_ms=$(now_ms)
    "${AS_NOBODY[@]}" "$GPUPIN" --simulate "$scenario" run -n 4 --wait -- \
      "$WORKLOAD" --seconds 0.5 --name bob4 --log "$log" 2>"$TEST_TMP/bob4.err" &
    bob=$!
  fi
  sleep 0.25
done
wait "$bob" || fail "bob's 4-card job failed"
started_ms=$(event_field "$log" start bob4 t_ms)
echo "bob's 4-card job started $((started_ms - submitted_ms))ms after it was submitted"
((started_ms - submitted_ms <= 4000 * TIME_FACTOR)) ||
  fail "bob's 4-card job started $((started_ms - submitted_ms))ms after it was submitted (over 4000ms)"
expect_eq "$(jq -r 'select(.event == "start" and .name == "bob4") | .nvml_indices | length' "$log")" 4 \
  "cards bob's 4-card job ran on"
wait_all_ok "${stream[@]}"
expect_eq "$(grep -c '"event":"end"' "$log")" 25 "workloads that ran to the end"
expect_no_overlap "$log"

# gpupin leases lists the queue as it is served: behind alice's job on card
# 0 wait alice_a, alice_b, then bob, who holds nothing and so goes first.
: >"$log"
"$GPUPIN" --simulate "$scenario" run --only 0 -- "$WORKLOAD" --seconds 30 --name hold --log "$log" \
  2>/dev/null &
hold=$!
wait_for_line "$log" '"name":"hold"'
for name in alice_a alice_b; do
  "$GPUPIN" --simulate "$scenario" run --only 0 --wait -- true 2>"$TEST_TMP/$name.err" &
  wait_for_line "$TEST_TMP/$name.err" "waiting"
done
"${AS_NOBODY[@]}" "$GPUPIN" --simulate "$scenario" run --only 0 --wait -- true 2>"$TEST_TMP/bob_q.err" &
wait_for_line "$TEST_TMP/bob_q.err" "waiting"
expect_contains "$(cat "$TEST_TMP/bob_q.err")" "waiting: next in queue" "bob is next"
run_status "$GPUPIN" --simulate "$scenario" --json leases
expect_eq "$(jq -c '[.queue[] | [.position, .user]]' <<<"$OUT")" \
  "[[1,\"nobody\"],[2,\"$(id -un)\"],[3,\"$(id -un)\"]]" "the queue in the order it is served"
kill "$hold"
wait
