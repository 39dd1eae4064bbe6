# run --verify says the job's processes run on the chosen GPU and no other;
# env prints export lines that hold the GPUs while the shell lives.
source "$(dirname "$0")/lib.sh"
SIM=(--simulate "$EXAMPLES/server-4gpu.json")

run_status "$GPUPIN" "${SIM[@]}" run --verify --only 2 -- "$WORKLOAD" --seconds 0.5
expect_eq "$STATUS" 0 "job status"
expect_contains "$ERR" "verified: the job runs on GPU 2" "verdict"
run_status "$GPUPIN" "${SIM[@]}" --json run --verify=3s -- true
expect_eq "$(grep '"event":"verify"' <<<"$ERR" | jq -r .outcome)" not_verified "JSON verdict event's outcome"
expect_contains "$ERR" "not verified: the command ended before it used a GPU" "a job that never touches a GPU is not called verified"
run_status "$GPUPIN" "${SIM[@]}" --json run --verify --only 1 -- "$WORKLOAD" --seconds 0.5
expect_eq "$(grep '"event":"verify"' <<<"$ERR" | jq -r .outcome)" verified "a job on its card, in JSON"

# A process on another card a moment after the first on its own is found:
# the verdict rests on the whole time watched. A card given and left unused
# is named.
run_status "$GPUPIN" "${SIM[@]}" --json run --only 0 --verify=5s --stop-on-mismatch -- \
  bash -c "\"$WORKLOAD\" --seconds 3 & sleep 0.5; \"$WORKLOAD\" --seconds 3 --gpus 3 & wait"
expect_eq "$STATUS" 1 "--stop-on-mismatch when a stray process comes second"
expect_eq "$(grep '"event":"verify"' <<<"$ERR" | jq -r .outcome)" mismatch "the stray process's verdict"
run_status "$GPUPIN" "${SIM[@]}" run -n 2 --verify=3s -- \
  bash -c "CUDA_VISIBLE_DEVICES=\${CUDA_VISIBLE_DEVICES%%,*} \"$WORKLOAD\" --seconds 0.5"
expect_eq "$STATUS" 0 "a job that uses one of its two cards"
expect_contains "$ERR" "verified: the job runs on GPU 0 (pid" "the card it used"
expect_contains "$ERR" "GPU 1, given to it, was not used" "the card it left unused"

# A job on card 0 whatever it was given (CUDA_VISIBLE_DEVICES set after CUDA
# started, as the workload's --gpus simulates): --verify says so and lets it
# run on; --stop-on-mismatch ends it and fails.
run_status "$GPUPIN" "${SIM[@]}" run --verify --only 1 -- "$WORKLOAD" --seconds 0.5 --gpus 0
expect_eq "$STATUS" 0 "--verify alone: the job's status"
expect_contains "$ERR" "MISMATCH: the job runs on GPU 0" "where the job runs"
started=$(now_ms)
run_status "$GPUPIN" "${SIM[@]}" --json run --stop-on-mismatch --only 1 -- "$WORKLOAD" --seconds 60 --gpus 0
expect_eq "$STATUS" 1 "--stop-on-mismatch: gpupin's status"
expect_eq "$(grep '"event":"verify"' <<<"$ERR" | jq -c '[.outcome, .stopped]')" '["mismatch",true]' \
  "the JSON verify event"
expect_contains "$ERR" "stopped the job (--stop-on-mismatch)" "says it stopped the job"
(($(now_ms) - started < 30000)) || fail "the job ran on instead of being ended"

# env: the exports carry the decision; the lease lives with the shell.
sleep 30 &
shell_pid=$!
run_status "$GPUPIN" "${SIM[@]}" env --for "$shell_pid" --mem 10G
expect_eq "$STATUS" 0 "env"
expect_contains "$OUT" "export CUDA_VISIBLE_DEVICES='0'" "devices"
expect_contains "$OUT" "export CUDA_DEVICE_ORDER='PCI_BUS_ID'" "order"
expect_contains "$OUT" "export XLA_PYTHON_CLIENT_PREALLOCATE='false'" "shared request stops preallocation"
fish=$("$GPUPIN" "${SIM[@]}" env --shell fish --for "$shell_pid" --only 1)
expect_contains "$fish" "set -gx CUDA_VISIBLE_DEVICES '1';" "fish syntax"
leases=$("$GPUPIN" "${SIM[@]}" --json leases)
expect_eq "$(grep -c "\"holder_pid\": $shell_pid" <<<"$leases")" 2 "both leases held by the shell"
kill "$shell_pid"
wait "$shell_pid" 2>/dev/null || true
leases=$("$GPUPIN" "${SIM[@]}" --json leases)
expect_contains "$leases" '"leases": []' "the shell's exit ends its leases"
echo PASS
