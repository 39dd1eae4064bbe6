#!/usr/bin/env bash
# SIGTERM to `gpupin run` reaches its command; gpupin exits 143 like it.
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
