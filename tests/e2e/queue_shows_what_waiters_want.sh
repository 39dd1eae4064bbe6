#!/usr/bin/env bash
# `gpupin leases` shows what each waiter asks for: how many cards, how much
# of a shared card, and the cards it names.
source "$(dirname "$0")/lib.sh"

SIM=(--simulate "$EXAMPLES/server-4gpu.json")
log="$TEST_TMP/workload.log"
"$GPUPIN" "${SIM[@]}" run --only 1 -- "$WORKLOAD" --mem 40G --seconds 60 --name holder --log "$log" \
  2>/dev/null &
wait_until 10 "the holder started" lines_at_least "$log" '"event":"start"' 1
"$GPUPIN" "${SIM[@]}" run --wait --mem 20G --only 1 -- true 2>"$TEST_TMP/shared.err" &
wait_for_line "$TEST_TMP/shared.err" 'waiting'
run_status "$GPUPIN" "${SIM[@]}" leases
expect_contains "$OUT" "1 GPU shared 20G (--only 1)" "a shared waiter's size and card"
kill "$(event_field "$log" start holder pid)"
echo PASS
