#!/usr/bin/env bash
# A cap on a group ([limits.groups.NAME]) binds the users in that group,
# whichever group is their primary one, and nobody else: with root's group
# capped at 1 card per job, root's `run -n 2` exits 3 naming the rule, while
# nobody (not in root's group) runs on 2 cards. Under a rule for another
# group only, the same request of root's is met.
source "$(dirname "$0")/lib.sh"

group=$(id -gn root)
house_rules "[limits.groups.$group]\nmax_gpus_per_job = 1\n"
admin="$GPUPIN_TEST_ADMIN_CONFIG"
as_nobody_copies "$EXAMPLES/server-4gpu.json"
id -Gn nobody | tr ' ' '\n' | grep -qx "$group" && fail "nobody is in $group; the test needs it outside"

run_status "$GPUPIN" --simulate "$SCENARIO" run -n 2 -- true
expect_eq "$STATUS" 3 "root, in $group, asking for 2 cards"
expect_contains "$ERR" "max_gpus_per_job = 1 of [limits.groups.$group] in $admin:2" "the refusal names the group's rule"

run_status "${AS_NOBODY[@]}" "$GPUPIN" --simulate "$SCENARIO" run -n 2 -- printenv CUDA_VISIBLE_DEVICES
expect_eq "$STATUS" 0 "nobody, outside $group, asking for 2 cards: $ERR"
expect_eq "$(wc -w <<<"${OUT//,/ }")" 2 "nobody's two cards"

house_rules "[limits.groups.no-such-group-here]\nmax_gpus_per_job = 1\n"
run_status "$GPUPIN" --simulate "$SCENARIO" run -n 2 -- true
expect_eq "$STATUS" 0 "root, under a rule for another group only: $ERR"
echo PASS
