#!/usr/bin/env bash
# gpupin map --probe asks the (simulated) CUDA driver in a child process and
# says whether gpupin's model agrees. examples/workstation-mixed.json has
# mixed models whose true FASTEST_FIRST order differs from gpupin's guess,
# so gpupin asks the driver for that order once and keeps it
# (driver_order_probed_once.sh).
source "$(dirname "$0")/lib.sh"
SIM=(--simulate "$EXAMPLES/workstation-mixed.json")
RTX3090=GPU-9e1f5b33-7c2a-4d8e-b6f4-0a3c8d2e5f71
A6000=GPU-2d8b6f40-5e9c-4a1b-93d7-6f0e2c4a8b15

A4000=GPU-4a7c2e91-0b3d-4f6e-8a12-5c9d3e7f1a20
KEPT="$GPUPIN_STATE_DIR/cuda-order-$(id -u).json"

# FASTEST_FIRST (the default): gpupin cannot know the order from NVML, so it
# asks the driver once (and keeps its answer); the model then agrees.
run_status "$GPUPIN" "${SIM[@]}" --json map --probe
expect_eq "$STATUS" 0 "map --probe status"
expect_eq "$(jq -c '[.cuda_order_is_guess, .cuda_order, .probe.status, .probe.agree, .probe.devices[0].gpu_index]' <<<"$OUT")" \
  '[false,"driver","ok",true,1]' "json: the model is the driver's order"

# A kept order that no longer holds (here PCI order, written by hand): the
# driver says otherwise, and map --probe shows where.
jq '.fastest_first_uuids = ["'"$A4000"'", "'"$RTX3090"'", "'"$A6000"'"]' "$KEPT" >"$TEST_TMP/pci-order.json"
cp "$TEST_TMP/pci-order.json" "$KEPT"
run_status "$GPUPIN" "${SIM[@]}" map --probe
expect_eq "$STATUS" 0 "map --probe status"
model_row=$(grep '^cuda:0' <<<"$OUT" | head -1)
driver_row=$(sed -n '/^driver (/,$p' <<<"$OUT" | grep '^cuda:0')
expect_contains "$model_row" "$A4000" "the model follows the kept order"
expect_contains "$driver_row" "$RTX3090" "the driver puts the 3090 first"
expect_contains "$OUT" "model and driver DISAGREE" "disagreement said"
expect_contains "$OUT" "cuda:0: gpupin expects GPU 0 ($A4000), the driver has $RTX3090" "difference named"
expect_contains "$OUT" "kept in $KEPT, and the driver now numbers otherwise" "the kept file is named"
expect_contains "$OUT" "libgpupin-sim-cuda.so, CUDA 12.2" "the driver library is named"
rm "$KEPT"

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

# A MIG instance: CUDA gives its UUID as 16 bytes without a prefix; both
# lists spell it as NVML does, MIG-…, so that they match on uuid.
MIG_SIM=(--simulate "$EXAMPLES/a100-mig.json")
run_status "$GPUPIN" "${MIG_SIM[@]}" --json map --probe --env 'CUDA_VISIBLE_DEVICES=MIG-a1ca'
expect_eq "$(jq -c '[.devices[0].uuid == .probe.devices[0].uuid, (.probe.devices[0].uuid | startswith("MIG-")), .probe.agree]' <<<"$OUT")" \
  '[true,true,true]' "a MIG instance is MIG-… in both lists"

# pick inside CUDA_VISIBLE_DEVICES=0 with PCI_BUS_ID: which card that is is
# certain, and pick says nothing (the guessed case:
# driver_order_probed_once.sh).
CUDA_VISIBLE_DEVICES=0 CUDA_DEVICE_ORDER=PCI_BUS_ID run_status "$GPUPIN" "${SIM[@]}" pick
expect_eq "$OUT" 0 "pick inside a certain CUDA_VISIBLE_DEVICES"
expect_eq "$ERR" "" "nothing to say when the order is certain"
