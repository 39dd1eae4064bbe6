# examples/shell/sweep.sh: 12 runs queued with run --wait on a 4-card
# server all run, each on a card of its own, 4 at a time.
source "$(dirname "$0")/lib.sh"
printf 'simulate = "%s"\n' "$EXAMPLES/server-4gpu.json" >"$TEST_TMP/gpupin.toml"
export GPUPIN_CONFIG="$TEST_TMP/gpupin.toml" GPUPIN="$GPUPIN"
log="$TEST_TMP/workload.log"
# The training program: --lr LR --seed SEED, as the sweep passes them.
cat >"$TEST_TMP/train" <<TRAIN
#!/usr/bin/env bash
exec "$WORKLOAD" --seconds 0.5 --name "lr\$2-seed\$4" --log "$log"
TRAIN
chmod +x "$TEST_TMP/train"

run_status env LOGS="$TEST_TMP/logs" bash "$EXAMPLES/shell/sweep.sh" "$TEST_TMP/train"
expect_eq "$STATUS" 0 "the sweep's status"
expect_contains "$ERR" "sweep: 12 of 12 runs succeeded" "its summary"
expect_eq "$(jq -r 'select(.event == "end") | .name' "$log" | sort -u | wc -l)" 12 "distinct runs that ran to the end"
expect_eq "$(ls "$TEST_TMP/logs" | wc -l)" 12 "one log per run"
expect_no_overlap "$log"
# At most 4 at once (4 cards), and the queue kept them all busy: some ran 4 at once.
most=$(job_intervals "$log" | awk '{ print $3, 1; print $4, -1 }' | sort -n -k1,1 -k2,2n |
  awk '{ n += $2; if (n > most) most = n } END { print most }')
expect_eq "$most" 4 "most runs at once"

# Ctrl-C (SIGINT to the script; its background runs ignore SIGINT, as bash
# starts them) stops the running runs and takes the waiting ones out of
# the queue: nothing starts afterwards, nothing is left in the state.
: >"$log"
cat >"$TEST_TMP/train" <<TRAIN
#!/usr/bin/env bash
exec "$WORKLOAD" --seconds 30 --name "lr\$2-seed\$4" --log "$log"
TRAIN
# Started as a terminal starts a foreground command: SIGINT not ignored
# (this test's own background commands would inherit it ignored).
env LOGS="$TEST_TMP/logs2" python3 -c 'import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
os.execvp("bash", ["bash"] + sys.argv[1:])' "$EXAMPLES/shell/sweep.sh" "$TEST_TMP/train" 2>"$TEST_TMP/sweep2.err" &
sweep=$!
wait_until 10 "4 runs started" lines_at_least "$log" "\"event\":\"start\"" 4
wait_until 10 "8 runs waiting" eval '[[ $("$GPUPIN" --json leases | jq ".queue | length") == 8 ]]'
kill -INT "$sweep"
status=0
wait "$sweep" || status=$?
expect_eq "$status" 130 "the sweep's status after Ctrl-C"
expect_eq "$(jq -c 'select(.event == "end") | .signal' "$log" | sort -u)" 15 "the running runs ended by SIGTERM"
expect_eq "$(jq -c 'select(.event == "start")' "$log" | wc -l)" 4 "no waiting run started"
expect_eq "$("$GPUPIN" --json leases | jq -c '[.leases, .queue] | map(length)')" "[0,0]" "leases and tickets left"
echo PASS
