#!/usr/bin/env bash
# A picked card's job is the script the shell started, not the script's
# first step: a gpupin that looks while the first step runs hands the
# reservation to the script, so the lease holds through the next step, and
# no other job is put on the card between or during the steps; also when
# the shell that picked is gone by then, or has exec'd the script.
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

# expect_held_between_steps HOLDER CARD WHAT: HOLDER runs a first step
# named first, pauses, then a second named second, on CARD: a look during
# the first step finds the lease held by HOLDER itself, and no other job gets
# the card in the pause.
expect_held_between_steps() {
  local holder=$1 card=$2 what=$3
  ALSO_KILL=("$holder")
  wait_for_line "$log" '"name":"first"'
  run_status gpupin --json leases
  expect_eq "$(jq -r '.leases[0].holder_pid' <<<"$OUT")" "$holder" "$what: the lease's holder"
  wait_until 10 "the end of the first step" lines_at_least "$log" '"event":"end"' 1
  run_status gpupin run --only "$card" --mem 1G -- true
  expect_eq "$STATUS" 3 "$what: another job on the card between the steps"
  wait_for_line "$log" '"name":"second"'
  ALSO_KILL+=("$(event_field "$log" start second pid)")
  kill "${ALSO_KILL[@]}"
}
# The steps as shell text, for sh -c and for a script file.
# shellcheck disable=SC2089
steps='"$WORKLOAD" --seconds 1 --name first --log "$log"; sleep 2
  "$WORKLOAD" --seconds 60 --name second --log "$log"'
# shellcheck disable=SC2090
export steps

# A shell that picked and then exec'd the script (ssh host 'x=$(gpupin
# pick) …; exec ./train.sh') has become the job: its steps are its own.
: >"$log"
bash -c 'ids=$("$GPUPIN" --simulate "$GPUPIN_SIM_SCENARIO" pick --only 0 --ttl 1s)
  CUDA_VISIBLE_DEVICES=$ids exec sh -c "$steps"' &
expect_held_between_steps $! 0 "a shell that exec'd the script"

# A script that takes cards for all of its steps uses env (as pick's help
# says): the lease is the script's, through a pause and its second step.
: >"$log"
printf '#!/bin/bash\neval "$("$GPUPIN" --simulate "$GPUPIN_SIM_SCENARIO" env --only 3)"\n%s\n' \
  "$steps" >"$TEST_TMP/job.sh"
chmod +x "$TEST_TMP/job.sh"
"$TEST_TMP/job.sh" &
expect_held_between_steps $! 3 "a script that took its card with env"
echo PASS
