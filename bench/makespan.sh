#!/usr/bin/env bash
# How well the wait queue keeps cards busy: JOBS one-second `gpupin run
# --wait` jobs released at one instant on the 8 free cards of a simulated
# DGX H100, against the ideal JOBS/8 seconds. Target: within 1 % of ideal.
#
#   cmake --build build/release --target gpupin gpupin_sim
#   bench/makespan.sh [JOBS] [SECONDS]          # defaults: 64, 1
#
# Makespan: the first job's start line to the last job's end line (the
# workload's own log). Hand-off: on each card, a job's end line to the next
# job's start line.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
jobs=${1:-64} seconds=${2:-1} cards=8
export GPUPIN_BIN_DIR=${GPUPIN_BIN_DIR:-$root/build/release/bin} GPUPIN_SOURCE_DIR=$root
source "$root/tests/e2e/lib.sh"
echo "reproduce: bench/makespan.sh $jobs $seconds   ($(nproc) CPUs, $(uname -sr))"

log="$TEST_TMP/workload.log"
job() {
  exec "$GPUPIN" --simulate "$EXAMPLES/dgx-h100.json" run --wait -- \
    "$WORKLOAD" --seconds "$seconds" --log "$log" 2>/dev/null
}
start_at_once "$jobs" job
wait_all_ok "${STARTED[@]}"
expect_no_overlap "$log"

jq -s --argjson released "$RELEASED_MS" --argjson ideal "$(awk -v j="$jobs" -v c="$cards" -v s="$seconds" 'BEGIN { print j / c * s * 1000 }')" -r '
  (map(select(.event == "start").t_ms) | min) as $first
  | (map(select(.event == "end").t_ms) | max) as $last
  | "makespan \($last - $first) ms, ideal \($ideal) ms, ratio \((($last - $first) / $ideal * 1000 | round) / 1000); first start \($first - $released) ms after release"' "$log"
job_intervals "$log" | sort -k2,2n -k3,3n | awk 'NR > 1 && $2 == card { print $3 - end } { card = $2; end = $4 }' | sort -n |
  awk '{ a[NR] = $1; sum += $1 } END {
    printf "hand-off per card: n=%d  p50 %d ms  p99 %d ms  max %d ms  mean %.1f ms\n", NR, a[int(NR * 0.5 + 0.999)], a[int(NR * 0.99 + 0.999)], a[NR], sum / NR }'
