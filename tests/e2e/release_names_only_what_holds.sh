#!/usr/bin/env bash
# release and its completion deal in leases that still hold: a lease whose
# holder has ended is pruned before ids are matched, so its id names
# nothing (and is not offered for completion). Releasing the lease of a
# shell that ran eval "$(gpupin env)" reminds that the shell keeps the
# variables.
source "$(dirname "$0")/lib.sh"
SIM=(--simulate "$EXAMPLES/server-4gpu.json")

# A reservation for a shell that has ended.
id=$(bash -c '"$0" --simulate "$1" --json pick | jq -r .lease_id' "$GPUPIN" "$EXAMPLES/server-4gpu.json")
[[ -n $id && $id != null ]] || fail "pick gave no lease id"
expect_eq "$("$GPUPIN" "${SIM[@]}" completion --list leases)" "" "no id offered for an ended lease"
run_status "$GPUPIN" "${SIM[@]}" release "$id"
expect_eq "$STATUS" 1 "release of an ended lease"
expect_contains "$ERR" "no lease '$id'" "it names nothing"
# Nor does --all count an ended lease among those it released.
bash -c '"$0" --simulate "$1" pick >/dev/null' "$GPUPIN" "$EXAMPLES/server-4gpu.json" ||
  fail "the second pick failed"
run_status "$GPUPIN" "${SIM[@]}" --json release --all
expect_eq "$STATUS:$(jq -c .released <<<"$OUT")" "0:[]" "release --all of an ended shell's lease"

# A live shell's lease is offered, and releasing it says what the shell keeps.
out=$(bash -c 'eval "$("$0" --simulate "$1" env 2>/dev/null)"
  "$0" --simulate "$1" completion --list leases
  echo "id $GPUPIN_LEASE_ID"
  "$0" --simulate "$1" release --all 2>&1' "$GPUPIN" "$EXAMPLES/server-4gpu.json")
live=$(sed -n 's/^id //p' <<<"$out")
expect_eq "$(head -1 <<<"$out")" "$live" "the shell's lease is offered"
expect_contains "$out" "in that shell, unset CUDA_VISIBLE_DEVICES GPUPIN_LEASE_ID" "the reminder"
