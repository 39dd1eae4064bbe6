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
holders=$(python3 -c 'import json,sys; print(" ".join(str(l["holder_pid"]) for l in json.load(sys.stdin)["leases"]))' <<<"$json")
expect_eq "$(tr ' ' '\n' <<<"$holders" | sort -n | tr '\n' ' ')" \
  "$(printf '%s\n' "$through_timeout" "$through_sh" | sort -n | tr '\n' ' ')" "the reservations' holders"

# A wrapper that forks a copy of itself and runs gpupin from the copy, as
# sudo does with use_pty: both are passed over.
cat >"$TEST_TMP/forking_wrapper.py" <<'PY'
import os, subprocess, sys
if os.fork() == 0:
    sys.exit(subprocess.run(sys.argv[1:]).returncode)
sys.exit(os.waitstatus_to_exitcode(os.wait()[1]))
PY
bash -c 'x=$(python3 "$0" "$1" --simulate "$2" pick); echo "$x" >"$3"; sleep 60' \
  "$TEST_TMP/forking_wrapper.py" "$GPUPIN" "$scenario" "$TEST_TMP/forking.ids" &
through_fork=$!
wait_for_line "$TEST_TMP/forking.ids" .
expect_eq "$(cat "$TEST_TMP/forking.ids")" 2 "a pick through a wrapper that forks a copy of itself"

# docker --print reserves as pick does.
bash -c 'x=$(timeout 30 "$0" --simulate "$1" docker --print); echo "$x" >"$2"; sleep 60' \
  "$GPUPIN" "$scenario" "$TEST_TMP/docker.flag" &
through_docker=$!
wait_for_line "$TEST_TMP/docker.flag" .
gpu3=$("$GPUPIN" --simulate "$scenario" --json ls | python3 -c 'import json,sys; print(json.load(sys.stdin)["gpus"][3]["uuid"])')
expect_contains "$(cat "$TEST_TMP/docker.flag")" "$gpu3" "docker --print through timeout reserves GPU 3"
json=$("$GPUPIN" --simulate "$scenario" --json leases)
holders=$(python3 -c 'import json,sys; print(" ".join(str(l["holder_pid"]) for l in json.load(sys.stdin)["leases"]))' <<<"$json")
expect_eq "$(tr ' ' '\n' <<<"$holders" | sort -n | tr '\n' ' ')" \
  "$(printf '%s\n' "$through_timeout" "$through_sh" "$through_fork" "$through_docker" | sort -n | tr '\n' ' ')" \
  "all four reservations held by their long-lived shells"
"$GPUPIN" --simulate "$scenario" release >/dev/null
kill "$through_timeout" "$through_sh" "$through_fork" "$through_docker"

# -v names the process the reservation follows.
run_status "$GPUPIN" -v --simulate "$scenario" pick
expect_contains "$ERR" "the reservation follows pid $$ (" "-v names the holder"
"$GPUPIN" --simulate "$scenario" release >/dev/null

# A shell started inside an identical shell (`bash` typed in a terminal's
# `bash`) exec'd and is a shell of its own, not a forked copy: a reservation
# it makes ends with it, while the outer shell lives on.
cat >"$TEST_TMP/inner.txt" <<INNER
eval "\$('$GPUPIN' --simulate '$scenario' env 2>/dev/null)"
echo "\$\$ \$CUDA_VISIBLE_DEVICES" >'$TEST_TMP/inner.out'
INNER
cat >"$TEST_TMP/outer.txt" <<OUTER
bash <'$TEST_TMP/inner.txt'
exec sleep 60
OUTER
bash <"$TEST_TMP/outer.txt" &
outer=$!
wait_for_line "$TEST_TMP/inner.out" .
read -r _ inner_ids <"$TEST_TMP/inner.out"
expect_eq "$inner_ids" 0 "the inner shell's env"
no_leases() { [[ $("$GPUPIN" --simulate "$scenario" --json leases) == *'"leases": []'* ]]; }
wait_until 10 "the inner shell's lease to end with it" no_leases
kill "$outer"

# A script that goes on after gpupin is no wrapper: its shell holds the
# reservation and ends it when it exits.
sh -c "'$GPUPIN' --simulate '$scenario' pick >'$TEST_TMP/script.ids'; sleep 0.2"
expect_eq "$(cat "$TEST_TMP/script.ids")" 0 "a pick in a longer sh -c script"
run_status "$GPUPIN" --simulate "$scenario" pick
expect_eq "$OUT" 0 "that script's reservation ended with it"
echo PASS
