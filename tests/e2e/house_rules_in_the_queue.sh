#!/usr/bin/env bash
# ctest: RUN_SERIAL
# The admin's limits, as two real users (root and nobody) meet them on 4
# cards: with max_gpus_per_user = 2, root's third job exits 3 naming the rule
# (or, with --wait, queues) while nobody gets a free card at once; nothing
# root writes (its own file, --config, GPUPIN_CONFIG) lifts the cap; a
# reserved card is never chosen unless --only names it; queue = "fifo"
# serves in arrival order; one user's jobs keep their order at the cap. No
# two jobs ever share a card.
source "$(dirname "$0")/lib.sh"

house_rules '[limits]\nmax_gpus_per_user = 2\nreserved = ["3"]\n'
admin="$GPUPIN_TEST_ADMIN_CONFIG"
shared_copies "$EXAMPLES/server-4gpu.json"
gpupin() { "$GPUPIN" --simulate "$scenario" "$@"; }
job() { # job NAME SECONDS [run options...]
  local name=$1 seconds=$2
  shift 2
  gpupin run "$@" -- "$WORKLOAD" --seconds "$seconds" --name "$name" --log "$log"
}

job root1 30 2>"$TEST_TMP/root1.err" &
job root2 30 2>"$TEST_TMP/root2.err" &
wait_until 10 "root's two jobs" bash -c "(( \$(grep -c '\"event\":\"start\"' '$log') == 2 ))"

run_status job root3 1
expect_eq "$STATUS" 3 "root's third job without --wait"
expect_eq "$ERR" "gpupin: you hold 2 GPUs, the most one user may hold here (max_gpus_per_user = 2 in $admin:2); wait with --wait, or gpupin release" \
  "the refusal names the rule"

# Nothing root writes lifts the cap.
export XDG_CONFIG_HOME="$TEST_TMP/xdg"
mkdir -p "$XDG_CONFIG_HOME/gpupin"
printf '[limits]\nmax_gpus_per_user = 9\n' >"$XDG_CONFIG_HOME/gpupin/config.toml"
run_status job root3 1
expect_eq "$STATUS" 1 "[limits] in the user's file"
expect_contains "$ERR" "limits belong to the admin" "why the user's file is refused"
rm "$XDG_CONFIG_HOME/gpupin/config.toml"
printf '[limits]\nmax_gpus_per_user = 9\n' >"$TEST_TMP/mine.toml"
run_status env GPUPIN_CONFIG="$TEST_TMP/mine.toml" "$GPUPIN" --simulate "$scenario" run -- true
expect_eq "$STATUS" 2 "[limits] in GPUPIN_CONFIG (a bad option file)"
expect_contains "$ERR" "limits belong to the admin" "why GPUPIN_CONFIG is refused"
run_status gpupin --config "$TEST_TMP/mine.toml" run -- true
expect_eq "$STATUS" 2 "[limits] in --config"
expect_contains "$ERR" "limits belong to the admin" "why --config is refused"
run_status gpupin run --max-gpus-per-user 9 -- true
expect_eq "$STATUS" 2 "no option sets a limit"

# With --wait root's third job queues; nobody's job, submitted after it,
# gets the free card at once (card 3 is reserved: card 2 is the free one).
job root3 0.5 --wait 2>"$TEST_TMP/root3.err" &
root3=$!
wait_for_line "$TEST_TMP/root3.err" "waiting"
expect_contains "$(cat "$TEST_TMP/root3.err")" "max_gpus_per_user = 2" "root's waiter names the cap"
submitted_ms=$(now_ms)
"${AS_NOBODY[@]}" "$GPUPIN" --simulate "$scenario" run --wait -- \
  "$WORKLOAD" --seconds 30 --name nobody1 --log "$log" 2>"$TEST_TMP/nobody1.err" &
wait_for_line "$log" '"event":"start".*"name":"nobody1"'
started_ms=$(event_field "$log" start nobody1 t_ms)
echo "nobody's job started $((started_ms - submitted_ms)) ms after it was submitted"
((started_ms - submitted_ms < 1000 * TIME_FACTOR)) || fail "nobody waited behind root's capped job"
expect_eq "$(jq -r 'select(.event == "start" and .name == "nobody1") | .nvml_indices[0]' "$log")" 2 \
  "nobody's card (3 is reserved)"
kill -0 "$root3" 2>/dev/null || fail "root's capped job did not wait"

# leases shows each user's cards against the cap, and the waiter.
run_status gpupin --json leases
expect_eq "$(jq -c '[.holdings[] | [.user, .gpus_held, .max_gpus_per_user]]' <<<"$OUT")" \
  '[["root",2,2],["nobody",1,2]]' "holdings against the cap"
expect_eq "$(jq -r '.holdings[0].rule' <<<"$OUT")" "max_gpus_per_user = 2 in $admin:2" "the cap's rule"
expect_eq "$(jq '.queue | length' <<<"$OUT")" 1 "root's capped job waits in the queue"
run_status gpupin leases
grep -Eq "^root +2 +max_gpus_per_user = 2 in $admin:2" <<<"$OUT" || fail "leases' holdings table: $OUT"
# A user over the cap (here lowered under root's two cards; a lease file
# written by hand would do the same) is marked for the administrator.
cp "$admin" "$TEST_TMP/admin.saved"
sed -i 's/^max_gpus_per_user = 2$/max_gpus_per_user = 1/' "$admin"
run_status gpupin leases
grep -Eq "^root +2 +max_gpus_per_user = 1 in $admin:2 \(over it\)" <<<"$OUT" || fail "a user over the cap: $OUT"
grep -Eq "^nobody +1 +max_gpus_per_user = 1 in $admin:2$" <<<"$OUT" || fail "a user at the cap: $OUT"
cp "$TEST_TMP/admin.saved" "$admin"

# The reserved card: not chosen while it is the only free one; named, it is.
run_status "${AS_NOBODY[@]}" bash -c '"$0" --simulate "$1" pick --explain; exit $?' "$GPUPIN" "$scenario"
expect_eq "$STATUS" 3 "a pick with only the reserved card free: $ERR"
expect_contains "$ERR" "reserved = [\"3\"] in $admin" "--explain names the reserved rule"
run_status "${AS_NOBODY[@]}" "$GPUPIN" --simulate "$scenario" run --only 3 -- true
expect_eq "$STATUS" 0 "a run that names the reserved card"
run_status gpupin ls
grep -Eq '^ *3 .*reserved' <<<"$OUT" || fail "ls marks the reserved card: $OUT"

# root's jobs end; its capped waiter runs.
# By pid: a pattern would also match other tests' workloads running beside this one.
for name in root1 root2 nobody1; do kill "$(event_field "$log" start "$name" pid)" || true; done
wait "$root3" || fail "root's third job failed: $(cat "$TEST_TMP/root3.err")"
wait || true
expect_no_overlap "$log"

# One user's jobs keep their order at the cap: root holds 1 of its 2, its
# two-card job waits at the cap, and its one-card job after it (which would
# fit) waits behind it instead of passing it.
house_rules '[limits]\nmax_gpus_per_user = 2\n'
: >"$log"
job cap_hold 30 --only 0 2>"$TEST_TMP/cap_hold.err" &
wait_for_line "$log" '"name":"cap_hold"'
job cap_two 0.5 -n 2 --wait 2>"$TEST_TMP/cap_two.err" &
wait_for_line "$TEST_TMP/cap_two.err" "waiting"
job cap_one 0.5 --wait 2>"$TEST_TMP/cap_one.err" &
wait_for_line "$TEST_TMP/cap_one.err" "waiting"
expect_contains "$(cat "$TEST_TMP/cap_one.err")" "waiting: 2nd in queue (1 ahead: root," \
  "root's one-card job waits behind its two-card job at the cap"
kill "$(event_field "$log" start cap_hold pid)" || true
wait
two=$(event_field "$log" start cap_two t_ms)
one=$(event_field "$log" start cap_one t_ms)
((two < one)) || fail "root's jobs out of order at the cap: two-card job $two, one-card job $one"
expect_no_overlap "$log"

# One card, three waiters: root_a, root_b, then nobody. Fair share would
# serve nobody (holding nothing) before root_b (whose user holds root_a's
# card); queue = "fifo" serves them in arrival order.
house_rules '[limits]\nqueue = "fifo"\n'
: >"$log"
job hold 1.5 --only 0 2>"$TEST_TMP/hold.err" &
wait_for_line "$log" '"name":"hold"'
job fifo_root_a 0.5 --only 0 --wait 2>"$TEST_TMP/fa.err" &
wait_for_line "$TEST_TMP/fa.err" "waiting"
job fifo_root_b 0.5 --only 0 --wait 2>"$TEST_TMP/fb.err" &
wait_for_line "$TEST_TMP/fb.err" "waiting"
"${AS_NOBODY[@]}" "$GPUPIN" --simulate "$scenario" run --only 0 --wait -- \
  "$WORKLOAD" --seconds 0.5 --name fifo_nobody --log "$log" 2>"$TEST_TMP/fn.err" &
wait_for_line "$TEST_TMP/fn.err" "waiting"
expect_contains "$(cat "$TEST_TMP/fn.err")" "3rd in queue" "nobody is third under fifo"
wait
a=$(event_field "$log" start fifo_root_a t_ms)
b=$(event_field "$log" start fifo_root_b t_ms)
n=$(event_field "$log" start fifo_nobody t_ms)
((a < b && b < n)) || fail "fifo order: root_a $a, root_b $b, nobody $n"
expect_no_overlap "$log"
echo PASS
