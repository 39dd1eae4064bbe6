#!/usr/bin/env bash
# What a burst of waiters asks of the kernel: JOBS `gpupin run --wait` jobs
# of SECONDS released at one instant on the 4 free cards of
# examples/server-4gpu.json, each traced by strace. Counts every system
# call of the gpupin processes (not of their workloads), and among the
# opens those of queue tickets and of /proc/PID/stat (a liveness check):
# what the queue's reads cost, apart from the machine CPU that
# bench/makespan.sh measures and that a virtual machine's noise blurs. The
# totals follow how the wake-ups fall in each run (a quarter apart between
# runs of one build); run it a few times and compare builds in the same run.
#
#   cmake --build build/release --target gpupin gpupin_sim
#   bench/burst_syscalls.sh [JOBS] [SECONDS]      # defaults: 32, 1
#   GPUPIN_BENCH_BIN=DIR:DIR bench/burst_syscalls.sh   # two builds, in turn
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
jobs=${1:-32} seconds=${2:-1}
command -v strace >/dev/null || {
  echo "burst_syscalls: needs strace (apt-get install strace)" >&2
  exit 1
}
IFS=: read -r -a bins <<<"${GPUPIN_BENCH_BIN:-$root/build/release/bin}"
export GPUPIN_BIN_DIR=${bins[0]} GPUPIN_SOURCE_DIR=$root
source "$root/tests/e2e/lib.sh"
source "$root/bench/provenance.sh"
provenance bench/burst_syscalls.sh "$jobs" "$seconds"
export GPUPIN_SIM_SCENARIO="$EXAMPLES/server-4gpu.json"

for dir in "${bins[@]}"; do
  traces=$(mktemp -d "$TEST_TMP/traces.XXXXXX")
  log="$traces/jobs.log"
  # strace -f would follow into the workloads: gpupin's own calls only.
  traced_job() {
    exec strace -o "$traces/trace.$1" "$dir/gpupin" --simulate "$GPUPIN_SIM_SCENARIO" run --wait -- \
      "$WORKLOAD" --seconds "$seconds" --log "$log" 2>/dev/null
  }
  start_at_once "$jobs" traced_job
  wait_all_ok "${STARTED[@]}"
  expect_no_overlap "$log"
  calls=$(cat "$traces"/trace.* | grep -c '^[a-z_0-9]*(')
  tickets=$(cat "$traces"/trace.* | grep -c -E '^openat\([0-9]+, "[0-9]+-[0-9]+-[0-9]+-[0-9a-f]+\.json"')
  stats=$(cat "$traces"/trace.* | grep -c -E '^openat\(AT_FDCWD, "/proc/[0-9]+/stat"')
  printf '%s: %d jobs, %d system calls of gpupin (%d per job); opens of tickets %d, of /proc/PID/stat %d\n' \
    "$dir" "$jobs" "$calls" "$((calls / jobs))" "$tickets" "$stats"
  rm -rf "$traces"
done
