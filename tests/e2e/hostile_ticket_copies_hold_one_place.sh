#!/usr/bin/env bash
# nobody's gpupin waits for card 0, and nobody writes 20 copies of its
# ticket under new ids: each names that real, waiting gpupin. A gpupin waits
# for one ticket at a time, so the copies hold no place: root's pick hears
# of one job waiting, and `leases` lists one waiter, not 21.
source "$(dirname "$0")/lib.sh"

shared_copies "$EXAMPLES/server-4gpu.json"
# shellcheck disable=SC2154 # scenario and log: set by shared_copies
gpupin() { "$GPUPIN" --simulate "$scenario" "$@"; }
kill_workloads_at_exit
# shellcheck disable=SC2154 # log: set by shared_copies
gpupin run --only 0 -- "$WORKLOAD" --seconds 120 --name holder --log "$log" 2>/dev/null &
wait_until 10 "root's holder started" lines_at_least "$log" '"event":"start"' 1

"${AS_NOBODY[@]}" "$GPUPIN" --simulate "$scenario" run --only 0 --wait -- \
  "$WORKLOAD" --seconds 1 --name nobodyjob --log "$log" 2>"$TEST_TMP/nobody.err" &
wait_for_line "$TEST_TMP/nobody.err" 'waiting'

"${AS_NOBODY[@]}" /usr/bin/python3 - "$GPUPIN_STATE_DIR/queue" <<'PY'
import glob, json, os, sys
queue = sys.argv[1]
[real] = [json.load(open(name)) for name in glob.glob(f"{queue}/*.json")]
for n in range(20):
    copy = dict(real, id=f"copy{n}", seq=real["seq"] + n + 1, command="copy")
    with open(f"{queue}/.copy", "w") as f:
        json.dump(copy, f)
    os.chmod(f"{queue}/.copy", 0o644)
    os.rename(f"{queue}/.copy", f"{queue}/{copy['seq']}-{copy['id']}.json")
PY
expect_eq "$(ls "$GPUPIN_STATE_DIR/queue" | wc -l)" 21 "nobody's ticket and its copies"

run_status gpupin pick --ttl 5s
expect_eq "$STATUS" 3 "root's pick behind nobody's waiter"
expect_contains "$ERR" "1 job is already waiting for GPUs" "one place for nobody's one waiting gpupin"
run_status gpupin leases
expect_eq "$(grep -c 'nobody' <<<"$OUT")" 1 "leases lists nobody's waiter once: $OUT"
expect_eq "$(grep -c 'copy' <<<"$OUT")" 0 "and none of the copies: $OUT"
echo PASS
