#!/usr/bin/env bash
# Inside a Slurm job without a device cgroup, Slurm sets
# CUDA_VISIBLE_DEVICES to its global ids, in gres.conf's (PCI bus) order.
# On mixed models CUDA reads them fastest first unless
# CUDA_DEVICE_ORDER=PCI_BUS_ID: they name other cards than Slurm gave the
# job. pick, run, env and docker refuse to choose among them then, and
# doctor fails, both naming the fix; with PCI_BUS_ID they stay on the
# allocation. A Slurm job given no GPU is warned. Slurm's variables are
# set by hand here; tests/e2e/slurm_allocation.sh runs a real Slurm.
source "$(dirname "$0")/lib.sh"
SIM=(--simulate "$EXAMPLES/workstation-mixed.json")
slurm=(env SLURM_JOB_ID=4711 "SLURM_JOB_GPUS=0,2" "SLURM_STEP_GPUS=0,2" "CUDA_VISIBLE_DEVICES=0,2")

for command in pick "run -- true" env; do
  # shellcheck disable=SC2086 # the command's words
  run_status "${slurm[@]}" "$GPUPIN" "${SIM[@]}" $command
  expect_eq "$STATUS" 1 "$command on Slurm's global ids read fastest first"
  expect_contains "$ERR" "holds Slurm's global GPU ids (SLURM_STEP_GPUS)" "$command says why"
  expect_contains "$ERR" "export CUDA_DEVICE_ORDER=PCI_BUS_ID" "$command names the fix"
  expect_eq "$OUT" "" "$command prints nothing to capture"
done
run_status "${slurm[@]}" "$GPUPIN" "${SIM[@]}" --json doctor
expect_eq "$(jq -r '.findings[] | select(.check == "slurm") | .verdict' <<<"$OUT")" fail \
  "doctor's slurm check"

# With PCI_BUS_ID the ids are Slurm's: NVML's GPUs 0 and 2, in bus order.
allowed=$(jq -r '[.gpus[0].uuid, .gpus[2].uuid] | join(" ")' "$EXAMPLES/workstation-mixed.json")
for round in 1 2; do
  run_status "${slurm[@]}" CUDA_DEVICE_ORDER=PCI_BUS_ID "$GPUPIN" "${SIM[@]}" --json pick
  expect_eq "$STATUS" 0 "pick $round with CUDA_DEVICE_ORDER=PCI_BUS_ID"
  [[ " $allowed " == *" $(jq -r '.gpus[0].uuid' <<<"$OUT") "* ]] ||
    fail "pick $round chose outside the allocation: $OUT"
done
run_status "${slurm[@]}" CUDA_DEVICE_ORDER=PCI_BUS_ID "$GPUPIN" "${SIM[@]}" pick
expect_eq "$STATUS" 3 "the allocation's two cards are reserved"

# A Slurm job that was given no GPU.
"$GPUPIN" "${SIM[@]}" release --all >/dev/null 2>&1 || true
run_status env SLURM_JOB_ID=4712 "$GPUPIN" "${SIM[@]}" pick
expect_eq "$STATUS" 0 "pick in a job given no GPU"
expect_contains "$ERR" "inside Slurm job 4712, which was given no GPU" "the warning"
