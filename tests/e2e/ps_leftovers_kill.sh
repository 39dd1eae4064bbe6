# ps --leftovers --kill ends the caller's own leftovers, as they arise: a
# job's parent SIGKILLed while its worker children hold GPU memory (one of
# them stopped). Another user's leftover beside them, a live job's process
# and a Python process that pinned its card stay untouched; NVML shows the
# memory free afterwards.
source "$(dirname "$0")/lib.sh"
as_nobody_setup
install -d -m 1777 "$GPUPIN_SIM_LIVE_DIR"
install -d -m 0755 "$TEST_TMP/bin"
# Copies nobody can run (the checkout may be private: a mktemp -d clone is 0700).
install -m 0755 "$WORKLOAD" "$GPUPIN" "$GPUPIN_BIN_DIR/libgpupin-sim-nvml.so" "$TEST_TMP/bin"
install -m 0644 "$EXAMPLES/server-4gpu.json" "$TEST_TMP/server-4gpu.json"
export GPUPIN_SIM_SCENARIO="$TEST_TMP/server-4gpu.json"
printf 'simulate = "%s"\n' "$GPUPIN_SIM_SCENARIO" >"$TEST_TMP/gpupin.toml"
export GPUPIN_CONFIG="$TEST_TMP/gpupin.toml"
"$GPUPIN" ls >/dev/null  # creates the shared state directory
# Processes that are no job of this shell's (orphans, the pinned program's
# child) end with the test, whatever its outcome.
ALSO_KILL=()
trap 'kill -9 "${ALSO_KILL[@]}" 2>/dev/null || true; cleanup' EXIT

pids_on_gpu() { "$GPUPIN" --json ls | jq -r ".gpus[$1].processes[].pid" | sort -n | xargs; }
count_on_gpu() { [[ $("$GPUPIN" --json ls | jq ".gpus[$1].processes | length") == "$2" ]]; }
used_on_gpu() { "$GPUPIN" --json ls | jq ".gpus[$1].memory.used_bytes"; }
# Running, not a zombie waiting for a parent that does not reap it.
alive() { [[ -r /proc/$1/status ]] && ! grep -q '^State:[[:space:]]*Z' "/proc/$1/status"; }
is_stopped() { grep -q '^State:[[:space:]]*T' "/proc/$1/status"; }

# A live job on GPU 0.
"$GPUPIN" -q run --only 0 -- "$WORKLOAD" --seconds 120 --mem 3G 2>"$TEST_TMP/live.err" &
wait_until 20 "the live job on GPU 0" count_on_gpu 0 1
live_worker=$(pids_on_gpu 0)

# A Python process that took GPU 3 for itself, and the CUDA program it runs.
GPUPIN="$GPUPIN" PYTHONPATH="$GPUPIN_SOURCE_DIR/python" python3 -c '
import subprocess, sys, gpupin
gpupin.pin(only=3)
subprocess.run([sys.argv[1], "--seconds", "120", "--mem", "1G"])' "$WORKLOAD" 2>"$TEST_TMP/pinned.err" &
pinned=$!
wait_until 20 "the pinned Python program on GPU 3" count_on_gpu 3 1
pinned_worker=$(pids_on_gpu 3)
ALSO_KILL+=("$pinned_worker")

# A job on GPU 1 whose parent (the job's own process) is SIGKILLed while
# its two workers hold memory: they outlive it, holding the card.
"$GPUPIN" -q run --only 1 -- bash -c "
  \"$WORKLOAD\" --seconds 120 --mem 2G & \"$WORKLOAD\" --seconds 120 --mem 4G & wait" \
  >/dev/null 2>"$TEST_TMP/job.err" &
wait_until 20 "the job's two workers on GPU 1" count_on_gpu 1 2
read -r worker1 worker2 <<<"$(pids_on_gpu 1)"
ALSO_KILL+=("$worker1" "$worker2")
parent=$(awk '{print $4}' "/proc/$worker1/stat")
kill -KILL "$parent"
kill -STOP "$worker2"
wait_until 10 "worker $worker2 to stop" is_stopped "$worker2"

# nobody's leftover on GPU 2: its job is gone too.
(cd / && exec "${AS_NOBODY[@]}" env GPUPIN_LEASE_ID=1-1-0ended0 CUDA_VISIBLE_DEVICES=2 \
  "$TEST_TMP/bin/gpupin-sim-workload" --seconds 120 --mem 5G) 2>"$TEST_TMP/foreign.err" &
wait_until 20 "nobody's leftover on GPU 2" count_on_gpu 2 1
foreign=$(pids_on_gpu 2)
wait_until 20 "the job's lease to end" eval '[[ $("$GPUPIN" --json leases | jq ".leases | length") == 2 ]]'

run_status "$GPUPIN" ps --leftovers --kill --dry-run
expect_eq "$STATUS" 0 "--dry-run"
expect_contains "$OUT" "would end pid $worker1" "the dry run names the first worker"
expect_contains "$OUT" "would end pid $worker2" "and the stopped one"
expect_contains "$OUT" "leaving pid $foreign (nobody" "and leaves nobody's"
alive "$worker1" && alive "$worker2" || fail "--dry-run ended a process"

run_status "$GPUPIN" ps --leftovers --kill </dev/null
expect_eq "$STATUS" 2 "--kill with nobody to ask and no --yes"
expect_contains "$ERR" "add --yes" "says how"

run_status "$GPUPIN" --json ps --leftovers --kill --yes
expect_eq "$STATUS" 0 "--kill --yes: all of mine gone"
for w in "$worker1" "$worker2"; do
  expect_eq "$(jq -r ".processes[] | select(.pid == $w) | .outcome" <<<"$OUT")" ended "worker $w's outcome"
done
expect_eq "$(jq '[.processes[] | select(.action == "end") | .freed_bytes] | add' <<<"$OUT")" $((6 << 30)) "memory freed by the two workers"
expect_eq "$(jq -r ".processes[] | select(.pid == $foreign) | .action" <<<"$OUT")" leave "nobody's leftover"
expect_eq "$(jq -r '.gpus[] | select(.index == 1) | .used_bytes_after' <<<"$OUT")" "$(used_on_gpu 1)" "GPU 1's memory, read again"
alive "$worker1" && fail "worker $worker1 still runs"
alive "$worker2" && fail "the stopped worker $worker2 still runs"
count_on_gpu 1 0 || fail "NVML still lists processes on GPU 1: $(pids_on_gpu 1)"
alive "$foreign" || fail "nobody's process was ended"
alive "$live_worker" || fail "the live job's process was ended"
alive "$pinned_worker" || fail "the pinned Python program was ended"
count_on_gpu 2 1 || fail "nobody's memory on GPU 2 is gone"

# In words: a process of an ended job on GPU 1, ended; what NVML says after.
(cd / && exec env GPUPIN_LEASE_ID=1-1-0ended0 CUDA_VISIBLE_DEVICES=1 "$WORKLOAD" --seconds 120 --mem 1G) \
  2>"$TEST_TMP/late.err" &
late=$!
wait_until 20 "the late leftover on GPU 1" count_on_gpu 1 1
run_status "$GPUPIN" ps --leftovers --kill --yes
expect_eq "$STATUS" 0 "--kill --yes in words"
expect_contains "$OUT" "to end: pid $late (" "names it before ending it"
expect_contains "$OUT" "ended pid $late by SIGTERM: 1G freed on GPU 1" "what it ended and freed"
expect_contains "$OUT" "GPU memory used now: GPU 1 0B (was 1G)" "GPU 1's memory, read again"
expect_eq "$(used_on_gpu 1)" 0 "GPU 1's memory, as ls reads it"
alive "$late" && fail "the late leftover $late still runs"

run_status "$GPUPIN" ps --leftovers --kill --yes
expect_eq "$STATUS" 0 "nothing left to end"
expect_contains "$OUT" "no leftover GPU process of yours to end" "says so"
expect_contains "$OUT" "leaving pid $foreign" "nobody's still listed"

# Another user's leftover: root ends it only when asked with --all-users,
# which nobody else may ask.
run_status "${AS_NOBODY[@]}" "$TEST_TMP/bin/gpupin" ps --leftovers --kill --yes --all-users
expect_eq "$STATUS" 2 "--all-users as nobody"
expect_contains "$ERR" "only root may end other users' processes" "says why"
alive "$foreign" || fail "nobody's leftover ended by its refused --all-users"
run_status "$GPUPIN" ps --leftovers --kill --yes --all-users
expect_eq "$STATUS" 0 "root's --all-users"
expect_contains "$OUT" "ended pid $foreign by SIGTERM: 5G freed on GPU 2" "nobody's leftover, ended"
alive "$foreign" && fail "nobody's leftover $foreign still runs"
alive "$live_worker" || fail "--all-users ended the live job's process"
alive "$pinned_worker" || fail "--all-users ended the pinned Python program"

kill "$live_worker" "$pinned_worker" 2>/dev/null || true
kill "$pinned" 2>/dev/null || true
wait
echo PASS
