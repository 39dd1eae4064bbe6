#!/usr/bin/env bash
# SIGTERM to `gpupin run` reaches its command; gpupin ends like it.
source "$(dirname "$0")/lib.sh"

log="$TEST_TMP/workload.log"
"$GPUPIN" --simulate "$EXAMPLES/server-4gpu.json" run -- "$WORKLOAD" --seconds 60 --name job --log "$log" 2>/dev/null &
gpupin=$!
wait_for_line "$log" '"event":"start"'
kill -TERM "$gpupin"
status=0
wait "$gpupin" || status=$?
expect_eq "$status" 143 "gpupin run's exit status after SIGTERM"
expect_eq "$(event_field "$log" end job signal)" 15 "signal the command saw"

# A command killed by a signal: gpupin dies by the same one, as the command
# did (a shell loop around it stops at Ctrl-C), but not by one that dumps
# core. Told apart from an exit with 128+N by the parent's wait status.
died_by() {
  python3 -c 'import subprocess, sys; print(subprocess.run(sys.argv[1:]).returncode)' \
    "$GPUPIN" -q --simulate "$EXAMPLES/server-4gpu.json" run -- sh -c "kill -$1 \$\$"
}
expect_eq "$(died_by INT)" -2 "gpupin's end when its command dies by SIGINT"
expect_eq "$(died_by TERM)" -15 "gpupin's end when its command dies by SIGTERM"
expect_eq "$(died_by SEGV 2>/dev/null)" 139 "gpupin's exit when its command dies by SIGSEGV"

# SIGUSR1 (Slurm's --signal=USR1, checkpoint-and-requeue) reaches the
# command too, rather than killing gpupin and leaving the command unwarned.
for signal in USR1 USR2 ALRM; do
  rm -f "$TEST_TMP/signal_ready" "$TEST_TMP/signal_seen"
  "$GPUPIN" -q --simulate "$EXAMPLES/server-4gpu.json" run -- sh -c \
    "trap 'echo $signal > $TEST_TMP/signal_seen; exit 7' $signal; echo > $TEST_TMP/signal_ready; while :; do sleep 0.05; done" &
  gpupin=$!
  wait_until 10 "the command to start" test -e "$TEST_TMP/signal_ready"
  kill "-$signal" "$gpupin"
  status=0
  wait "$gpupin" || status=$?
  expect_eq "$status" 7 "gpupin run's exit status after SIG$signal (the command's own)"
  expect_eq "$(cat "$TEST_TMP/signal_seen" 2>/dev/null)" "$signal" "the command saw SIG$signal"
done
echo PASS
