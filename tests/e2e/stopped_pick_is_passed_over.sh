#!/usr/bin/env bash
# `CUDA_VISIBLE_DEVICES=$(gpupin pick --wait) job`, with the pick suspended
# while it waits (SIGSTOP to the pick alone: its shell, the ticket's holder,
# runs on). The queue must not wait for it: the job behind takes the freed
# card, noticing the stopped pick at its --poll interval. Continued, the pick
# keeps its place, gets the card once the other job has ended, and its
# shell's job runs there.
source "$(dirname "$0")/lib.sh"

scenario="$GPUPIN_SOURCE_DIR/tests/e2e/fixtures/one-gpu.json"
log="$TEST_TMP/workload.log"
"$GPUPIN" --simulate "$scenario" run -- "$WORKLOAD" --seconds 60 --name holder --log "$log" 2>/dev/null &
wait_for_line "$log" '"name":"holder"'
bash -c 'CUDA_VISIBLE_DEVICES=$("$0" --simulate "$1" pick --wait --poll 200ms 2>"$2") \
  GPUPIN_SIM_SCENARIO="$1" exec "$3" --seconds 0.2 --name picked --log "$4"' \
  "$GPUPIN" "$scenario" "$TEST_TMP/pick.err" "$WORKLOAD" "$log" &
shell=$!
wait_for_line "$TEST_TMP/pick.err" 'waiting: next in queue'
"$GPUPIN" --simulate "$scenario" run --wait --poll 200ms -- \
  "$WORKLOAD" --seconds 0.5 --name behind --log "$log" 2>"$TEST_TMP/behind.err" &
behind=$!
wait_for_line "$TEST_TMP/behind.err" 'waiting: 2nd in queue'

# The pick runs in the command substitution's subshell, below the shell.
pick=$(pgrep -f -- "--simulate $scenario pick --wait")
[[ -n $pick ]] || fail "the pick is not running"
expect_passed_over_while_stopped "$behind" "$pick"
wait "$shell" || fail "the picked job failed after the pick was continued: $(cat "$TEST_TMP/pick.err")"
expect_ran_after picked behind
expect_eq "$(jq -r 'select(.name == "picked" and .event == "start") | .cuda_visible_devices' "$log")" \
  0 "the picked job's CUDA_VISIBLE_DEVICES"
