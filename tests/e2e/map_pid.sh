#!/usr/bin/env bash
# gpupin map --pid: a running process's cuda:N (from /proc/PID/environ), the
# GPUs NVML really lists it on, and the "set too late" symptom: a GPU used
# that its environment does not make visible.
source "$(dirname "$0")/lib.sh"
export GPUPIN_SIM_SCENARIO="$EXAMPLES/server-4gpu.json"
SIM=(--simulate "$GPUPIN_SIM_SCENARIO")
GPU2=GPU-32aa84bf-eaa2-ce45-5928-e15760d2e55c

# wait_started NAME: until the workload named NAME has registered.
wait_started() {
  wait_for_line "$TEST_TMP/log" "\"event\":\"start\".*\"name\":\"$1\""
}

CUDA_VISIBLE_DEVICES=2 "$WORKLOAD" --seconds 30 --name job --log "$TEST_TMP/log" &
job=$!
wait_started job
run_status "$GPUPIN" "${SIM[@]}" map --pid "$job"
expect_eq "$STATUS" 0 "map --pid status"
expect_contains "$OUT" "pid $job (" "header names the process"
expect_contains "$OUT" 'CUDA_VISIBLE_DEVICES="2"' "header shows its CUDA_VISIBLE_DEVICES"
expect_contains "$(grep '^cuda:0' <<<"$OUT")" "$GPU2" "its cuda:0 is GPU 2"
expect_contains "$OUT" "GPU 2 (cuda:0): pid $job, 1G" "it uses GPU 2 as cuda:0"
[[ "$OUT" != *warning* ]] || fail "no warning expected: $OUT"
run_status "$GPUPIN" "${SIM[@]}" --json map --pid "$job"
expect_eq "$(jq -c "[.pid, [.uses[] | [.pid, .gpu_index, .cuda_ordinal]], .used_but_not_visible]" <<<"$OUT")" \
  "[$job,[[$job,2,0]],[]]" "json uses"

# Set too late: the environment says GPU 0, the process runs on GPU 3.
CUDA_VISIBLE_DEVICES=0 "$WORKLOAD" --gpus 3 --seconds 30 --name late --log "$TEST_TMP/log" &
late=$!
wait_started late
run_status "$GPUPIN" "${SIM[@]}" map --pid "$late"
expect_eq "$STATUS" 0 "set too late status"
expect_contains "$OUT" "GPU 3 (not visible): pid $late" "the use of GPU 3 is listed"
expect_contains "$OUT" "warning: GPU 3 is used but is not visible as any cuda:N under the environment its process started with" "set too late flagged"
run_status "$GPUPIN" "${SIM[@]}" --json map --pid "$late"
expect_eq "$(jq -c .used_but_not_visible <<<"$OUT")" "[3]" "json used_but_not_visible"

# A launcher's descendants count as the launcher's use: one that inherited
# the launcher's environment under the launcher's numbering, one started
# with a CUDA_VISIBLE_DEVICES of its own under that (not "set too late").
CUDA_VISIBLE_DEVICES=0,1 bash -c '"$0" --seconds 30 --name heir --log "$1" &
  CUDA_VISIBLE_DEVICES=3 "$0" --seconds 30 --name child --log "$1"; true' "$WORKLOAD" "$TEST_TMP/log" &
shell=$!
wait_started child
wait_started heir
child=$(grep '"name":"child"' "$TEST_TMP/log" | head -1 | jq .pid)
heir=$(grep '"name":"heir"' "$TEST_TMP/log" | head -1 | jq .pid)
run_status "$GPUPIN" "${SIM[@]}" map --pid "$shell"
expect_contains "$OUT" "GPU 0 (cuda:0): pid $heir" "the heir's GPU, as the shell's cuda:0"
expect_contains "$OUT" "GPU 3 (cuda:0 under its own environment): pid $child" "the child's GPU, under its own"
[[ "$OUT" != *warning* ]] || fail "no warning expected for a child with its own environment: $OUT"
run_status "$GPUPIN" "${SIM[@]}" --json map --pid "$shell"
expect_eq "$(jq -c '[.uses[] | [.gpu_index, .cuda_ordinal, .own_environment]], .used_but_not_visible' <<<"$OUT" | tr -d '\n')" \
  "[[0,0,false],[1,1,false],[3,0,true]][]" "json uses of the launcher"
kill -9 "$child" "$heir"  # not jobs of this script: cleanup would not end them

# A process without GPUs; one that does not exist.
sleep 30 &
idle=$!
run_status "$GPUPIN" "${SIM[@]}" map --pid "$idle"
expect_eq "$STATUS" 0 "no-GPU process status"
expect_contains "$OUT" "uses: no GPU" "no GPU used"
run_status "$GPUPIN" "${SIM[@]}" map --pid 2147483647
expect_eq "$STATUS" 2 "missing process status, as env --for's"
expect_eq "$ERR" "gpupin: --pid: no running process with pid 2147483647" "missing process"

# Another user's process: its environment cannot be read without root.
if [[ $(id -u) == 0 ]]; then
  command -v setpriv >/dev/null || exit 0
  as_other=(setpriv --reuid=65534 --regid=65534 --clear-groups)
  target=$job
else
  as_other=()
  target=1
fi
run_status "${as_other[@]}" "$GPUPIN" "${SIM[@]}" map --pid "$target"
expect_eq "$STATUS" 1 "unreadable environ status"
expect_eq "$ERR" "gpupin: cannot read the environment of process $target: it belongs to another user; run as that user or as root" \
  "unreadable environ: whose it is and what to do"
