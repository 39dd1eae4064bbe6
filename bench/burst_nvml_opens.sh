#!/usr/bin/env bash
# How many newcomers of a burst open NVML before their turn. JOBS `gpupin run
# --wait` of SECONDS released at one instant onto the 4 free cards of
# examples/server-4gpu.json, whose simulated nvmlInit takes INIT_MS (a real
# driver's takes tens of milliseconds; scenario key nvml_init_ms). Counted
# through each job's own NVML trace once the first round runs: the jobs
# that opened NVML by then (ideally the 4 running, the one that queued
# first and the next in line), all the snapshots the burst took, and when
# the last card's first job started after the release.
#
#   cmake --build build/release --target gpupin gpupin_sim
#   bench/burst_nvml_opens.sh [JOBS] [INIT_MS] [SECONDS]   # defaults: 32, 50, 2
#
# GPUPIN_BENCH_BIN=DIR:DIR... measures the gpupin of each folder in turn
# (an older build beside this one), all with this build's simulator (--nvml),
# which knows nvml_init_ms.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
jobs=${1:-32} init_ms=${2:-50} seconds=${3:-2}
export GPUPIN_BIN_DIR=${GPUPIN_BIN_DIR:-$root/build/release/bin} GPUPIN_SOURCE_DIR=$root
source "$root/tests/e2e/lib.sh"
source "$root/bench/provenance.sh"
provenance bench/burst_nvml_opens.sh "$jobs" "$init_ms" "$seconds"
IFS=: read -r -a bins <<<"${GPUPIN_BENCH_BIN:-$GPUPIN_BIN_DIR}"
simulator="$GPUPIN_BIN_DIR/libgpupin-sim-nvml.so"
scenario="$TEST_TMP/server-4gpu-slow-init.json"
jq --argjson ms "$init_ms" '.nvml_init_ms = $ms' "$EXAMPLES/server-4gpu.json" >"$scenario"
cards=4

for dir in "${bins[@]}"; do
  run_dir="$TEST_TMP/run.$(basename "$dir").$RANDOM"
  mkdir -p "$run_dir"
  export GPUPIN_STATE_DIR="$run_dir/state"
  log="$run_dir/workload.log"
  job() {
    GPUPIN_SIM_NVML_TRACE="$run_dir/trace.$1" exec "$dir/gpupin" --simulate "$scenario" \
      --nvml "$simulator" run --wait -- "$WORKLOAD" --seconds "$seconds" --log "$log" 2>/dev/null
  }
  start_at_once "$jobs" job
  wait_until 30 "the first round to start" lines_at_least "$log" '"event":"start"' "$cards"
  sleep "$(awk -v s="$seconds" 'BEGIN { print s / 2 }')"
  opened=$(grep -l '^nvmlInit' "$run_dir"/trace.* 2>/dev/null | wc -l)
  wait_all_ok "${STARTED[@]}"
  snapshots=$(cat "$run_dir"/trace.* | grep -c '^nvmlDeviceGetCount')
  last_first=$(jq -s -r --argjson released "$RELEASED_MS" '[.[] | select(.event == "start")]
    | group_by(.uuids[0]) | map(min_by(.t_ms).t_ms - $released) | max' "$log")
  printf '%s: NVML opened by %d of %d jobs while the first %d ran; %d snapshots in all; last card'"'"'s first job %d ms after release\n' \
    "$dir" "$opened" "$jobs" "$cards" "$snapshots" "$last_first"
done
