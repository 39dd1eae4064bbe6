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

# Detached: the lease follows the container, held by a `docker wait` on it
# that asks the daemon the container was started on (--context here).
run_status "$GPUPIN" "${SIM[@]}" docker -- --context lab run -d img sleep infinity
expect_eq "$STATUS" 0 "docker run -d"
id=$(ls "$FAKE_DOCKER_STATE/containers/lab")
leases=$("$GPUPIN" "${SIM[@]}" --json leases)
expect_contains "$leases" "\"container_id\": \"$id\"" "lease tied to the container"
holder=$(jq -r '.leases[0].holder_pid' <<<"$leases")
expect_eq "$(tr '\0' ' ' <"/proc/$holder/cmdline")" "bash $GPUPIN_SOURCE_DIR/tests/e2e/fake-docker/docker --context lab wait $id " "the lease's holder"
run_status "$GPUPIN" "${SIM[@]}" pick --only 0 --explain
expect_eq "$STATUS" 3 "GPU 0 is held by the container"
# Readers never ask docker: the holder's life is the container's.
calls=$(wc -l <"$FAKE_DOCKER_STATE/calls")
"$GPUPIN" "${SIM[@]}" leases >/dev/null
expect_eq "$(wc -l <"$FAKE_DOCKER_STATE/calls")" "$calls" "docker calls made by a reader"

# Another user's record naming a container is not held by anything of its
# user, so it holds nothing: a container id alone proves nothing.
lease_file=$(ls "$GPUPIN_STATE_DIR"/leases/*.json)
if [[ $(id -u) == 0 ]] && id -u nobody >/dev/null 2>&1; then
  chmod 0711 "$TEST_TMP" # nobody may reach the state directory inside, nothing more
  sed "s/\"id\": \"[^\"]*\"/\"id\": \"1-1-0badc0de\"/; s/\"uid\": [0-9]*/\"uid\": $(id -u nobody)/" "$lease_file" |
    runuser -u nobody -- tee "$GPUPIN_STATE_DIR/leases/1-1-0badc0de.json" >/dev/null
  run_status "$GPUPIN" "${SIM[@]}" --json leases --all
  expect_eq "$(jq -r '.leases[] | select(.lease_id == "1-1-0badc0de") | .state' <<<"$OUT")" "holder gone" "nobody's lease naming root's docker wait"
fi
# A planted lease whose container id is an option for docker is skipped.
sed "s/\"container_id\": \"$id\"/\"container_id\": \"-f\"/; s/\"id\": \"[^\"]*\"/\"id\": \"planted2\"/" \
  "$lease_file" >"$GPUPIN_STATE_DIR/leases/planted2.json"
run_status "$GPUPIN" "${SIM[@]}" -v leases
expect_contains "$ERR" "planted2.json: lease: field 'container_id' is not a docker container id" "the planted id"
rm -f "$GPUPIN_STATE_DIR/leases/planted2.json" "$GPUPIN_STATE_DIR/leases/1-1-0badc0de.json"
docker --context lab rm -f "$id"
wait_until 10 "the lease to end with its container" bash -c "[[ \$(\"$GPUPIN\" ${SIM[*]} --json leases | jq '.leases | length') == 0 ]]"

# --json: the start event on stderr (stdout is docker's), and for run -d the
# container the lease follows.
run_status "$GPUPIN" "${SIM[@]}" --json docker -- run -d img sleep infinity
expect_eq "$STATUS" 0 "docker --json run -d"
expect_eq "$(head -1 <<<"$ERR" | jq -r '.event + " " + .docker_args[1]')" "start --gpus" "the start event"
cid=$(tail -1 <<<"$ERR" | jq -r 'select(.event == "container") | .container_id')
expect_eq "$cid" "$OUT" "the container event names the container docker printed"
docker rm -f "$cid"
# Its lease ends when the fake client's `docker wait` notices.
wait_until 10 "the --json run -d lease to end with its container" bash -c "[[ \$(\"$GPUPIN\" ${SIM[*]} --json leases | jq '.leases | length') == 0 ]]"

# --print reserves and prints the flag only.
run_status "$GPUPIN" "${SIM[@]}" docker --print
expect_contains "$OUT" "--gpus '\"device=GPU-" "printed flag"
# For a shared card, the framework settings a job gets, as -e flags, in a
# line a shell's eval (or a paste) gives docker as it must read it.
run_status "$GPUPIN" "${SIM[@]}" docker --print --mem 1G
expect_eq "$STATUS" 0 "--print --mem"
words=()
eval "words=($OUT)"
expect_eq "${#words[@]}" 6 "--gpus VALUE -e SETTING -e SETTING"
[[ ${words[1]} =~ ^\"device=GPU-[0-9a-f-]+\"$ ]] || fail "the --gpus value docker gets: ${words[1]}"
expect_eq "${words[*]:2}" "-e XLA_PYTHON_CLIENT_PREALLOCATE=false -e TF_FORCE_GPU_ALLOW_GROWTH=true" \
  "the settings"
run_status "$GPUPIN" "${SIM[@]}" docker --print -- run img
expect_eq "$STATUS" 2 "--print with a docker command"
expect_contains "$ERR" "--print runs no docker command" "says why"
run_status "$GPUPIN" "${SIM[@]}" docker -- ps
expect_eq "$STATUS" 2 "docker without run/create is a usage error"
# create only creates: the lease ends with the client, and gpupin says so.
run_status "$GPUPIN" "${SIM[@]}" docker -- create img
expect_eq "$STATUS" 0 "docker create"
expect_contains "$ERR" "docker create does not start the container: the lease ends when docker create returns" \
  "create is warned of"
expect_eq "$("$GPUPIN" "${SIM[@]}" --json leases | jq '[.leases[] | select(.command == "docker create img")] | length')" 0 \
  "create holds no lease once it returned"
run_status "$GPUPIN" "${SIM[@]}" docker -- run --rm img true
[[ $ERR != *"docker create does not"* ]] || fail "run is warned as create: $ERR"
# No docker client: told as run tells a missing command, before any lease.
mkdir -p "$TEST_TMP/empty"
run_status env PATH="$TEST_TMP/empty" "$GPUPIN" "${SIM[@]}" docker -- run img
expect_eq "$STATUS" 127 "docker not found"
expect_eq "$ERR" "gpupin: docker: command not found in PATH" "the message"
expect_eq "$("$GPUPIN" "${SIM[@]}" --json leases | jq '[.leases[] | select(.command | startswith("docker run"))] | length')" \
  0 "no lease taken for it"
run_status "$GPUPIN" "${SIM[@]}" docker -- run --gpus all img
expect_eq "$STATUS" 2 "own --gpus is refused"
expect_contains "$ERR" "gpupin chooses the GPUs" "says why"
echo PASS
