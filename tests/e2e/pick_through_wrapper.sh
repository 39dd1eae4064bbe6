#!/usr/bin/env bash
# `x=$(timeout 30 gpupin pick)`, and `sh -c 'gpupin pick'` (what Python's
# shell=True and os.popen start; dash does not exec its last command): the
# process above gpupin only runs it and exits with it. The reservation must
# belong to the shell that goes on to start the job, or it would end as soon
# as the ids are read and the next pick would get the same card.
source "$(dirname "$0")/lib.sh"

scenario="$EXAMPLES/server-4gpu.json"
# Each shell picks, then lives on as a script that starts its job would.
bash -c 'x=$(timeout 30 "$0" --simulate "$1" pick); echo "$x" >"$2"; sleep 60' \
  "$GPUPIN" "$scenario" "$TEST_TMP/timeout.ids" &
through_timeout=$!
wait_for_line "$TEST_TMP/timeout.ids" .
bash -c 'x=$(sh -c "$0"); echo "$x" >"$1"; sleep 60' \
  "'$GPUPIN' --simulate '$scenario' pick" "$TEST_TMP/sh.ids" &
through_sh=$!
wait_for_line "$TEST_TMP/sh.ids" .
a=$(cat "$TEST_TMP/timeout.ids")
b=$(cat "$TEST_TMP/sh.ids")
expect_eq "$a" 0 "the first pick, through timeout"
expect_eq "$b" 1 "the second pick, through sh -c: the first reservation still holds"

# Both reservations are held by the long-lived shells, not by the wrappers.
json=$("$GPUPIN" --simulate "$scenario" --json leases)
holders=$(python3 -c 'import json,sys; print(" ".join(str(l["pid"]) for l in json.load(sys.stdin)["leases"]))' <<<"$json")
expect_eq "$(tr ' ' '\n' <<<"$holders" | sort -n | tr '\n' ' ')" \
  "$(printf '%s\n' "$through_timeout" "$through_sh" | sort -n | tr '\n' ' ')" "the reservations' holders"

# A script that goes on after gpupin is no wrapper: its shell holds the
# reservation and ends it when it exits.
sh -c "'$GPUPIN' --simulate '$scenario' pick >'$TEST_TMP/script.ids'; sleep 0.2"
expect_eq "$(cat "$TEST_TMP/script.ids")" 2 "a pick in a longer sh -c script"
run_status "$GPUPIN" --simulate "$scenario" pick
expect_eq "$OUT" 2 "that script's reservation ended with it"
echo PASS
