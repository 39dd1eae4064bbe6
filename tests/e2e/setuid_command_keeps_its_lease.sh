#!/usr/bin/env bash
# A job whose command makes itself root (sudo, or another setuid program)
# keeps the lease of the user who started it: its card goes to nobody else
# while it runs.
source "$(dirname "$0")/lib.sh"

shared_copies "$EXAMPLES/server-4gpu.json"
# A setuid-root setpriv stands in for sudo: it sets its real uid to root.
install -m 4755 -o root "$(command -v setpriv)" "$TEST_TMP/bin/become-root"
"${AS_NOBODY[@]}" "$GPUPIN" --simulate "$scenario" run --only 0 -- \
  "$TEST_TMP/bin/become-root" --reuid=0 --regid=0 --clear-groups sleep 60 2>/dev/null &
job=$!
# shellcheck disable=SC2064 # the pid is known now
trap "pkill -KILL -P $job; cleanup" EXIT
command_uid() { ps -o ruid= --ppid "$job" | tr -d ' '; }
command_started() { [[ -n $(command_uid) && $(ps -o comm= --ppid "$job") == sleep ]]; }
wait_until 20 "nobody's command started" command_started
if [[ $(command_uid) != 0 ]]; then
  echo "skipped: the setuid copy does not run as root here (a nosuid mount?)"
  exit 0
fi

run_status "$GPUPIN" --simulate "$scenario" run --only 0 -- true
expect_eq "$STATUS" 3 "root's run on the card nobody's root command holds: $ERR"
expect_eq "$("$GPUPIN" --simulate "$scenario" --json leases | jq -r '.leases[] | .user')" nobody \
  "nobody's lease, live while its command runs as root"
run_status "${AS_NOBODY[@]}" "$GPUPIN" --simulate "$scenario" run --only 0 -- true
expect_eq "$STATUS" 3 "nobody's own second run on that card"
echo PASS
