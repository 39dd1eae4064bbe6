#!/usr/bin/env bash
# A CUDA_VISIBLE_DEVICES by index on mixed models counts in CUDA's
# FASTEST_FIRST order, which gpupin can only guess: on
# examples/workstation-mixed.json the guess takes the A6000 for index 0,
# while the driver says the RTX 3090 (GPU 1). pick, run, env and docker
# never choose outside the caller's allocation on a guess: with no order
# kept yet, they ask the driver first (once: the order is then kept).
source "$(dirname "$0")/lib.sh"
scenario="$EXAMPLES/workstation-mixed.json"
rtx3090=$(jq -r '.gpus[1].uuid' "$scenario")

run_status env CUDA_VISIBLE_DEVICES=0 "$GPUPIN" --simulate "$scenario" pick
expect_eq "$STATUS" 0 "pick within CUDA_VISIBLE_DEVICES=0"
expect_eq "$OUT" "$rtx3090" "the card the driver calls 0"
[[ -f "$GPUPIN_STATE_DIR/cuda-order-0.json" ]] || fail "the driver's order was not kept"
expect_eq "$(jq -r '.fastest_first_uuids[0]' "$GPUPIN_STATE_DIR/cuda-order-0.json")" "$rtx3090" \
  "the kept order"

# A fresh state directory: run asks too, and its job lands on that card.
export GPUPIN_STATE_DIR="$TEST_TMP/state2"
install -d -m 1777 "$GPUPIN_STATE_DIR"
seen=$(CUDA_VISIBLE_DEVICES=0 "$GPUPIN" --simulate "$scenario" run -- \
  sh -c '"$0" --simulate "$1" --json map | jq -r ".devices[0].uuid"' "$GPUPIN" "$scenario" 2>/dev/null)
expect_eq "$seen" "$rtx3090" "the job's cuda:0"

# A driver that cannot be asked (a gpupin beside no libcuda): the choice is
# a guess, and pick says so.
export GPUPIN_STATE_DIR="$TEST_TMP/state3"
install -d -m 1777 "$GPUPIN_STATE_DIR"
install -d -m 0755 "$TEST_TMP/nocuda"
install -m 0755 "$GPUPIN" "$GPUPIN_BIN_DIR/libgpupin-sim-nvml.so" "$TEST_TMP/nocuda"
run_status env CUDA_VISIBLE_DEVICES=0 "$TEST_TMP/nocuda/gpupin" --simulate "$scenario" pick
expect_eq "$STATUS" 0 "pick without libcuda"
expect_contains "$ERR" "counts in CUDA's FASTEST_FIRST order, which gpupin can only guess" \
  "pick says it guesses"
