#!/usr/bin/env bash
# gpupin map --probe asks the (simulated) CUDA driver in a child process and
# says whether gpupin's model agrees. examples/workstation-mixed.json has
# mixed models whose true FASTEST_FIRST order differs from gpupin's guess.
source "$(dirname "$0")/lib.sh"
SIM=(--simulate "$EXAMPLES/workstation-mixed.json")
RTX3090=GPU-9e1f5b33-7c2a-4d8e-b6f4-0a3c8d2e5f71
A6000=GPU-2d8b6f40-5e9c-4a1b-93d7-6f0e2c4a8b15

# FASTEST_FIRST (the default): the model guesses, the driver knows better.
run_status "$GPUPIN" "${SIM[@]}" map --probe
expect_eq "$STATUS" 0 "map --probe status"
expect_contains "$OUT" "gpupin guesses" "the guess is flagged"
model_row=$(grep '^cuda:0' <<<"$OUT" | head -1)
driver_row=$(sed -n '/^driver (/,$p' <<<"$OUT" | grep '^cuda:0')
expect_contains "$model_row" "$A6000" "the model guesses the A6000 first"
expect_contains "$driver_row" "$RTX3090" "the driver puts the 3090 first"
expect_contains "$OUT" "model and driver DISAGREE" "disagreement said"
expect_contains "$OUT" "cuda:0: gpupin expects GPU 2 ($A6000), the driver has $RTX3090" "difference named"
expect_contains "$OUT" "libgpupin-sim-cuda.so, CUDA 12.2" "the driver library is named"

run_status "$GPUPIN" "${SIM[@]}" --json map --probe
expect_eq "$(jq -c '[.cuda_order_is_guess, .probe.status, .probe.agree, .probe.devices[0].gpu_index]' <<<"$OUT")" \
  '[true,"ok",false,1]' "json probe disagreement"

# PCI_BUS_ID: nothing is guessed, and the driver agrees.
run_status "$GPUPIN" "${SIM[@]}" map --probe --env 'CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=2,0'
expect_eq "$STATUS" 0 "PCI_BUS_ID status"
expect_contains "$OUT" "model and driver agree" "agreement said"
[[ "$OUT" != *"guess"* ]] || fail "nothing is guessed under PCI_BUS_ID: $OUT"

# What the probe examines is the --env environment, not gpupin's own.
CUDA_VISIBLE_DEVICES=1 run_status "$GPUPIN" "${SIM[@]}" --json map --probe --env 'CUDA_DEVICE_ORDER=PCI_BUS_ID'
expect_eq "$(jq -c '[.probe.devices[].gpu_index]' <<<"$OUT")" '[0,1,2]' "the probe sees --env's environment"

# No device visible: the driver answers CUDA_ERROR_NO_DEVICE, as the model expects.
run_status "$GPUPIN" "${SIM[@]}" map --probe --env 'CUDA_VISIBLE_DEVICES='
expect_contains "$OUT" "CUDA_ERROR_NO_DEVICE" "no device"
expect_contains "$OUT" "model and driver agree" "no device on both sides"

# A device named twice: cuInit fails with CUDA_ERROR_INVALID_DEVICE, as the
# real driver 580 does (bench/gpu/check.sh (f)), which the model expects.
run_status "$GPUPIN" "${SIM[@]}" --json map --probe --env 'CUDA_VISIBLE_DEVICES=1,01'
expect_eq "$(jq -c '[.probe.status, .probe.cuda_error, .probe.agree, (.devices | length)]' <<<"$OUT")" \
  '["init_failed",101,true,0]' "a repeated device: the driver refuses the list, as the model expects"

# pick inside CUDA_VISIBLE_DEVICES=0 on mixed models: which card that is rests
# on the guessed FASTEST_FIRST order (the driver says otherwise here), so pick
# says so; with PCI_BUS_ID it is certain and pick says nothing.
CUDA_VISIBLE_DEVICES=0 run_status "$GPUPIN" "${SIM[@]}" pick
expect_eq "$STATUS" 0 "pick inside a guessed CUDA_VISIBLE_DEVICES"
expect_contains "$ERR" "CUDA_VISIBLE_DEVICES=0 counts in CUDA's FASTEST_FIRST order, which gpupin can only guess" "the guess is said"
"$GPUPIN" "${SIM[@]}" release >/dev/null
CUDA_VISIBLE_DEVICES=0 CUDA_DEVICE_ORDER=PCI_BUS_ID run_status "$GPUPIN" "${SIM[@]}" pick
expect_eq "$OUT" 0 "pick inside a certain CUDA_VISIBLE_DEVICES"
expect_eq "$ERR" "" "nothing to say when the order is certain"
