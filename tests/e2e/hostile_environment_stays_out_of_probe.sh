#!/usr/bin/env bash
# `map --pid PID --probe` run by root asks the driver how it numbers the
# devices under another user's environment: the probe child gets that
# process's CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER and nothing else of
# it, so a variable that names code for the driver to load
# (CUDA_INJECTION64_PATH) never runs that user's code as root. What the
# driver got is what the simulated cuInit records (GPUPIN_SIM_CUDA_TRACE).
source "$(dirname "$0")/lib.sh"
as_nobody_setup
SIM=(--simulate "$EXAMPLES/workstation-mixed.json")
trace="$TEST_TMP/cuda.trace"

"${AS_NOBODY[@]}" env CUDA_VISIBLE_DEVICES=1 CUDA_DEVICE_ORDER=PCI_BUS_ID \
  CUDA_INJECTION64_PATH="$TEST_TMP/theirs.so" CUDA_MODULE_LOADING=EAGER sleep 60 &
sleeper=$!
has_environment() { grep -q CUDA_INJECTION64_PATH "/proc/$sleeper/environ"; }
wait_until 10 "nobody's process with its environment" has_environment

GPUPIN_SIM_CUDA_TRACE=$trace run_status "$GPUPIN" "${SIM[@]}" --json map --pid "$sleeper" --probe
expect_eq "$STATUS" 0 "map --pid --probe"
expect_eq "$(jq -c '[.probe.status, [.probe.devices[].gpu_index]]' <<<"$OUT")" '["ok",[1]]' \
  "the probe numbers the devices under nobody's CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER"
# The probe's cuInit is the last one traced (map may probe once more before
# it, for the driver's own order, with no CUDA_* variable at all).
probe_variables=$(awk '/^cuInit$/ { last = block; block = ""; next } { block = block $0 "\n" } END { printf "%s", last }' "$trace")
expect_eq "$probe_variables" $'CUDA_DEVICE_ORDER=PCI_BUS_ID\nCUDA_VISIBLE_DEVICES=1' \
  "the CUDA_* variables the driver got from nobody's environment"
if grep -q -e CUDA_INJECTION64_PATH -e CUDA_MODULE_LOADING "$trace"; then
  fail "a probe handed the driver another of nobody's variables: $(cat "$trace")"
fi
kill "$sleeper"
echo PASS
