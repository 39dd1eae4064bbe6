#!/usr/bin/env bash
# With a GPU in MIG mode, CUDA enumerates one MIG instance and leaves the
# whole GPUs out (facts file §1.4): a probe run without CUDA_VISIBLE_DEVICES
# then lists part of the machine, which is no order of its cards. It is kept
# as a failure that says so, and cuda:N stay an honest guess, rather than
# a one-card list being called the driver's numbering.
source "$(dirname "$0")/lib.sh"
scenario="$TEST_TMP/mig-mixed.json"
# examples/a100-mig.json, its second A100 in MIG mode without instances, and
# an H100 beside them: three models of cards, so FASTEST_FIRST needs an order.
jq '.gpus[1].mig = {"enabled": true, "instances": [], "max_devices": 7}
  | .gpus += [.gpus[1] | .name = "NVIDIA H100 80GB HBM3" | .compute_capability = "9.0"
      | .uuid = "GPU-c0ffee00-1111-2222-3333-444455556666" | .pci_bus_id = "00000000:1F:00.0"
      | .minor_number = 7 | .mig = {"enabled": false}]' "$EXAMPLES/a100-mig.json" >"$scenario"

run_status "$GPUPIN" --simulate "$scenario" -v ls
expect_eq "$STATUS" 0 "ls"
expect_contains "$ERR" "the CUDA driver did not list GPU 2 (GPU-c0ffee00" "-v says why no order"
kept=$(jq -r '.probe_failed.reason' "$GPUPIN_STATE_DIR/cuda-order-0.json")
expect_contains "$kept" "CUDA leaves whole GPUs out where it lists a MIG instance" "kept as a failure"

map=$("$GPUPIN" --simulate "$scenario" --json map --env CUDA_VISIBLE_DEVICES=0)
expect_eq "$(jq -r '.cuda_order' <<<"$map")" guess "cuda_order under an index list"
expect_eq "$(jq -r '.cuda_order_is_guess' <<<"$map")" true "cuda_order_is_guess"
