#!/usr/bin/env bash
# A hyper-parameter sweep: 12 runs (4 learning rates x 3 seeds) queued on the
# free GPUs with `gpupin run --wait`. As many run at once as there are free
# cards, each on a card of its own; the others wait their turn in the order
# they were queued, and start as soon as a card is free.
#
# Usage: sweep.sh [COMMAND...]
#   Each run is COMMAND --lr LR --seed SEED (default COMMAND: python3 train.py),
#   its output in $LOGS/lr<LR>-seed<SEED>.log (default LOGS: sweep-logs).
#   GPUPIN names the gpupin binary (default: gpupin on PATH).
set -euo pipefail
gpupin=${GPUPIN:-gpupin}
logs=${LOGS:-sweep-logs}
command=("$@")
((${#command[@]} > 0)) || command=(python3 train.py)
mkdir -p "$logs"

runs=()
# Ctrl-C stops the whole sweep. Bash starts background commands with SIGINT
# ignored, so the runs are told with SIGTERM instead: a waiting gpupin
# leaves the queue, a running one passes it on to its command.
trap 'kill -TERM "${runs[@]}" 2>/dev/null; wait; exit 130' INT TERM
for lr in 0.1 0.03 0.01 0.003; do
  for seed in 1 2 3; do
    "$gpupin" run --wait -- "${command[@]}" --lr "$lr" --seed "$seed" \
      >"$logs/lr$lr-seed$seed.log" 2>&1 &
    runs+=($!)
  done
done

failed=0
for run in "${runs[@]}"; do
  wait "$run" || failed=$((failed + 1))
done
echo "sweep: $((${#runs[@]} - failed)) of ${#runs[@]} runs succeeded (logs in $logs/)" >&2
((failed == 0))
