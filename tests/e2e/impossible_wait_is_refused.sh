# A request that too few cards could ever meet (the others MIG-enabled,
# PROHIBITED or lost) is refused even with --wait: in a first-come-first-
# served queue it would hold up every later job for ever.
source "$(dirname "$0")/lib.sh"
SIM=(--simulate "$EXAMPLES/a100-mig.json") # GPU 0 MIG-enabled, GPU 1 a whole free GPU

run_status timeout 10 "$GPUPIN" "${SIM[@]}" run -n 2 --wait -- true
expect_eq "$STATUS" 3 "two whole GPUs asked where one exists"
expect_contains "$ERR" "GPU 0 MIG enabled" "names the card that cannot serve"
expect_contains "$ERR" "only 1 GPU here can run jobs at all, so --wait would wait for ever" "says why it did not queue"
[[ $ERR != *"use --wait to queue"* ]] || fail "it suggests --wait: $ERR"
run_status "$GPUPIN" "${SIM[@]}" --json leases
expect_eq "$(jq '.queue | arrays | length' <<<"$OUT")" 0 "nothing left in the queue"

# The queue is free for the next job, which runs at once on GPU 1.
run_status timeout 10 "$GPUPIN" "${SIM[@]}" run --wait -- sh -c 'echo "$CUDA_VISIBLE_DEVICES"'
expect_eq "$STATUS" 0 "the next job runs"
expect_eq "$OUT" "1" "on the whole GPU"
echo PASS
