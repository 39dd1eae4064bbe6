# ps lists every GPU process with its user, memory and gpupin job;
# --leftovers keeps those whose job is gone; --devfiles adds holders of
# /dev/nvidia* that NVML does not list.
source "$(dirname "$0")/lib.sh"
SIM=(--simulate "$EXAMPLES/server-4gpu.json")
export GPUPIN_SIM_SCENARIO="$EXAMPLES/server-4gpu.json"

run_status "$GPUPIN" "${SIM[@]}" ps
expect_contains "$OUT" "no processes on any GPU" "idle server"

# A card whose processes NVML will not list is unknown, not idle: ps,
# ps --leftovers and doctor say so rather than "none".
jq '.gpus[1].errors = {"nvmlDeviceGetComputeRunningProcesses": "NO_PERMISSION"}' \
  "$EXAMPLES/server-4gpu.json" >"$TEST_TMP/unlisted.json"
UNLISTED=(--simulate "$TEST_TMP/unlisted.json")
run_status "$GPUPIN" "${UNLISTED[@]}" ps
expect_eq "$STATUS:$OUT" "0:note: NVML does not list the processes of GPU 1; what runs there is unknown
no processes on the other GPUs" "ps with GPU 1's processes unknown"
run_status "$GPUPIN" "${UNLISTED[@]}" ps --leftovers
expect_contains "$OUT" "no leftover GPU processes on the other GPUs" "ps --leftovers there"
expect_eq "$("$GPUPIN" "${UNLISTED[@]}" --json ps | jq -c .process_lists_unknown)" "[1]" "ps --json names the card"
expect_eq "$("$GPUPIN" "${SIM[@]}" --json ps | jq -c .process_lists_unknown)" "[]" "and none where all are listed"
# --kill cannot end what it cannot see, and says so.
run_status "$GPUPIN" "${UNLISTED[@]}" ps --leftovers --kill --yes
expect_eq "$STATUS:$OUT" "0:note: NVML does not list the processes of GPU 1; leftovers there are unknown and none is ended
no leftover GPU process of yours to end on the other GPUs" "ps --leftovers --kill with GPU 1's processes unknown"
expect_eq "$("$GPUPIN" "${UNLISTED[@]}" --json ps --leftovers --kill --yes | jq -c .process_lists_unknown)" "[1]" \
  "ps --leftovers --kill --json names the card"
expect_eq "$("$GPUPIN" "${UNLISTED[@]}" --json doctor | jq -r '.findings[] | select(.check == "leftovers") | .verdict')" warn \
  "doctor's leftovers check does not call the card clear"

# The example servers' own processes have made-up pids: ps says they are
# simulated, and does not send a newcomer looking for a container.
run_status "$GPUPIN" --simulate "$EXAMPLES/lab-8gpu.json" ps
expect_eq "$STATUS" 0 "ps on the lab example"
expect_contains "$OUT" "(simulated process)" "the lab example's processes"
[[ $ERR != *"PID namespace"* ]] || fail "ps on an example server speaks of PID namespaces: $ERR"

# Long enough for a loaded machine; killed at the end.
"$GPUPIN" -q "${SIM[@]}" run --only 0 -- "$WORKLOAD" --seconds 60 &
job=$!
CUDA_VISIBLE_DEVICES=3 "$WORKLOAD" --seconds 60 --mem 2G &
foreign=$!
is_stopped() { grep -q '^State:[[:space:]]*T' "/proc/$1/status"; }
gpu_processes_are() { [[ $("$GPUPIN" "${SIM[@]}" --json ps | jq '.processes | length') == "$1" ]]; }
wait_until 20 "gpupin ps lists the job's and the foreign process" gpu_processes_are 2
json=$("$GPUPIN" "${SIM[@]}" --json ps)
expect_eq "$(jq -r '.processes[] | select(.gpu_index == 0) | .lease_id != null' <<<"$json")" true "the job's process belongs to its lease"
expect_eq "$(jq -r ".processes[] | select(.pid == $foreign) | .lease_id" <<<"$json")" null "the foreign process belongs to no job"
expect_eq "$(jq -r ".processes[] | select(.pid == $foreign) | .used_memory_bytes" <<<"$json")" 2147483648 "its memory"
expect_eq "$(jq -r ".processes[] | select(.pid == $foreign) | .user" <<<"$json")" "$(id -un)" "its user"
run_status "$GPUPIN" "${SIM[@]}" ps --leftovers
expect_contains "$OUT" "no leftover GPU processes" "nothing left over yet"
# The JOB column is the lease's whole id, the one `leases` shows and
# `release` takes: the leases one holder took share their pid and start.
run_status "$GPUPIN" "${SIM[@]}" ps
expect_eq "$(awk '$1 == 0 { print $6 }' <<<"$OUT")" "$(jq -r '.processes[] | select(.gpu_index == 0) | .lease_id' <<<"$json")" \
  "the job's lease id, whole, in ps's JOB column"

# GPUPIN_LEASE_ID counts only under the lease's holder: copied into another
# process it names no job. One that names an ended lease marks a leftover.
lease=$("$GPUPIN" "${SIM[@]}" --json leases | jq -r '.leases[0].lease_id')
CUDA_VISIBLE_DEVICES=2 GPUPIN_LEASE_ID=$lease "$WORKLOAD" --seconds 60 &
copier=$!
CUDA_VISIBLE_DEVICES=1 GPUPIN_LEASE_ID=1-1-0ended0 "$WORKLOAD" --seconds 60 &
stale=$!
wait_until 20 "gpupin ps lists 4 processes" gpu_processes_are 4
json=$("$GPUPIN" "${SIM[@]}" --json ps)
expect_eq "$(jq -r ".processes[] | select(.pid == $copier) | .lease_id" <<<"$json")" null "a copied GPUPIN_LEASE_ID names no job"
expect_eq "$(jq -r ".processes[] | select(.pid == $copier) | .leftover_reason" <<<"$json")" null "nor makes a leftover"
expect_eq "$(jq -r ".processes[] | select(.pid == $stale) | .leftover_reason" <<<"$json")" "its gpupin lease has ended" "GPUPIN_LEASE_ID of an ended lease"
# Leases that cannot be read prove no job gone: nothing is called a leftover
# for its GPUPIN_LEASE_ID then (doctor would say to kill every job).
touch "$TEST_TMP/not-a-directory"
json=$("$GPUPIN" "${SIM[@]}" --state-dir "$TEST_TMP/not-a-directory" --json ps)
expect_eq "$(jq -r ".processes[] | select(.pid == $stale) | .leftover_reason" <<<"$json")" null "GPUPIN_LEASE_ID when the leases cannot be read"
kill "$copier" "$stale"
wait "$copier" "$stale" 2>/dev/null || true

# The job's gpupin SIGKILLed: the job keeps its lease and its card, so it is
# still the job's, and not a leftover, orphaned as it is.
job_pid=$(jq -r '.processes[] | select(.gpu_index == 0) | .pid' <<<"$json")
kill -KILL "$job"
wait "$job" 2>/dev/null || true
json=$("$GPUPIN" "${SIM[@]}" --json ps)
expect_eq "$(jq -r ".processes[] | select(.pid == $job_pid) | .lease_id" <<<"$json")" "$lease" "the orphaned job's process"
expect_eq "$(jq -r ".processes[] | select(.pid == $job_pid) | .leftover_reason" <<<"$json")" null "is not a leftover"
kill -STOP "$job_pid"
wait_until 10 "the job to stop" is_stopped "$job_pid"
run_status "$GPUPIN" "${SIM[@]}" ps --leftovers
[[ $OUT != *"$job_pid"* ]] || fail "a live job suspended with Ctrl-Z is listed as a leftover: $OUT"
kill -CONT "$job_pid"

kill -STOP "$foreign"
# SIGSTOP takes effect when the process next runs: on a loaded machine,
# not at once.
wait_until 10 "the foreign process to stop" is_stopped "$foreign"
run_status "$GPUPIN" "${SIM[@]}" ps --leftovers
expect_contains "$OUT" "$foreign" "a stopped process holding GPU memory is a leftover"
expect_contains "$OUT" "stopped" "says why"
kill -CONT "$foreign"

# A process that holds a GPU device file open without NVML listing it. The
# node is a real character device 195:1 (GPU 1's minor in this scenario);
# O_PATH holds it without needing a driver behind it.
if mknod "$TEST_TMP/nvidia1" c 195 1 2>/dev/null; then
  python3 -c 'import os, sys, time; fd = os.open(sys.argv[1], os.O_PATH); time.sleep(60)' "$TEST_TMP/nvidia1" &
  holder=$!
  holds_device_file() {
    local fd
    for fd in "/proc/$holder/fd/"*; do
      [[ $(readlink "$fd") == *nvidia1 ]] && return 0
    done
    return 1
  }
  wait_until 20 "pid $holder opened the device file" holds_device_file
  run_status "$GPUPIN" "${SIM[@]}" ps --devfiles
  expect_contains "$OUT" "GPU 1  pid $holder" "the device-file holder is found on the GPU whose minor it holds"
  kill "$holder"
fi
kill "$job_pid" "$foreign"
wait
echo PASS
