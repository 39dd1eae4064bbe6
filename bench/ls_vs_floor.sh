#!/usr/bin/env bash
# How much slower `gpupin --json ls` is than the least a program can do for
# the same facts (bench/nvml_floor.c: the same NVML calls from plain C).
#
#   cmake --build build/release --target gpupin nvml_floor gpupin_sim
#   bench/ls_vs_floor.sh [RUNS] [SCENARIO]      # defaults: 200, examples/lab-8gpu.json
#
# Both run against the simulated NVML (bin/libgpupin-sim-nvml.so) on the same
# scenario, RUNS times each, interleaved so that machine noise hits both
# alike. Prints the median wall time of each and gpupin/floor; the target is
# a ratio of at most 1.5. GPUPIN_BENCH_FLOOR_ONLY=1 times the floor alone;
# GPUPIN_BENCH_BIN=DIR takes the binaries from DIR instead of build/release/bin.
# Exits 1 if either command fails once.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
runs=${1:-200}
scenario=${2:-$root/examples/lab-8gpu.json}
bin=${GPUPIN_BENCH_BIN:-$root/build/release/bin}
floor_only=${GPUPIN_BENCH_FLOOR_ONLY:-0}

gpupin_cmd=("$bin/gpupin" --simulate "$scenario" --json ls)
floor_cmd=("$bin/nvml_floor" "$bin/libgpupin-sim-nvml.so")
export GPUPIN_SIM_SCENARIO=$scenario

check() {
  if ! "$@" >/dev/null; then
    echo "ls_vs_floor: failed: $*" >&2
    exit 1
  fi
}
check "${floor_cmd[@]}"
[[ $floor_only == 1 ]] || check "${gpupin_cmd[@]}"

# Microseconds of one run, from bash's own clock (no fork to measure).
time_us() {
  local start=$EPOCHREALTIME
  "$@" >/dev/null
  local end=$EPOCHREALTIME
  echo $(((${end/./} - ${start/./})))
}

floor_times=()
gpupin_times=()
for ((i = 0; i < runs; i++)); do
  floor_times+=("$(time_us "${floor_cmd[@]}")")
  [[ $floor_only == 1 ]] || gpupin_times+=("$(time_us "${gpupin_cmd[@]}")")
done

median_us() { printf '%s\n' "$@" | sort -n | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

floor=$(median_us "${floor_times[@]}")
printf 'scenario %s, %d runs each\n' "$scenario" "$runs"
printf 'floor   median %8.3f ms\n' "$(awk -v us="$floor" 'BEGIN {print us / 1000}')"
if [[ $floor_only != 1 ]]; then
  gpupin=$(median_us "${gpupin_times[@]}")
  printf 'gpupin  median %8.3f ms\n' "$(awk -v us="$gpupin" 'BEGIN {print us / 1000}')"
  printf 'ratio   %.2f (target <= 1.5)\n' "$(awk -v a="$gpupin" -v b="$floor" 'BEGIN {print a / b}')"
fi
