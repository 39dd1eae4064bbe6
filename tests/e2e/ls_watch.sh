# ls --watch redraws until interrupted, then exits cleanly; --json --watch
# prints one document per frame.
source "$(dirname "$0")/lib.sh"
# Background jobs of their own process group: without job control, bash
# starts them with SIGINT ignored, and gpupin leaves an ignored signal alone.
set -m
SIM=(--simulate "$EXAMPLES/workstation-2gpu.json")
"$GPUPIN" "${SIM[@]}" ls --watch 0.2 >"$TEST_TMP/frames" 2>&1 &
pid=$!
sleep 1
kill -INT "$pid"
status=0
wait "$pid" || status=$?
expect_eq "$status" 0 "Ctrl-C ends --watch cleanly"
frames=$(grep -c '^2 GPUs' "$TEST_TMP/frames")
((frames >= 3)) || fail "expected several frames in 1 s at 0.2 s, got $frames"
# A duration with its unit, as the other options take them.
"$GPUPIN" "${SIM[@]}" --json ls --watch 200ms >"$TEST_TMP/json" &
pid=$!
# Until two frames are out (a fixed sleep gave one frame under ASan on a slow VM).
wait_until 20 "two --json frames" lines_at_least "$TEST_TMP/json" . 2
kill -TERM "$pid"
wait "$pid" || true
python3 -c '
import json, sys
lines = open(sys.argv[1]).read().splitlines()
assert len(lines) >= 2, lines
for line in lines:
    assert json.loads(line)["schema_version"] == 2
' "$TEST_TMP/json" || fail "--json --watch must print one JSON document per line"
echo PASS
