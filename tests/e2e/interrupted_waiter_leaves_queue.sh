#!/usr/bin/env bash
# A waiter stopped by SIGTERM, SIGHUP (its terminal closed) or SIGINT
# (Ctrl-C) takes its ticket out of the queue, says so in one line, and dies
# by that signal, so a shell loop around it stops too; its command never
# runs. The waiter behind moves up and gets the card. A waiter that ignores
# SIGHUP (nohup) stays in the queue.
source "$(dirname "$0")/lib.sh"
# Background jobs of their own process group: without job control, bash
# starts them with SIGINT ignored, and a Ctrl-C would never reach them.
set -m

scenario="$GPUPIN_SOURCE_DIR/tests/e2e/fixtures/one-gpu.json"
log="$TEST_TMP/workload.log"
queue="$GPUPIN_STATE_DIR/queue"
"$GPUPIN" --simulate "$scenario" run -- "$WORKLOAD" --seconds 60 --name holder --log "$log" 2>/dev/null &
wait_for_line "$log" '"name":"holder"'

# The patient waiter, first in the queue, ignores SIGHUP as under nohup.
(
  trap '' HUP
  exec "$GPUPIN" --simulate "$scenario" run --wait -- "$WORKLOAD" --seconds 0.2 --name patient --log "$log"
) 2>"$TEST_TMP/patient.err" &
patient=$!
wait_for_line "$TEST_TMP/patient.err" 'waiting: next in queue'

# queue_size: how many tickets the queue holds.
queue_size() { find "$queue" -maxdepth 1 -name '*.json' | wc -l; }

for stop in TERM:run HUP:pick INT:env; do
  signal=${stop%%:*} command=${stop#*:}
  marker="$TEST_TMP/$command-ran"
  args=(--simulate "$scenario" "$command" --wait)
  [[ $command == run ]] && args+=(-- touch "$marker")
  # perl reports how its child ended: the number of the signal that killed
  # it, or "exit N".
  perl -e 'system(@ARGV); print(($? & 127) ? ($? & 127) : "exit " . ($? >> 8))' \
    "$GPUPIN" "${args[@]}" >"$TEST_TMP/$signal.how" 2>"$TEST_TMP/$signal.err" &
  reporter=$!
  wait_for_line "$TEST_TMP/$signal.err" 'waiting: 2nd in queue'
  expect_eq "$(queue_size)" 2 "tickets in the queue while $command --wait waits"
  kill "-$signal" "$(pgrep -P "$reporter")"
  wait "$reporter"
  expect_eq "$(cat "$TEST_TMP/$signal.how")" "$(kill -l "$signal")" "how $command --wait ended on SIG$signal"
  expect_eq "$(tail -n 1 "$TEST_TMP/$signal.err")" \
    "gpupin: stopped by SIG$signal while waiting for GPUs; left the queue" "$command's last line on SIG$signal"
  expect_eq "$(queue_size)" 1 "tickets in the queue right after $command --wait got SIG$signal"
  [[ ! -e $marker ]] || fail "run's command ran although gpupin was stopped while it waited"
done

# A terminal's Ctrl-C signals the whole foreground group, so run's waiting
# command process dies of it too: run still says that it was stopped.
"$GPUPIN" --simulate "$scenario" run --wait -- touch "$TEST_TMP/group-ran" 2>"$TEST_TMP/group.err" &
group=$!
wait_for_line "$TEST_TMP/group.err" 'waiting: 2nd in queue'
kill -INT -- "-$group"
status=0
wait "$group" || status=$?
expect_eq "$status" 130 "run --wait after SIGINT to its process group"
expect_eq "$(tail -n 1 "$TEST_TMP/group.err")" \
  "gpupin: stopped by SIGINT while waiting for GPUs; left the queue" "run's last line on a Ctrl-C"
expect_eq "$(queue_size)" 1 "tickets in the queue after a Ctrl-C to run --wait"

kill -HUP "$patient"
sleep 0.2
kill -0 "$patient" 2>/dev/null || fail "the waiter that ignores SIGHUP died of it: $(cat "$TEST_TMP/patient.err")"
expect_eq "$(queue_size)" 1 "tickets in the queue after SIGHUP to the waiter that ignores it"

# A waiter stopped behind the patient one does not disturb it either.
"$GPUPIN" --simulate "$scenario" run --wait -- touch "$TEST_TMP/behind-ran" 2>"$TEST_TMP/behind.err" &
behind=$!
wait_for_line "$TEST_TMP/behind.err" 'waiting: 2nd in queue'
kill -TERM "$behind"
wait "$behind" && fail "run --wait stopped by SIGTERM exited 0"
kill -9 "$(event_field "$log" start holder pid)"
wait "$patient" || fail "the patient waiter failed: $(cat "$TEST_TMP/patient.err")"
expect_eq "$(jq -r 'select(.event == "start" and .name == "patient") | .nvml_indices | join(",")' "$log")" 0 \
  "the card the patient waiter got"
[[ ! -e $TEST_TMP/behind-ran ]] || fail "the stopped waiter's command ran"
expect_eq "$(queue_size)" 0 "tickets left in the queue at the end"
