# examples/slurm/train.sbatch, run as Slurm runs a batch script on a node
# (its variables set, cards 2 and 3 allocated): each step gets one of the
# job's cards, never another; a step found on a card it was not given is
# ended and the job fails; a CUDA_VISIBLE_DEVICES that names cards outside
# the allocation does not take a step there. tests/e2e/slurm_allocation.sh
# runs gpupin under a real Slurm.
source "$(dirname "$0")/lib.sh"
printf 'simulate = "%s"\n' "$EXAMPLES/server-4gpu.json" >"$TEST_TMP/gpupin.toml"
export GPUPIN_CONFIG="$TEST_TMP/gpupin.toml" GPUPIN="$GPUPIN"
export GPUPIN_SIM_SCENARIO="$EXAMPLES/server-4gpu.json"
log="$TEST_TMP/workload.log"
cat >"$TEST_TMP/train" <<TRAIN
#!/usr/bin/env bash
exec "$WORKLOAD" --seconds \${STEP_SECONDS:-3} --name "part\$2" --log "$log" \${WRONG_CARD:+--gpus \$WRONG_CARD}
TRAIN
chmod +x "$TEST_TMP/train"
slurm_job() {
  env SLURM_JOB_ID=42 SLURM_JOB_GPUS=2,3 CUDA_VISIBLE_DEVICES=2,3 "$@" \
    bash "$EXAMPLES/slurm/train.sbatch" "$TEST_TMP/train"
}

run_status slurm_job
expect_eq "$STATUS" 0 "the job's status"
expect_contains "$OUT" "GPU" "gpupin ls at the start"
cards=$(jq -r 'select(.event == "start") | .nvml_indices[]' "$log" | sort -n | tr '\n' ' ')
expect_eq "$cards" "2 3 " "the steps' cards: the job's, one each"
expect_eq "$(grep -c 'gpupin: verified' <<<"$ERR")" 2 "both steps verified"

# A step that runs on card 0 whatever it was given (CUDA_VISIBLE_DEVICES set
# after CUDA started, simulated by the workload's --gpus).
rm "$log"
run_status slurm_job WRONG_CARD=0 STEP_SECONDS=60
expect_eq "$STATUS" 1 "the job fails"
expect_contains "$ERR" "MISMATCH" "the step is found on the wrong card"
expect_contains "$ERR" "stopped the job (--stop-on-mismatch)" "and stopped"
expect_eq "$(jq -r 'select(.event == "start") | .nvml_indices[]' "$log" | sort -u)" 0 "where the steps ran"
expect_eq "$(jq -r 'select(.event == "end") | .signal' "$log" | sort -u)" 15 "both steps ended by SIGTERM"

# CUDA_VISIBLE_DEVICES overwritten in the job (a ~/.bashrc): with no device
# cgroup the job still sees the whole node, and gpupin keeps its steps to
# the cards Slurm gave it, saying so; doctor fails the check.
rm "$log"
run_status slurm_job CUDA_VISIBLE_DEVICES=0,2 STEP_SECONDS=2
expect_eq "$STATUS" 1 "one of the two steps finds no card"
expect_eq "$(jq -r 'select(.event == "start") | .nvml_indices[]' "$log" | sort -u)" 2 \
  "the step that ran is on card 2, the one both allow"
expect_contains "$ERR" "within CUDA_VISIBLE_DEVICES=0,2 and SLURM_JOB_GPUS=2,3" "the other step's refusal"
expect_contains "$ERR" "CUDA_VISIBLE_DEVICES=0,2 names GPUs this Slurm job was not given (SLURM_JOB_GPUS=2,3)" \
  "gpupin says why"
run_status env SLURM_JOB_ID=42 SLURM_JOB_GPUS=2,3 "$GPUPIN" pick -n 2
expect_eq "$OUT" "2,3" "with CUDA_VISIBLE_DEVICES unset, pick keeps to the job's cards"
"$GPUPIN" release >/dev/null 2>&1
run_status env SLURM_JOB_ID=42 SLURM_JOB_GPUS=2,3 CUDA_VISIBLE_DEVICES=0,2 "$GPUPIN" doctor
grep -Eq '^slurm +fail .*names GPU 0, which Slurm did not give this job' <<<"$OUT" ||
  fail "doctor on a CUDA_VISIBLE_DEVICES outside the allocation: $OUT"
echo PASS
