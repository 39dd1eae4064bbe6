#!/usr/bin/env bash
# What one `gpupin run --wait` costs the machine before it parks in the
# queue: CPU time and page faults of a newcomer that finds all 8 cards
# leased and 2 jobs waiting, queues 3rd and gives up after 5 ms (--wait=5ms),
# with, measured in the same run, `gpupin --version` (start-up alone) and
# /bin/true (starting any process). When 64 jobs are submitted at once, 56
# of them pay this while the first 8 are starting on 2 cores.
#
#   cmake --build build/release --target gpupin gpupin_sim
#   bench/newcomer_cost.sh [RUNS]          # default 100; needs perf
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
runs=${1:-100}
export GPUPIN_BIN_DIR=${GPUPIN_BIN_DIR:-$root/build/release/bin} GPUPIN_SOURCE_DIR=$root
source "$root/tests/e2e/lib.sh"
command -v perf >/dev/null || fail "needs perf (Debian package linux-perf)"
source "$root/bench/provenance.sh"
provenance bench/newcomer_cost.sh $runs
scenario="$EXAMPLES/dgx-h100.json"

# The holders' jobs outlive a killed gpupin run (they hold the lease): they
# are ended by name.
trap 'pkill -f gpupin-bench-holder || true; cleanup' EXIT
for card in 0 1 2 3 4 5 6 7; do
  "$GPUPIN" --simulate "$scenario" run --only "$card" -- \
    "$WORKLOAD" --seconds 600 --name gpupin-bench-holder >/dev/null 2>&1 &
done
wait_until 10 "8 cards leased" files_at_least "$GPUPIN_STATE_DIR/leases" 8
for waiter in 1 2; do
  "$GPUPIN" --simulate "$scenario" run --wait -- "$WORKLOAD" --seconds 0 >/dev/null 2>&1 &
done
wait_until 10 "2 jobs waiting" files_at_least "$GPUPIN_STATE_DIR/queue" 2

# cost WHAT CMD...: "WHAT: CPU ms, page faults" per run (children included),
# averaged over RUNS; CMD may fail (the newcomer gives up: exit status 3).
cost() {
  local what=$1
  shift
  { perf stat -x, -r "$runs" -e task-clock,page-faults -- "$@" 2>&1 >/dev/null || true; } |
    awk -F, -v what="$what" '$3 == "task-clock" { cpu = $1 } $3 == "page-faults" { faults = $1 }
      END { printf "%-34s %6.2f ms CPU, %4d page faults\n", what, cpu, faults }'
}
cost "queued newcomer (3rd, --wait=5ms)" \
  "$GPUPIN" --simulate "$scenario" run --wait=5ms -- "$WORKLOAD" --seconds 0
cost "gpupin --version" "$GPUPIN" --version
cost "/bin/true" /bin/true
