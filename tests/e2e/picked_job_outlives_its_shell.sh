#!/usr/bin/env bash
# A job started from the shell that picked its card, which then exits before
# any gpupin saw the job: the reservation holds while the job runs (no hand-
# over was recorded), so the job is that reservation's, not a leftover, and
# `ps --leftovers --kill` leaves it alone. Once it has ended, another user's
# process on the card does not bring the ended reservation back.
source "$(dirname "$0")/lib.sh"

as_nobody_copies "$EXAMPLES/server-4gpu.json"
gpupin() { "$GPUPIN" --simulate "$SCENARIO" "$@"; }
gpupin leases >/dev/null # creates the state directory
log="$TEST_TMP/workload.log"
export GPUPIN SCENARIO WORKLOAD log GPUPIN_SIM_SCENARIO="$SCENARIO"
timeout 20 bash -c 'ids=$("$GPUPIN" --simulate "$SCENARIO" pick --only 1 --ttl 600s)
  CUDA_VISIBLE_DEVICES=$ids "$WORKLOAD" --seconds 60 --name job --log "$log" &
  until grep -q "\"name\":\"job\"" "$log" 2>/dev/null; do sleep 0.05; done'
job=$(event_field "$log" start job pid)
ALSO_KILL=("$job")
trap 'kill -9 "${ALSO_KILL[@]}" 2>/dev/null || true; cleanup' EXIT
expect_eq "$(awk '{ print $4 }' "/proc/$job/stat")" 1 "the job outlives the shell that picked"

reservation=$(gpupin --json leases | jq -r '.leases[] | select(.gpu_uuids | length == 1) | .lease_id')
[[ -n $reservation ]] || fail "the reservation ended while its job runs: $(gpupin leases)"
run_status gpupin --json ps
expect_eq "$(jq -r ".processes[] | select(.pid == $job) | .lease_id" <<<"$OUT")" "$reservation" "the job is its reservation's"
run_status gpupin ps --leftovers --kill --yes
expect_eq "$STATUS" 0 "ps --leftovers --kill"
[[ -r /proc/$job/status ]] || fail "ps --leftovers --kill ended the reservation's job: $OUT"
# Nor does a bare release end it: it is the running job's lease.
run_status gpupin --json release
expect_eq "$STATUS:$(jq -c '[.released, .kept]' <<<"$OUT")" "0:[[],[\"$reservation\"]]" "a bare release keeps the job's reservation"
run_status gpupin release --all "$reservation"
expect_eq "$STATUS" 2 "release --all with an id"
expect_eq "$(gpupin --json leases | jq -r '.leases[0].lease_id')" "$reservation" "the lease after release --all ID"
# --all ends it, and says the job runs on without it, with --json too.
run_status gpupin --json release --all
expect_eq "$(jq -c .released <<<"$OUT")" "[\"$reservation\"]" "release --all"
expect_contains "$ERR" "pid $job still runs, now without a lease" "the warning of release --all --json"

kill "$job"
wait_until 10 "the job's end" eval '! gpupin --json ls | jq -e ".gpus[1].processes | length > 0" >/dev/null'
install -d -m 1777 "$TEST_TMP/nobody"
"${AS_NOBODY[@]}" env CUDA_VISIBLE_DEVICES=1 "$WORKLOAD" --seconds 60 --name stranger --log "$TEST_TMP/nobody/stranger.log" 2>/dev/null &
ALSO_KILL+=($!)
wait_for_line "$TEST_TMP/nobody/stranger.log" '"name":"stranger"'
expect_eq "$(gpupin --json leases | jq '.leases | length')" 0 "nobody's process brings back no ended reservation of root's"
echo PASS
