# A lease on a card that is no longer there (pulled, or lost to the driver)
# names it by a short UUID that no present card shares, so that pasting it
# into --only or --exclude names no other card.
source "$(dirname "$0")/lib.sh"

both="$TEST_TMP/both.json"
jq '.gpus[0].uuid = "GPU-6a4dda00-0000-46cf-53e1-47bf2de4f848"
    | .gpus[1].uuid = "GPU-6A4DDA00-1111-4be6-2214-80883f6c1796"' \
  "$EXAMPLES/server-4gpu.json" >"$both"
# The same server after card 0 went away.
without_first="$TEST_TMP/without-first.json"
jq 'del(.gpus[0])' "$both" >"$without_first"

ids=$("$GPUPIN" --simulate "$both" pick --only 0)
expect_eq "$ids" "0" "card 0 reserved"
run_status "$GPUPIN" --simulate "$without_first" leases
expect_eq "$STATUS" 0 "leases without the card"
expect_contains "$OUT" "GPU-6a4dda00-0" "the gone card named apart from GPU-6A4DDA00-1111"
if grep -q -E 'GPU-6a4dda00([^-]|$)' <<<"$OUT"; then
  fail "the gone card's short UUID is also the present card's: $OUT"
fi
echo PASS
