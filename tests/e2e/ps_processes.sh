# ps lists every GPU process with its user, memory and gpupin job;
# --leftovers keeps those whose job is gone; --devfiles adds holders of
# /dev/nvidia* that NVML does not list.
source "$(dirname "$0")/lib.sh"
SIM=(--simulate "$EXAMPLES/server-4gpu.json")
export GPUPIN_SIM_SCENARIO="$EXAMPLES/server-4gpu.json"

run_status "$GPUPIN" "${SIM[@]}" ps
expect_contains "$OUT" "no processes on any GPU" "idle server"

# Long enough for a loaded machine; killed at the end.
"$GPUPIN" -q "${SIM[@]}" run --only 0 -- "$WORKLOAD" --seconds 60 &
job=$!
CUDA_VISIBLE_DEVICES=3 "$WORKLOAD" --seconds 60 --mem 2G &
foreign=$!
gpu_processes_are() { [[ $("$GPUPIN" "${SIM[@]}" --json ps | jq '.processes | length') == "$1" ]]; }
wait_until 20 "gpupin ps lists the job's and the foreign process" gpu_processes_are 2
json=$("$GPUPIN" "${SIM[@]}" --json ps)
expect_eq "$(jq -r '.processes[] | select(.gpu_index == 0) | .lease_id != null' <<<"$json")" true "the job's process belongs to its lease"
expect_eq "$(jq -r ".processes[] | select(.pid == $foreign) | .lease_id" <<<"$json")" null "the foreign process belongs to no job"
expect_eq "$(jq -r ".processes[] | select(.pid == $foreign) | .used_memory_bytes" <<<"$json")" 2147483648 "its memory"
expect_eq "$(jq -r ".processes[] | select(.pid == $foreign) | .user" <<<"$json")" "$(id -un)" "its user"
run_status "$GPUPIN" "${SIM[@]}" ps --leftovers
expect_contains "$OUT" "no leftover GPU processes" "nothing left over yet"

kill -STOP "$foreign"
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
  holds_device_file() { ls -l "/proc/$holder/fd" 2>/dev/null | grep -q nvidia1; }
  wait_until 20 "pid $holder opened the device file" holds_device_file
  run_status "$GPUPIN" "${SIM[@]}" ps --devfiles
  expect_contains "$OUT" "GPU 1  pid $holder" "the device-file holder is found on the GPU whose minor it holds"
  kill "$holder"
fi
kill "$job" "$foreign"
wait
echo PASS
