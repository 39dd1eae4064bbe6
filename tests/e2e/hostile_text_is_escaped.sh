#!/usr/bin/env bash
# Text gpupin did not write (a process's name from /proc, the command in a
# lease, another user's queue ticket, a GPU's name) reaches neither the
# terminal nor a JSON reader as anything but text: controls (C1 ones such as
# U+009B, a CSI by itself), bidirectional overrides, line separators and the
# invisible soft hyphen become '?' in tables, in the queue line and in
# refusals, non-ASCII is escaped in --json, and bytes that are not UTF-8 do
# not crash a --json answer. Every place that prints such text is here.
source "$(dirname "$0")/lib.sh"
as_nobody_copies "$EXAMPLES/server-4gpu.json"
SIM=(--simulate "$SCENARIO")
export GPUPIN_SIM_SCENARIO="$SCENARIO"

hostile=$'bad\xff\xc2\x9b[2J\xe2\x80\xaeevil\xe2\x80\xa8\xc2\xadname'
# A GPU process named so (argv[0]), and a lease whose command holds it.
CUDA_VISIBLE_DEVICES=1 bash -c 'exec -a "$0" "$1" --seconds 60' "$hostile" "$WORKLOAD" &
"$GPUPIN" -q "${SIM[@]}" run --only 0 -- bash -c 'sleep 60' "$hostile" &
job=$!
gpu_processes_are() { [[ $("$GPUPIN" "${SIM[@]}" --json ps | jq '.processes | length') == "$1" ]]; }
wait_until 20 "gpupin ps lists the named process" gpu_processes_are 1
leases_are() { [[ $("$GPUPIN" "${SIM[@]}" --json leases | jq '.leases | length') == "$1" ]]; }
wait_until 20 "the job's lease" leases_are 1

# expect_clean WHAT TEXT: TEXT holds no control character, C1 control,
# U+202E, U+2028 or byte that is not UTF-8.
expect_clean() {
  if LC_ALL=C grep -qP '[\x00-\x08\x0b-\x1f\x7f]' <<<"$2" ||
    grep -qP '[\x{80}-\x{9f}\x{ad}\x{202a}-\x{202e}\x{2028}\x{2029}]' <<<"$2" ||
    ! iconv -f UTF-8 -t UTF-8 <<<"$2" >/dev/null 2>&1; then
    fail "$1 printed a control or malformed text: $(cat -v <<<"$2")"
  fi
}
for command in ps leases ls; do
  run_status "$GPUPIN" "${SIM[@]}" "$command"
  expect_eq "$STATUS" 0 "gpupin $command"
  expect_clean "gpupin $command" "$OUT"
  run_status "$GPUPIN" "${SIM[@]}" --json "$command"
  expect_eq "$STATUS" 0 "gpupin --json $command"
  expect_clean "gpupin --json $command" "$OUT"
  LC_ALL=C grep -qP '^[\x00-\x7f]*$' <<<"$OUT" || fail "gpupin --json $command printed non-ASCII"
  jq -e . <<<"$OUT" >/dev/null || fail "gpupin --json $command is not JSON"
done
run_status "$GPUPIN" "${SIM[@]}" ps
expect_contains "$OUT" "bad??[2J?evil??name" "ps, the process's name"
# In JSON the text survives, escaped: the override is still there for a
# program that reads it, as \u202e.
expect_contains "$("$GPUPIN" "${SIM[@]}" --json ps)" 'evil' "ps --json, the process's name"
expect_eq "$("$GPUPIN" "${SIM[@]}" --json leases | jq -r '.leases[0].command' | grep -c $'\xe2\x80\xae')" 1 \
  "the lease's command, decoded from --json"
# doctor, with the process on GPU 1 and the job's lease.
run_status "$GPUPIN" "${SIM[@]}" doctor
expect_clean "gpupin doctor" "$OUT"
run_status "$GPUPIN" "${SIM[@]}" --json doctor
LC_ALL=C grep -qP '^[\x00-\x7f]*$' <<<"$OUT" || fail "gpupin --json doctor printed non-ASCII"

# nobody queues for card 0 (root's job holds it), then rewrites its own
# ticket's request. Root, queueing behind it, sees it escaped in the queue
# line, in the refusal of a pick without --wait and in `gpupin leases`.
"${AS_NOBODY[@]}" "$GPUPIN" "${SIM[@]}" run --only 0 --wait -- true 2>"$TEST_TMP/nobody.err" &
wait_for_line "$TEST_TMP/nobody.err" "waiting: next in queue"
ticket=$(find "$GPUPIN_STATE_DIR/queue" -name '*.json' -user nobody)
jq '.request = "1 GPU\u001b[2J\u202e\u00adX"' "$ticket" >"$TEST_TMP/forged.json"
chmod 0644 "$TEST_TMP/forged.json"
"${AS_NOBODY[@]}" cp "$TEST_TMP/forged.json" "$ticket"
run_status "$GPUPIN" "${SIM[@]}" run --only 0 --wait=1s -- true
expect_eq "$STATUS" 3 "root's run behind nobody's ticket"
expect_contains "$ERR" "waiting: 2nd in queue (1 ahead: nobody, 1 GPU?[2J??X)" "the queue line"
expect_clean "the queue line" "$ERR"
run_status "$GPUPIN" "${SIM[@]}" pick --only 0
expect_eq "$STATUS" 3 "root's pick behind nobody's ticket"
expect_contains "$ERR" "(first: nobody, 1 GPU?[2J??X)" "the refusal"
expect_clean "the refusal" "$ERR"
run_status "$GPUPIN" "${SIM[@]}" leases
expect_contains "$OUT" "1 GPU?[2J??X" "leases, the ticket's request"
expect_clean "gpupin leases" "$OUT"
# SIGTERM reaches the job's sleep, which would otherwise outlive the test.
kill -TERM "$job"

# map --pid shows another user's process: its command line and the
# CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER it started with, the dropped
# entries and notes that quote them, and the refusal naming it.
"${AS_NOBODY[@]}" env CUDA_VISIBLE_DEVICES="1,${hostile}" CUDA_DEVICE_ORDER="PCI${hostile}" \
  bash -c 'exec -a "$0" sleep 60' "$hostile" &
sleeper=$!
# Once it is sleep: read while bash execs it, the environment can be empty.
has_environment() {
  [[ $(cat "/proc/$sleeper/comm") == sleep ]] && grep -q CUDA_DEVICE_ORDER "/proc/$sleeper/environ"
}
wait_until 10 "nobody's process with its environment" has_environment
run_status "$GPUPIN" "${SIM[@]}" map --pid "$sleeper"
expect_eq "$STATUS" 0 "map --pid, nobody's process"
expect_contains "$OUT" 'CUDA_VISIBLE_DEVICES="1,bad??[2J?evil??name"' "map --pid, the variable"
expect_contains "$OUT" 'entry 1 "bad??[2J?evil??name"' "map --pid, the dropped entry"
expect_clean "gpupin map --pid, stdout" "$OUT"
run_status "$GPUPIN" "${SIM[@]}" map --pid "$sleeper" cuda:5
expect_eq "$STATUS" 1 "map --pid, an ordinal that does not exist"
expect_contains "$ERR" "(bad??[2J?evil??name 60)" "the refusal, the process's name"
expect_clean "gpupin map --pid, the refusal" "$ERR"
kill "$sleeper"

# A GPU whose name (from the driver, here the scenario) holds an escape
# sequence and a bidirectional override: every command that shows it.
jq '.gpus[0].name = "NVIDIA L40S\u001b]0;owned\u0007\u202eX"' "$EXAMPLES/server-4gpu.json" \
  >"$TEST_TMP/odd-name.json"
for command in ls map doctor "slurm gres" "pick --explain"; do
  read -ra words <<<"$command"
  run_status "$GPUPIN" --simulate "$TEST_TMP/odd-name.json" --state-dir "$TEST_TMP/odd-state" "${words[@]}"
  expect_clean "gpupin $command with an odd GPU name, stdout" "$OUT"
  expect_clean "gpupin $command with an odd GPU name, stderr" "$ERR"
done
run_status "$GPUPIN" --simulate "$TEST_TMP/odd-name.json" ls
expect_contains "$OUT" "NVIDIA L40S?]0;owned??X" "ls, the odd name"
echo PASS
