#!/usr/bin/env bash
# NVML's numbering need not follow the PCI bus: here NVML's GPU 0 sits on
# the last bus and GPU 3 on the first. A job gpupin starts gets
# CUDA_DEVICE_ORDER=PCI_BUS_ID, so the index it is handed must count in bus
# order, or the job runs on another card than the one leased. Checked from
# inside the job, by the same resolution `map` applies, and for `pick` and
# `env`, whose indices a PCI_BUS_ID reader uses.
source "$(dirname "$0")/lib.sh"
scenario="$TEST_TMP/swapped.json"
jq '.gpus[0].pci_bus_id as $first | .gpus[0].pci_bus_id = .gpus[3].pci_bus_id
  | .gpus[3].pci_bus_id = $first' "$EXAMPLES/server-4gpu.json" >"$scenario"
uuid_of() { jq -r ".gpus[$1].uuid" "$scenario"; }

seen=$("$GPUPIN" --simulate "$scenario" run --only 0 -- \
  sh -c 'echo "$CUDA_VISIBLE_DEVICES"; "$0" --simulate "$1" --json map | jq -r ".devices[0].uuid"' \
  "$GPUPIN" "$scenario" 2>/dev/null)
expect_eq "$seen" "3
$(uuid_of 0)" "the job's CUDA_VISIBLE_DEVICES, and the card its cuda:0 is"

run_status env CUDA_DEVICE_ORDER=PCI_BUS_ID "$GPUPIN" --simulate "$scenario" pick --only 3
expect_eq "$OUT" 0 "pick of NVML's GPU 3, first on the bus"
expect_eq "$("$GPUPIN" --simulate "$scenario" --json map --env "CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=$OUT" |
  jq -r '.devices[0].uuid')" "$(uuid_of 3)" "the picked index names the picked card"

run_status "$GPUPIN" --simulate "$scenario" env --shell bash --only 0
expect_contains "$OUT" "CUDA_VISIBLE_DEVICES='3'" "env names NVML's GPU 0 by its place on the bus"
