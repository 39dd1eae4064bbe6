# A gpupin inside a gpupin job (a script run by `gpupin run`, or a shell
# after `eval "$(gpupin env)"`) is served from the job's own cards and never
# queues: otherwise it would wait for ever on its own job's lease, at the
# head of the queue, holding up every other user.
source "$(dirname "$0")/lib.sh"
export GPUPIN_SIM_SCENARIO="$EXAMPLES/server-4gpu.json"
SIM=(--simulate "$GPUPIN_SIM_SCENARIO")

# Nested in a run: the job's card, at once.
run_status timeout $((10 * TIME_FACTOR)) "$GPUPIN" "${SIM[@]}" -q run --only 2 -- \
  "$GPUPIN" "${SIM[@]}" -q run --wait=5s -- sh -c 'echo "$CUDA_VISIBLE_DEVICES"'
expect_eq "$STATUS" 0 "a nested run"
expect_eq "$OUT" 2 "the nested job's CUDA_VISIBLE_DEVICES: the outer job's card"

# Nested while another job waits for that same card: the nested run does
# not queue behind it (which would wait for the outer job to end).
"$GPUPIN" "${SIM[@]}" -q run --only 1 -- sh -c \
  "sleep 1; '$GPUPIN' ${SIM[*]} -q run --wait=10s -- echo nested-ran" >"$TEST_TMP/outer.out" 2>"$TEST_TMP/outer.err" &
outer=$!
wait_until 5 "the outer job's lease" files_at_least "$GPUPIN_STATE_DIR/leases" 1
"$GPUPIN" "${SIM[@]}" -q run --only 1 --wait=20s -- \
  echo other-ran >"$TEST_TMP/other.out" 2>"$TEST_TMP/other.err" &
other=$!
started=$(now_ms)
wait "$outer" || fail "the outer job failed"
took=$(($(now_ms) - started))
expect_eq "$(cat "$TEST_TMP/outer.out")" nested-ran "the nested job ran"
((took < 5000 * TIME_FACTOR)) || fail "the nested run took $took ms: it queued behind the other job"
wait "$other" || fail "the other job failed"
expect_eq "$(cat "$TEST_TMP/other.out")" other-ran "the other job ran after the outer one"

# Two nested jobs at once share the job's card one after the other, waiting
# for each other's lease without a ticket, and never overlap.
log="$TEST_TMP/siblings.log"
run_status timeout $((20 * TIME_FACTOR)) "$GPUPIN" "${SIM[@]}" -q run --only 3 -- sh -c "
  '$GPUPIN' ${SIM[*]} -q run --wait=10s -- '$WORKLOAD' --seconds 0.5 --log '$log' &
  '$GPUPIN' ${SIM[*]} -q run --wait=10s -- '$WORKLOAD' --seconds 0.5 --log '$log' &
  wait"
expect_eq "$STATUS" 0 "two nested jobs"
expect_eq "$(grep -c '"event":"end"' "$log")" 2 "both nested jobs ended"
expect_no_overlap "$log"
expect_eq "$(jq -r 'select(.event == "start") | .nvml_indices[0]' "$log" | sort -u)" 3 "on the job's card"

# After eval "$(gpupin env)", a run in that shell uses the reserved card.
run_status timeout $((10 * TIME_FACTOR)) bash -c "
  eval \"\$('$GPUPIN' ${SIM[*]} -q env --only 1)\"
  '$GPUPIN' ${SIM[*]} -q run --wait=5s -- sh -c 'echo \$CUDA_VISIBLE_DEVICES'"
expect_eq "$STATUS" 0 "run after eval env"
expect_eq "$OUT" 1 "run after eval env"

# A GPUPIN_LEASE_ID copied from another job names nothing: its lease still blocks.
"$GPUPIN" "${SIM[@]}" -q run --only 0 -- sleep 30 &
holder=$!
# Its own lease, by command: an earlier step's ended lease may still have a file.
holder_lease() { "$GPUPIN" "${SIM[@]}" --json leases | jq -r '.leases[] | select(.command == "sleep 30") | .lease_id'; }
has_holder_lease() { [[ -n $(holder_lease) ]]; }
wait_until $((5 * TIME_FACTOR)) "the holder's lease" has_holder_lease
id=$(holder_lease)
GPUPIN_LEASE_ID=$id run_status "$GPUPIN" "${SIM[@]}" run --only 0 -- true
expect_eq "$STATUS" 3 "a forged GPUPIN_LEASE_ID"
expect_contains "$ERR" "leased by" "a forged GPUPIN_LEASE_ID"
kill "$holder"
echo PASS
