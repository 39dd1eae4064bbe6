# run --json prints a start event before the command and, when it ends, an
# end event: its exit status, the signal that killed it, how long it ran and
# the lease it held.
source "$(dirname "$0")/lib.sh"
SIM=(--simulate "$EXAMPLES/server-4gpu.json")

run_status "$GPUPIN" "${SIM[@]}" --json run -- sh -c 'sleep 0.2; exit 3'
expect_eq "$STATUS" 3 "run's status is its command's"
start=$(grep '"event":"start"' <<<"$ERR")
end=$(tail -n 1 <<<"$ERR")
expect_eq "$(jq -r .event <<<"$end")" end "the last line on stderr"
expect_eq "$(jq -r .exit_status <<<"$end")" 3 "end: exit status"
expect_eq "$(jq -r .signal <<<"$end")" null "end: no signal"
expect_eq "$(jq -r .lease_id <<<"$end")" "$(jq -r .lease_id <<<"$start")" "end: the start event's lease"
duration=$(jq -r .duration_ms <<<"$end")
((duration >= 200)) || fail "end: duration_ms $duration for a command that slept 200 ms"

run_status "$GPUPIN" "${SIM[@]}" --json run -- sh -c 'kill -TERM $$'
expect_eq "$STATUS" 143 "a command killed by SIGTERM"
end=$(tail -n 1 <<<"$ERR")
expect_eq "$(jq -r .exit_status <<<"$end")" 143 "end: 128+15"
expect_eq "$(jq -r .signal <<<"$end")" SIGTERM "end: the signal"

# A script whose #! interpreter does not exist is found, chosen for and
# started, and the start fails: its start event still gets an end, 127.
printf '#!%s/no-such-interpreter\necho hi\n' "$TEST_TMP" >"$TEST_TMP/orphan.sh"
chmod +x "$TEST_TMP/orphan.sh"
run_status "$GPUPIN" "${SIM[@]}" --json run -- "$TEST_TMP/orphan.sh"
expect_eq "$STATUS" 127 "a command whose interpreter does not exist"
expect_eq "$(grep -c '"event":"start"' <<<"$ERR")" 1 "its start event"
end=$(tail -n 1 <<<"$ERR")
expect_eq "$(jq -c '[.event, .exit_status, .signal]' <<<"$end")" '["end",127,null]' "its end event"
expect_contains "$ERR" "gpupin: cannot run the command: the interpreter its #! line names" \
  "the message names what is missing"
echo PASS
