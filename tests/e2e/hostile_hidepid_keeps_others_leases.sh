#!/usr/bin/env bash
# On a server whose /proc is mounted with hidepid, a user cannot read other
# users' processes. Their running jobs must still hold their cards: nothing
# is chosen on them, and their leases are neither freed nor removed.
source "$(dirname "$0")/lib.sh"

as_nobody_setup
if ! unshare -m --propagation private true 2>/dev/null; then
  echo "skipped: needs unshare -m"
  exit 0
fi
shared_copies "$EXAMPLES/server-4gpu.json"
kill_workloads_at_exit

# hidden_nobody CMD...: CMD as nobody, in a mount namespace whose /proc
# hides other users' processes.
hidden_nobody() {
  # shellcheck disable=SC2016 # expanded by the inner shell
  unshare -m --propagation private bash -c 'mount -t proc -o hidepid=invisible proc /proc && exec "$@"' \
    hidden "${AS_NOBODY[@]}" "$@"
}

"$GPUPIN" --simulate "$scenario" run --only 0 -- "$WORKLOAD" --seconds 120 --name holder --log "$log" 2>/dev/null &
wait_for_line "$log" '"event":"start"'
holder=$(jq -r 'select(.event == "start") | .pid' "$log")
leases_before=$(ls "$GPUPIN_STATE_DIR/leases")
[[ -n $leases_before ]] || fail "root's job has no lease file"
if hidden_nobody test -e "/proc/$holder"; then
  echo "skipped: /proc with hidepid does not hide root's processes here"
  exit 0
fi

run_status hidden_nobody "$GPUPIN" --simulate "$scenario" run -n 4 -- true
expect_eq "$STATUS" 3 "nobody's run of all 4 cards while root's job holds GPU 0"
run_status hidden_nobody "$GPUPIN" --simulate "$scenario" run -n 1 --only 0 -- true
expect_eq "$STATUS" 3 "nobody's run on GPU 0 itself"
run_status hidden_nobody "$GPUPIN" --simulate "$scenario" run -n 1 -- printenv CUDA_VISIBLE_DEVICES
expect_eq "$STATUS" 0 "nobody's run of one card"
[[ $OUT != 0 ]] || fail "nobody's job was put on root's card"
expect_eq "$(hidden_nobody "$GPUPIN" --simulate "$scenario" --json leases | jq '.leases | length')" 1 \
  "root's lease, listed live to nobody"
expect_eq "$(ls "$GPUPIN_STATE_DIR/leases")" "$leases_before" "root's lease file, kept"

# A record naming init, hidden too, holds nothing: init is no user's job.
uuid1=$("$GPUPIN" --simulate "$scenario" --json ls | jq -r '.gpus[1].uuid')
init_start=$(awk '{ print $22 }' /proc/1/stat)
jq -n --arg uuid "$uuid1" --argjson start "$init_start" --argjson uid "$(id -u nobody)" \
  '{format_version: 1, id: "1-\($start)-0000beef", gpu_uuids: [$uuid], holder: {pid: 1, start_time_ticks: $start},
    uid: $uid, user: "nobody", command: "hog", created_unix_ms: 0, reservation_baseline_pids: []}' \
  >"$TEST_TMP/init-lease.json"
chmod 0644 "$TEST_TMP/init-lease.json"
"${AS_NOBODY[@]}" cp "$TEST_TMP/init-lease.json" "$GPUPIN_STATE_DIR/leases/1-$init_start-0000beef.json"
run_status hidden_nobody "$GPUPIN" --simulate "$scenario" run --only 1 -- true
expect_eq "$STATUS" 0 "a run on the card of a record naming init, under hidepid: $ERR"

# A waiter for root's card watches its holder by pidfd, though it cannot
# read it: it waits quietly and ends at its own deadline.
started=$(now_ms)
run_status hidden_nobody timeout 20 "$GPUPIN" --simulate "$scenario" run --wait=1s -n 4 -- true
elapsed=$(($(now_ms) - started))
expect_eq "$STATUS" 3 "nobody's run --wait=1s of all 4 cards: $ERR"
((elapsed < 6000)) || fail "nobody's run --wait=1s took $elapsed ms"
echo PASS
