# examples/docker/run.sh: the container gets a free card by UUID, shared
# with MEM set, and the lease ends with it.
source "$(dirname "$0")/lib.sh"
export PATH="$GPUPIN_SOURCE_DIR/tests/e2e/fake-docker:$PATH"
export FAKE_DOCKER_STATE="$TEST_TMP/docker"
printf 'simulate = "%s"\n' "$EXAMPLES/server-4gpu.json" >"$TEST_TMP/gpupin.toml"
export GPUPIN_CONFIG="$TEST_TMP/gpupin.toml" GPUPIN="$GPUPIN"
uuid0=$("$GPUPIN" --json ls | jq -r '.gpus[0].uuid')

run_status bash "$EXAMPLES/docker/run.sh" pytorch/pytorch python train.py
expect_eq "$STATUS" 0 "run.sh's status"
mapfile -d '' argv <"$FAKE_DOCKER_STATE/last-argv"
expect_eq "${argv[*]}" "run --gpus \"device=$uuid0\" --rm pytorch/pytorch python train.py" "docker's arguments"
expect_contains "$("$GPUPIN" --json leases)" '"leases": []' "the lease ended with the container"

run_status env MEM=10G bash "$EXAMPLES/docker/run.sh" img
expect_eq "$STATUS" 0 "run.sh with MEM"
mapfile -d '' argv <"$FAKE_DOCKER_STATE/last-argv"
expect_eq "${argv[*]}" "run --gpus \"device=$uuid0\" -e XLA_PYTHON_CLIENT_PREALLOCATE=false -e TF_FORCE_GPU_ALLOW_GROWTH=true --rm img nvidia-smi -L" \
  "the default command, on a shared card with the framework settings"

run_status bash "$EXAMPLES/docker/run.sh"
expect_eq "$STATUS" 2 "run.sh without an image"
echo PASS
