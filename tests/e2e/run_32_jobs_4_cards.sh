#!/usr/bin/env bash
# ctest: RUN_SERIAL
# 32 `gpupin run --wait` jobs released at one instant on 4 free cards: all
# succeed, no two ever share a card, each job runs on the card gpupin says it
# gave it, and the queue keeps all 4 cards busy (makespan near 8 rounds).
source "$(dirname "$0")/lib.sh"

jobs=32 cards=4 seconds=0.3
log="$TEST_TMP/workload.log"
job() {
  exec "$GPUPIN" --simulate "$EXAMPLES/server-4gpu.json" --json run --wait -- \
    "$WORKLOAD" --seconds "$seconds" --log "$log" 2>"$TEST_TMP/gpupin.$1.err"
}
start_at_once "$jobs" job
wait_all_ok "${STARTED[@]}"

expect_eq "$(grep -c '"event":"end"' "$log")" "$jobs" "workloads that ran to the end"
expect_no_overlap "$log"

# What gpupin said it gave (its --json start event names the job's pid in the
# lease id) against where the workload found itself.
given=$(cat "$TEST_TMP"/gpupin.*.err | grep "^{" | jq -r 'select(.event == "start")
  | "\(.lease_id | split("-")[0]) \([.gpus[].index] | join(","))"' | sort)
seen=$(jq -r 'select(.event == "start") | "\(.pid) \(.nvml_indices | join(","))"' "$log" | sort)
expect_eq "$(wc -l <<<"$given")" "$jobs" "start events from gpupin"
expect_eq "$seen" "$given" "cards the workloads saw vs the cards gpupin gave"

makespan_ms=$(jq -s '(map(select(.event == "end").t_ms) | max) - (map(select(.event == "start").t_ms) | min)' "$log")
ideal_ms=$(awk -v j="$jobs" -v c="$cards" -v s="$seconds" 'BEGIN { print int(j / c * s * 1000) }')
echo "makespan ${makespan_ms}ms for $jobs jobs of ${seconds}s on $cards cards (ideal ${ideal_ms}ms, ratio $(awk -v m="$makespan_ms" -v i="$ideal_ms" 'BEGIN { printf "%.3f", m / i }'))"
((makespan_ms * 2 < ideal_ms * 3 * TIME_FACTOR)) ||
  fail "makespan ${makespan_ms}ms is over $((3 * TIME_FACTOR))/2 x the ideal ${ideal_ms}ms"
