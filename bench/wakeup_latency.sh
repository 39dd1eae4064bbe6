#!/usr/bin/env bash
# How fast a waiting `gpupin run --wait` starts its command once its card is
# free, p50/p99 over TRIALS trials of each kind:
#   release: the holder's job ends normally (its end line -> the waiter's start line)
#   sigkill: the holder's job is killed with SIGKILL (the kill -> the waiter's start)
#   foreign: a process started outside gpupin holds the card and is killed
#            with SIGKILL (the kill -> the waiter's start)
#   shell:   no gpupin, for comparison: the same two workloads run one after
#            the other by the shell (the first's end line -> the second's
#            start line): a hand-off with nothing to coordinate
# Targets: release and sigkill p99 < 20 ms, foreign p99 < 200 ms.
#
#   cmake --build build/release --target gpupin gpupin_sim
#   bench/wakeup_latency.sh [TRIALS]          # default 50
#
# Times are the simulated workload's own log lines (wall clock, ms), so each
# figure includes gpupin waking, reading NVML and the state, choosing,
# recording the lease, and the command's exec and start-up (about 1 ms).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
trials=${1:-50}
export GPUPIN_BIN_DIR=${GPUPIN_BIN_DIR:-$root/build/release/bin} GPUPIN_SOURCE_DIR=$root
source "$root/tests/e2e/lib.sh"
source "$root/bench/provenance.sh"
provenance bench/wakeup_latency.sh $trials

scenario="$root/tests/e2e/fixtures/one-gpu.json"
log="$TEST_TMP/workload.log"

# start_waiter NAME: a waiter for GPU 0 that has joined the queue.
start_waiter() {
  "$GPUPIN" --simulate "$scenario" run --only 0 --wait -- "$WORKLOAD" --seconds 0 --name "$1" --log "$log" 2>"$TEST_TMP/$1.err" &
  waiter=$!
  wait_for_line "$TEST_TMP/$1.err" 'waiting'
}

trial() {
  local kind=$1 k=$2 from holder
  case $kind in
    release | sigkill)
      local seconds=60
      [[ $kind == release ]] && seconds=0.3
      "$GPUPIN" --simulate "$scenario" run -- "$WORKLOAD" --seconds "$seconds" --name "h$kind$k" --log "$log" 2>/dev/null &
      holder=$!
      wait_for_line "$log" "\"name\":\"h$kind$k\""
      start_waiter "w$kind$k"
      if [[ $kind == sigkill ]]; then
        local job
        job=$(event_field "$log" start "h$kind$k" pid)
        from=$(now_ms)
        kill -9 "$job"
      fi
      ;;
    foreign)
      CUDA_VISIBLE_DEVICES=0 GPUPIN_SIM_SCENARIO=$scenario "$WORKLOAD" --mem 4G --name "h$kind$k" --log "$log" &
      holder=$!
      wait_for_line "$log" "\"name\":\"h$kind$k\""
      start_waiter "w$kind$k"
      from=$(now_ms)
      kill -9 "$holder"
      ;;
    shell)
      CUDA_VISIBLE_DEVICES=0 GPUPIN_SIM_SCENARIO=$scenario "$WORKLOAD" --seconds 0.3 --name "h$kind$k" --log "$log"
      CUDA_VISIBLE_DEVICES=0 GPUPIN_SIM_SCENARIO=$scenario "$WORKLOAD" --seconds 0 --name "w$kind$k" --log "$log"
      echo $(($(event_field "$log" start "w$kind$k" t_ms) - $(event_field "$log" end "h$kind$k" t_ms)))
      return
      ;;
  esac
  wait "$waiter" || fail "the waiter failed: $(cat "$TEST_TMP/w$kind$k.err")"
  wait "$holder" 2>/dev/null || true
  [[ $kind == release ]] && from=$(event_field "$log" end "h$kind$k" t_ms)
  echo $(($(event_field "$log" start "w$kind$k" t_ms) - from))
}

summary() {
  sort -n | awk -v kind="$1" '{ a[NR] = $1 } END {
    p50 = a[int(NR * 0.50 + 0.999)]; p99 = a[int(NR * 0.99 + 0.999)]
    printf "%-8s n=%d  min %d ms  p50 %d ms  p99 %d ms  max %d ms\n", kind, NR, a[1], p50, p99, a[NR] }'
}

for kind in release sigkill foreign shell; do
  # stderr aside: bash reports every SIGKILLed job.
  for k in $(seq "$trials"); do trial "$kind" "$k"; done 2>"$TEST_TMP/errors" | summary "$kind" ||
    fail "$(grep -v Killed "$TEST_TMP/errors")"
done
