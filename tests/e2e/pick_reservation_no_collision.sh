#!/usr/bin/env bash
# `CUDA_VISIBLE_DEVICES=$(gpupin pick --wait) workload`, 8 at one instant on 4
# free cards: the reservations give the first 4 distinct cards before any
# workload has allocated, the other 4 wait, and no two workloads ever share a
# card. While the 4 cards run jobs, another pick finds none free.
source "$(dirname "$0")/lib.sh"

scenario="$EXAMPLES/server-4gpu.json"
log="$TEST_TMP/workload.log"
jobs=8
job() {
  # The subshell holds the reservation and then becomes the job (exec), so
  # the job's process appears on the card and the reservation ends.
  # --mem 2G: a job that has allocated its memory (over the 1 GiB
  # exclusive --max-used).
  ids=$("$GPUPIN" --simulate "$scenario" pick --wait 2>>"$TEST_TMP/pick.err")
  echo "$(date +%s%3N) $ids" >>"$TEST_TMP/picks"
  CUDA_VISIBLE_DEVICES=$ids GPUPIN_SIM_SCENARIO=$scenario exec "$WORKLOAD" --mem 2G --seconds 1 --log "$log"
}
start_at_once "$jobs" job

# The first 4 picks: 4 distinct cards, before any workload could start.
wait_until 20 "4 picks succeeded" lines_at_least "$TEST_TMP/picks" . 4
expect_eq "$(head -4 "$TEST_TMP/picks" | cut -d' ' -f2 | sort -u | wc -l)" 4 "distinct cards among the first 4 picks"

# All 4 cards run a job now: a pick that does not wait must find none.
wait_until 20 "4 workloads started" lines_at_least "$log" '"event":"start"' 4
if (($(grep -c '"event":"end"' "$log") == 0)); then
  run_status "$GPUPIN" --simulate "$scenario" pick --ttl 5s
  expect_eq "$STATUS" 3 "pick while every card runs a job"
  expect_eq "$OUT" "" "pick's stdout on failure"
  # Each reservation now belongs to its job: leases names the workloads,
  # not the picks that reserved for them.
  run_status "$GPUPIN" --simulate "$scenario" leases
  leases=$(sed '/^WAITING/,$d' <<<"$OUT")  # the queue's tickets are still picks
  expect_eq "$(grep -c 'gpupin-sim-workload --mem 2G' <<<"$leases")" 4 "leases held by the running workloads"
  [[ $leases != *"reserved"* ]] || fail "a running job's lease still reads as a pick: $leases"
fi

wait_all_ok "${STARTED[@]}"
expect_eq "$(grep -c '"event":"end"' "$log")" "$jobs" "workloads that ran to the end"
expect_no_overlap "$log"
