#!/usr/bin/env bash
# A request that gets its cards at once never watches the state directory:
# adding an inotify watch on the leases directory walks every name the
# kernel remembers in it, deleted ones included (one or two per lease ever
# written, on a disk), so only a waiter that must wait pays for it. Seen
# from the job: the fds of its parent, the gpupin that holds its lease.
source "$(dirname "$0")/lib.sh"
scenario="$EXAMPLES/server-4gpu.json"
inotify_fds() { "$GPUPIN" --simulate "$scenario" run "$@" -- sh -c 'ls -l /proc/$PPID/fd' 2>/dev/null | grep -c inotify || true; }

expect_eq "$(inotify_fds)" 0 "inotify descriptors of a run that starts at once"
expect_eq "$(inotify_fds --wait)" 0 "inotify descriptors of a run --wait that starts at once"

# A waiter at the head of the queue does watch the leases, and starts as
# soon as the holder's job ends.
log="$TEST_TMP/jobs.log"
"$GPUPIN" --simulate "$scenario" run -n 4 -- "$WORKLOAD" --seconds 60 --name holder --log "$log" \
  2>/dev/null &
holder=$!
wait_for_line "$log" '"name":"holder"'
"$GPUPIN" --simulate "$scenario" run --wait -- "$WORKLOAD" --seconds 0 --name waiter --log "$log" \
  2>"$TEST_TMP/waiter.err" &
waiter=$!
wait_for_line "$TEST_TMP/waiter.err" 'waiting'
wait_until 5 "the waiter watches the leases" \
  bash -c "ls -l /proc/$waiter/fd | grep -q inotify"
kill -9 "$(event_field "$log" start holder pid)"
wait "$holder" || true
wait "$waiter" || fail "the waiter failed after the holder's job ended"
wait_for_line "$log" '"name":"waiter"'
