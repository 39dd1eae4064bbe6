# gpupin docker puts --gpus '"device=UUIDs"' after run, keeps the lease while
# the client runs, and for run -d ties the lease to the container.
source "$(dirname "$0")/lib.sh"
export PATH="$GPUPIN_SOURCE_DIR/tests/e2e/fake-docker:$PATH"
export FAKE_DOCKER_STATE="$TEST_TMP/docker"
SIM=(--simulate "$EXAMPLES/server-4gpu.json")

run_status "$GPUPIN" "${SIM[@]}" docker -n 2 -- run --rm -e X=1 img python train.py
expect_eq "$STATUS" 0 "docker exit status"
mapfile -d '' argv <"$FAKE_DOCKER_STATE/last-argv"
expect_eq "${argv[0]}" run "first argument"
expect_eq "${argv[1]}" --gpus "flag inserted after run"
uuids=$("$GPUPIN" "${SIM[@]}" --json ls | jq -r '[.gpus[:2][].uuid] | join(",")')
expect_eq "${argv[2]}" "\"device=$uuids\"" "quoted device list of the two closest free cards"
expect_eq "${argv[*]:3}" "--rm -e X=1 img python train.py" "the rest untouched"
leases=$("$GPUPIN" "${SIM[@]}" --json leases)
expect_contains "$leases" '"leases": []' "attached client ended: lease gone"

# Detached: the lease follows the container.
run_status "$GPUPIN" "${SIM[@]}" docker -- run -d img sleep infinity
expect_eq "$STATUS" 0 "docker run -d"
id=$(ls "$FAKE_DOCKER_STATE/containers")
leases=$("$GPUPIN" "${SIM[@]}" --json leases)
expect_contains "$leases" "\"container_id\": \"$id\"" "lease tied to the container"
run_status "$GPUPIN" "${SIM[@]}" pick --only 0 --explain
expect_eq "$STATUS" 3 "GPU 0 is held by the container"

# A wedged daemon: docker inspect is given up after 3 s, and the lease,
# which cannot be told dead, is kept.
started=$(now_ms)
FAKE_DOCKER_INSPECT_SECONDS=60 run_status timeout 20 "$GPUPIN" "${SIM[@]}" --json leases
expect_eq "$STATUS" 0 "leases while docker hangs"
expect_contains "$OUT" "\"container_id\": \"$id\"" "the lease kept while docker hangs"
took=$(($(now_ms) - started))
((took < 6000 * TIME_FACTOR)) || fail "leases took $took ms behind a hanging docker inspect"
# A planted lease whose container id is an option for docker is skipped.
sed "s/\"container_id\": \"$id\"/\"container_id\": \"-f\"/; s/\"id\": \"[^\"]*\"/\"id\": \"planted\"/" \
  "$(ls "$GPUPIN_STATE_DIR"/leases/*.json)" >"$GPUPIN_STATE_DIR/leases/planted.json"
run_status "$GPUPIN" "${SIM[@]}" -v leases
expect_contains "$ERR" "planted.json: lease: field 'container_id' is not a docker container id" "the planted id"
! grep -q -- ' -f$' "$FAKE_DOCKER_STATE/calls" || fail "docker was called with the planted id"
rm "$GPUPIN_STATE_DIR/leases/planted.json"
docker rm -f "$id"
leases=$("$GPUPIN" "${SIM[@]}" --json leases)
expect_contains "$leases" '"leases": []' "container gone: lease gone"

# --print reserves and prints the flag only.
run_status "$GPUPIN" "${SIM[@]}" docker --print
expect_contains "$OUT" "--gpus '\"device=GPU-" "printed flag"
run_status "$GPUPIN" "${SIM[@]}" docker -- ps
expect_eq "$STATUS" 2 "docker without run/create is a usage error"
run_status "$GPUPIN" "${SIM[@]}" docker -- run --gpus all img
expect_eq "$STATUS" 2 "own --gpus is refused"
expect_contains "$ERR" "gpupin chooses the GPUs" "says why"
echo PASS
