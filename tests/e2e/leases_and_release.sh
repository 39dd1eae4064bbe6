# leases lists who holds what; release ends the caller's own.
source "$(dirname "$0")/lib.sh"
SIM=(--simulate "$EXAMPLES/server-4gpu.json")

run_status "$GPUPIN" "${SIM[@]}" leases
expect_contains "$OUT" "no active leases" "empty state"
ids=$("$GPUPIN" "${SIM[@]}" pick -n 2)
expect_eq "$ids" "0,1" "two free cards in index order"
run_status "$GPUPIN" "${SIM[@]}" leases
expect_contains "$OUT" "reserved until" "reservation listed"
expect_contains "$OUT" "0,1" "with its GPUs"
json=$("$GPUPIN" "${SIM[@]}" --json leases)
expect_contains "$json" '"schema_version": 2' "json schema"
expect_contains "$json" '"gpu_indices": [' "json indices"
# A second pick from the same shell gets other cards: the reservation holds.
ids=$("$GPUPIN" "${SIM[@]}" pick -n 2)
expect_eq "$ids" "2,3" "reserved cards are not handed out twice"
run_status "$GPUPIN" "${SIM[@]}" pick
expect_eq "$STATUS" 3 "nothing left"
expect_eq "$OUT" "" "stdout stays empty on failure"
# Both reservations are this shell's own: the error says so, and how to
# free one whose job came and went before any gpupin looked.
expect_contains "$ERR" "reserved for this same shell (pid $$)" "the error names the shell's own reservation"
expect_contains "$ERR" "if the job it was for has ended: gpupin release $$-" "and how to free it"
# So does a run from the same shell.
run_status "$GPUPIN" "${SIM[@]}" run -- true
expect_eq "$STATUS" 3 "run while the shell's own picks hold every card"
expect_contains "$ERR" "reserved for this same shell (pid $$)" "run names the shell's own reservation"
run_status "$GPUPIN" "${SIM[@]}" release
expect_eq "$STATUS" 0 "release"
expect_contains "$OUT" "released" "says what it released"
run_status "$GPUPIN" "${SIM[@]}" --json leases
expect_contains "$OUT" '"leases": []' "all released"
# A reservation that ends on another day names that day, in the listing and
# in the reason another pick gives.
"$GPUPIN" "${SIM[@]}" pick --ttl 48h >/dev/null
day=$(LC_ALL=C date -d '+48 hours' '+%b %-d')
run_status "$GPUPIN" "${SIM[@]}" leases
expect_contains "$OUT" "reserved until $day " "a 48 h reservation's day"
run_status "$GPUPIN" "${SIM[@]}" pick --explain
expect_contains "$ERR" "until $day " "the day in --explain"
run_status "$GPUPIN" "${SIM[@]}" release
run_status "$GPUPIN" "${SIM[@]}" release no-such-lease
expect_eq "$STATUS" 1 "unknown id"
expect_contains "$ERR" "no lease 'no-such-lease'" "names the id"
expect_contains "$ERR" "a job still waiting in the queue leaves it when its gpupin is stopped" "and what a waiting job's id is"
# The same id twice releases, and reports, one lease.
id=$("$GPUPIN" "${SIM[@]}" pick >/dev/null && "$GPUPIN" "${SIM[@]}" --json leases | jq -r '.leases[0].lease_id')
"$GPUPIN" "${SIM[@]}" pick >/dev/null
run_status "$GPUPIN" "${SIM[@]}" release "$id" "$$-"
expect_eq "$STATUS" 2 "an id, then a prefix that matches it and another lease"
run_status "$GPUPIN" "${SIM[@]}" --json release "$id" "$id"
expect_eq "$(jq -c .released <<<"$OUT")" "[\"$id\"]" "one id given twice"
"$GPUPIN" "${SIM[@]}" release >/dev/null
# Every choice's JSON carries every card's verdict (doc/json.md), not only pick's.
"$GPUPIN" "${SIM[@]}" release >/dev/null
for command in pick env "docker --print"; do
  read -ra words <<<"$command"
  run_status "$GPUPIN" "${SIM[@]}" --json "${words[@]}"
  expect_eq "$(jq '.verdicts | length' <<<"$OUT")" 4 "verdicts in $command --json"
done
"$GPUPIN" "${SIM[@]}" release >/dev/null
run_status "$GPUPIN" "${SIM[@]}" --json run -- true
expect_eq "$(head -1 <<<"$ERR" | jq '.verdicts | length')" 4 "verdicts in run --json's start event"

# Another user's lease named as ours plus a character keeps neither our
# whole id nor our own prefix from naming ours.
as_nobody_setup
"$GPUPIN" "${SIM[@]}" release --all >/dev/null 2>&1
"$GPUPIN" "${SIM[@]}" pick >/dev/null
id=$("$GPUPIN" "${SIM[@]}" --json leases | jq -r '.leases[0].lease_id')
nobody_sleeps 60
# plant_nobodys_lease ID: a valid lease of nobody's named ID, held by its sleep.
plant_nobodys_lease() {
  "${AS_NOBODY[@]}" /usr/bin/python3 - "$GPUPIN_STATE_DIR/leases" "$1" "$SLEEPER" "$SLEEPER_START" <<'PY'
import json, os, sys
leases, rid, pid, start = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
lease = {"format_version": 1, "id": rid, "gpu_uuids": ["GPU-nowhere"],
         "holder": {"pid": pid, "start_time_ticks": start}, "uid": os.getuid(), "user": "nobody",
         "command": "x", "created_unix_ms": 1, "reservation_baseline_pids": []}
with open(f"{leases}/.{rid}", "w") as f:
    json.dump(lease, f)
os.rename(f"{leases}/.{rid}", f"{leases}/{rid}.json")
PY
}
plant_nobodys_lease "${id}0"
run_status "$GPUPIN" "${SIM[@]}" --json release "$id"
expect_eq "$(jq -c .released <<<"$OUT")" "[\"$id\"]" "our whole id, with nobody's longer one beside it: $ERR"
"$GPUPIN" "${SIM[@]}" pick >/dev/null
mine=$("$GPUPIN" "${SIM[@]}" --json leases | jq -r ".leases[] | select(.user == \"$(id -un)\") | .lease_id")
plant_nobodys_lease "${mine}1"
run_status "$GPUPIN" "${SIM[@]}" --json release "${mine:0:12}"
expect_eq "$(jq -c .released <<<"$OUT")" "[\"$mine\"]" "a prefix of ours names ours before another user's: $ERR"
# Nor does another user's lease named exactly as the prefix we type.
"$GPUPIN" "${SIM[@]}" pick >/dev/null
mine=$("$GPUPIN" "${SIM[@]}" --json leases | jq -r ".leases[] | select(.user == \"$(id -un)\") | .lease_id")
plant_nobodys_lease "${mine:0:12}"
run_status "$GPUPIN" "${SIM[@]}" --json release "${mine:0:12}"
expect_eq "$(jq -c .released <<<"$OUT")" "[\"$mine\"]" "a prefix of ours before another user's lease of that id: $ERR"
echo PASS
