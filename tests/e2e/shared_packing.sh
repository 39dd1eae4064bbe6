#!/usr/bin/env bash
# Four `--mem 20G` jobs share one 80 GB card at once; a fifth waits until
# one of them ends.
source "$(dirname "$0")/lib.sh"

scenario="$GPUPIN_SOURCE_DIR/tests/e2e/fixtures/one-h100-80g.json"
log="$TEST_TMP/workload.log"
job() {
  exec "$GPUPIN" --simulate "$scenario" run --mem 20G --wait -- "$WORKLOAD" --mem 20G --seconds 2 --name "j$1" --log "$log" 2>"$TEST_TMP/j$1.err"
}
start_at_once 4 job
wait_until 20 "the 4 shared jobs all started" lines_at_least "$log" '"event":"start"' 4
"$GPUPIN" --simulate "$scenario" run --mem 20G --wait -- "$WORKLOAD" --mem 20G --seconds 0.1 --name j5 --log "$log" 2>"$TEST_TMP/j5.err" &
fifth=$!
wait_for_line "$TEST_TMP/j5.err" 'waiting'
wait_all_ok "${STARTED[@]}" "$fifth"

first_end=$(jq -s 'map(select(.event == "end" and .name != "j5").t_ms) | min' "$log")
last_start=$(jq -s 'map(select(.event == "start" and .name != "j5").t_ms) | max' "$log")
((last_start < first_end)) || fail "the 4 shared jobs did not run together"
(($(event_field "$log" start j5 t_ms) >= first_end)) || fail "the fifth job started before any of the four ended"
