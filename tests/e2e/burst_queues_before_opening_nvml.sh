#!/usr/bin/env bash
# A burst of `run --wait` jobs submitted at one instant onto an empty queue
# on 4 free cards: the first of the burst takes its place in the queue before
# it looks, and the rest queue behind without opening NVML (a real nvmlInit
# takes tens of milliseconds, all of them paid at the busiest moment). While
# the first round runs, only the jobs that started, the head that found no
# card and the one next in line have opened NVML. Counted through the
# simulated library's call trace (GPUPIN_SIM_NVML_TRACE), shared by all.
source "$(dirname "$0")/lib.sh"

jobs=12
scenario="$EXAMPLES/server-4gpu.json"
log="$TEST_TMP/workload.log"
trace="$TEST_TMP/trace"
job() {
  GPUPIN_SIM_NVML_TRACE="$trace" exec "$GPUPIN" --simulate "$scenario" run --wait -- \
    "$WORKLOAD" --seconds 2 --name "j$1" --log "$log" 2>"$TEST_TMP/gpupin.$1.err"
}
start_at_once "$jobs" job
wait_until 10 "the first round started" lines_at_least "$log" '"event":"start"' 4
waiting() { (($(grep -l 'waiting' "$TEST_TMP"/gpupin.*.err 2>/dev/null | wc -l) >= jobs - 4)); }
wait_until 10 "every other job waits" waiting
opened=$(grep -c '^nvmlInit' "$trace")
ended=$(grep -c '"event":"end"' "$log" || true)
echo "$opened of $jobs gpupins opened NVML while the first round ran ($ended jobs ended)"
((ended == 0)) || echo "the first round ended before the count: the bound is not checked" >&2
((ended > 0 || opened <= 6)) || fail "$opened gpupins opened NVML in the first round (at most 6: 4 started, the head, the next in line)"
wait_all_ok "${STARTED[@]}"
expect_eq "$(grep -c '"event":"end"' "$log")" "$jobs" "jobs that ran to the end"
expect_no_overlap "$log"
echo PASS
