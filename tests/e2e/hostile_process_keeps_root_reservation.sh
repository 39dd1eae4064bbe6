#!/usr/bin/env bash
# Root's shell reserves card 1 (`gpupin pick`) and lives on; before root's
# job starts, nobody runs a 3-second process of its own on card 1. A
# reservation is handed only to a process descending from the shell that
# made it, so root's next transaction keeps it as it was: nobody's process
# ending frees nothing, and nobody's `run --only 1` is refused while root's
# shell lives. Then root's own job (a child of that shell) takes it over.
source "$(dirname "$0")/lib.sh"

as_nobody_copies "$EXAMPLES/server-4gpu.json"
log="$TEST_TMP/workload.log"
install -m 0666 /dev/null "$log"
export GPUPIN_SIM_SCENARIO="$SCENARIO"
mkfifo "$TEST_TMP/go"
# Root's shell: picks card 1, then waits for the word to start its job.
bash -c '"$1" --simulate "$2" pick --only 1 --ttl 300s >"$3"
  read -r _ <"$4"
  CUDA_VISIBLE_DEVICES=$(cat "$3") exec "$5" --seconds 3 --name roots --log "$6"' \
  shell "$GPUPIN" "$SCENARIO" "$TEST_TMP/picked" "$TEST_TMP/go" "$WORKLOAD" "$log" &
shell=$!
wait_until 20 "root's pick" test -s "$TEST_TMP/picked"
expect_eq "$(cat "$TEST_TMP/picked")" 1 "root's pick"
reservation() { "$GPUPIN" --simulate "$SCENARIO" --json leases | jq -c '.leases[] | [.user, .holder_pid, .reservation_deadline_unix_ms != null]'; }
expect_eq "$(reservation)" "[\"root\",$shell,true]" "root's reservation"

CUDA_VISIBLE_DEVICES=1 "${AS_NOBODY[@]}" "$WORKLOAD" --seconds 3 --name nobodys --log "$log" &
stranger=$!
wait_for_line "$log" '"event":"start".*"name":"nobodys"'
# Root's next transaction, while nobody's process runs on the card.
run_status "$GPUPIN" --simulate "$SCENARIO" run --only 3 -- true
expect_eq "$STATUS" 0 "root's run on another card: $ERR"
expect_eq "$(reservation)" "[\"root\",$shell,true]" "root's reservation beside nobody's process"
wait "$stranger"
run_status "${AS_NOBODY[@]}" "$GPUPIN" --simulate "$SCENARIO" run --only 1 -- true
expect_eq "$STATUS" 3 "nobody's run on root's reserved card, after nobody's process ended"
expect_contains "$ERR" "root" "who holds the card"
expect_eq "$(reservation)" "[\"root\",$shell,true]" "root's reservation after nobody's process ended"

# Root's job, the shell itself (exec): the reservation is its.
echo go >"$TEST_TMP/go"
wait_for_line "$log" '"event":"start".*"name":"roots"'
run_status "$GPUPIN" --simulate "$SCENARIO" run --only 3 -- true
expect_eq "$(reservation)" "[\"root\",$shell,false]" "the lease once root's job (the shell, exec'd) runs"
wait "$shell" || fail "root's job failed"
echo PASS
