#!/usr/bin/env bash
# A picked card's job is the script the shell started, not the script's
# first step: a gpupin that looks while the first step runs hands the
# reservation to the script, so the lease holds through the next step, and
# no other job is put on the card between or during the steps; also when
# the shell that picked is gone by then.
source "$(dirname "$0")/lib.sh"

export GPUPIN_SIM_SCENARIO="$EXAMPLES/server-4gpu.json"
gpupin() { "$GPUPIN" --simulate "$GPUPIN_SIM_SCENARIO" "$@"; }
gpupin leases >/dev/null # creates the state directory
log="$TEST_TMP/steps.log"
export GPUPIN WORKLOAD log GPUPIN_SIM_SCENARIO TEST_TMP
# The shell that picks stays, as a user's does, until the script ends.
bash -c 'ids=$("$GPUPIN" --simulate "$GPUPIN_SIM_SCENARIO" pick --only 2 --ttl 600s)
  CUDA_VISIBLE_DEVICES=$ids sh -c "\"$WORKLOAD\" --seconds 1 --name first --log \"$log\"
    \"$WORKLOAD\" --seconds 60 --name second --log \"$log\"" &
  echo $! >"$TEST_TMP/script.pid"
  wait' &
shell=$!
ALSO_KILL=("$shell")
trap 'kill -9 "${ALSO_KILL[@]}" 2>/dev/null || true; cleanup' EXIT
wait_for_line "$log" '"name":"first"'
script=$(cat "$TEST_TMP/script.pid")
ALSO_KILL+=("$script")

# A look while the first step runs hands the reservation over.
run_status gpupin --json leases
expect_eq "$(jq -r '.leases[0].holder_pid' <<<"$OUT")" "$script" "the lease is the script's, not its first step's"
wait_for_line "$log" '"name":"second"'
ALSO_KILL+=("$(event_field "$log" start second pid)")
expect_eq "$(jq -r '.leases | length' <<<"$(gpupin --json leases)")" 1 "the lease outlives the first step"
run_status gpupin run --only 2 --mem 1G -- true
expect_eq "$STATUS" 3 "another job on the card while the script's second step runs"
expect_contains "$ERR" "GPU 2 leased by" "the card is the script's"
run_status gpupin --json ps
expect_eq "$(jq -r '.processes[] | select(.gpu_index == 2) | .lease_id' <<<"$OUT")" \
  "$(gpupin --json leases | jq -r '.leases[0].lease_id')" "the second step is the lease's job"

kill "${ALSO_KILL[@]}"
wait "$shell" || true
wait_until 10 "the lease's end with the script" eval '[[ $(gpupin --json leases | jq ".leases | length") == 0 ]]'

# The shell that picks may be gone before any gpupin sees the job (nohup
# ./train.sh &, then exit): the job is then found by the shell's session.
: >"$log"
bash -c 'ids=$("$GPUPIN" --simulate "$GPUPIN_SIM_SCENARIO" pick --only 1 --ttl 600s)
  CUDA_VISIBLE_DEVICES=$ids nohup sh -c "\"$WORKLOAD\" --seconds 1 --name first --log \"$log\"
    \"$WORKLOAD\" --seconds 60 --name second --log \"$log\"" </dev/null >/dev/null 2>&1 &
  echo $! >"$TEST_TMP/script.pid"'
script=$(cat "$TEST_TMP/script.pid")
ALSO_KILL=("$script")
wait_for_line "$log" '"name":"first"'
run_status gpupin --json leases
expect_eq "$(jq -r '.leases[0].holder_pid' <<<"$OUT")" "$script" "the gone shell's reservation is its script's"
wait_for_line "$log" '"name":"second"'
ALSO_KILL+=("$(event_field "$log" start second pid)")
run_status gpupin run --only 1 --mem 1G -- true
expect_eq "$STATUS" 3 "another job on the card of a gone shell's script, in its second step"
kill "${ALSO_KILL[@]}"

# A script that takes cards for all of its steps uses env (as pick's help
# says): the lease is the script's, through a pause and its second step.
: >"$log"
cat >"$TEST_TMP/job.sh" <<EOS
#!/bin/bash
eval "\$("$GPUPIN" --simulate "$GPUPIN_SIM_SCENARIO" env --only 3)"
"$WORKLOAD" --seconds 1 --name prep --log "$log"
sleep 2
"$WORKLOAD" --seconds 60 --name train --log "$log"
EOS
chmod +x "$TEST_TMP/job.sh"
"$TEST_TMP/job.sh" &
job_script=$!
ALSO_KILL=("$job_script")
wait_for_line "$log" '"name":"prep"'
run_status gpupin --json leases
expect_eq "$(jq -r '.leases[0].holder_pid' <<<"$OUT")" "$job_script" "env's lease is the script's"
wait_until 10 "the end of the first step" lines_at_least "$log" '"event":"end"' 1
run_status gpupin run --only 3 --mem 1G -- true
expect_eq "$STATUS" 3 "another job on the card between the script's steps"
wait_for_line "$log" '"name":"train"'
ALSO_KILL+=("$(event_field "$log" start train pid)")
kill "${ALSO_KILL[@]}"
echo PASS
