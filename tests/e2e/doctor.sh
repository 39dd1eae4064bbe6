#!/usr/bin/env bash
# gpupin doctor: every check with a verdict, evidence and fix; Python
# findings reported like a compiler's; exit 1 exactly when a check fails.
source "$(dirname "$0")/lib.sh"
SIM=(--simulate "$EXAMPLES/server-4gpu.json")
PY="$GPUPIN_SOURCE_DIR/tests/fixtures/python"

# A clean machine: nothing fails.
run_status "$GPUPIN" "${SIM[@]}" doctor
expect_eq "$STATUS" 0 "clean machine status"
expect_contains "$OUT" "CHECK" "table header"
for check in nvml health cuda_visible_devices device_order busy leftovers leases state_dir; do
  grep -Eq "^$check +ok " <<<"$OUT" || fail "check $check should be ok: $OUT"
done
expect_contains "$OUT" "0 fail" "summary"
# A range is no CUDA syntax: `0-2` is GPU 0 alone, a warning, not a failure.
CUDA_VISIBLE_DEVICES=0-2 run_status "$GPUPIN" "${SIM[@]}" doctor
expect_eq "$STATUS" 0 "a range only warns"
expect_contains "$(grep '^cuda_visible_devices' <<<"$OUT")" "warn" "a range is a warning"
expect_contains "$OUT" 'entry `0-2` is read as index 0: CUDA_VISIBLE_DEVICES has no ranges' "the range named"
run_status "$GPUPIN" "${SIM[@]}" --json doctor
expect_eq "$STATUS" 0 "json status"
expect_eq "$(jq -c '[.schema_version, .ok, ([.findings[] | select(.verdict != "ok")] | length)]' <<<"$OUT")" \
  '[2,true,0]' "json: nothing wrong"
expect_eq "$(jq -r '.findings[0] | [.check, .verdict] | join(" ")' <<<"$OUT")" "nvml ok" "json nvml first"

# Python: every line a fixture marks is reported as file:line:, set-after-import fails.
files=("$PY/every_form.py" "$PY/before_import.py" "$PY/reads_only.py" "$PY/data_parallel.py")
run_status "$GPUPIN" "${SIM[@]}" doctor "${files[@]}"
expect_eq "$STATUS" 1 "set after import fails"
for file in "${files[@]}"; do
  expected=$({ grep -n '# EXPECT:' "$file" || true; } | cut -d: -f1 | sort -n | tr '\n' ' ')
  reported=$({ grep -o "^$file:[0-9]*:" <<<"$OUT" || true; } | cut -d: -f2 | sort -n | tr '\n' ' ')
  expect_eq "$reported" "$expected" "lines reported for $(basename "$file")"
done
expect_contains "$OUT" "$PY/every_form.py:7: " "compiler-style location"
grep -A1 "^$PY/every_form.py:7: " <<<"$OUT" | grep -q '^  fix: ' || fail "a fix line follows: $OUT"
run_status "$GPUPIN" "${SIM[@]}" --json doctor "$PY/before_import.py" "$PY/every_form.py"
expect_eq "$(jq -c '[.ok, (.python | length), .python[0].line, .python[0].kind]' <<<"$OUT")" \
  '[false,14,7,"visibility_set_after_import"]' "json python findings"

# A harmless case has nothing to fix: its fix is null, as a check's.
printf 'import torch\nimport os\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\n' >"$TEST_TMP/harmless.py"
run_status "$GPUPIN" "${SIM[@]}" --json doctor "$TEST_TMP/harmless.py"
expect_eq "$(jq -c '[.python[0].kind, .python[0].fix]' <<<"$OUT")" \
  '["visibility_set_after_harmless_import",null]' "json: nothing to fix"

# DataParallel without device_ids is a warning: exit 0.
run_status "$GPUPIN" "${SIM[@]}" doctor "$PY/data_parallel.py"
expect_eq "$STATUS" 0 "DataParallel only warns"
expect_contains "$OUT" "$PY/data_parallel.py:6: " "DataParallel reported"

# A file that cannot be checked is a usage error naming it.
run_status "$GPUPIN" "${SIM[@]}" doctor "$PY"
expect_eq "$STATUS" 2 "directory status"
expect_contains "$ERR" "cannot check $PY: not a regular file" "directory refused"
run_status "$GPUPIN" "${SIM[@]}" doctor "$TEST_TMP/missing.py"
expect_eq "$STATUS" 2 "missing file status"
run_status "$GPUPIN" "${SIM[@]}" doctor ""
expect_eq "$STATUS:$ERR" "2:gpupin: an empty file name; give a Python file" "an empty file name"

# No NVML: the nvml check fails with its fix, and the GPU checks are left out.
run_status "$GPUPIN" --nvml /nonexistent/libnvidia-ml.so.1 doctor
expect_eq "$STATUS" 4 "no NVML: exit 4, as for every command"
grep -Eq '^nvml +fail ' <<<"$OUT" || fail "nvml should fail: $OUT"
expect_contains "$OUT" "fix: install or load the NVIDIA driver" "nvml fix"
[[ "$OUT" != *busy* ]] || fail "GPU checks are left out without NVML: $OUT"

# A state directory that is a symlink is unsafe.
mkdir "$TEST_TMP/real"
ln -s "$TEST_TMP/real" "$TEST_TMP/link"
GPUPIN_STATE_DIR="$TEST_TMP/link" run_status "$GPUPIN" "${SIM[@]}" doctor
expect_eq "$STATUS" 1 "symlinked state dir status"
grep -Eq '^state_dir +fail ' <<<"$OUT" || fail "state_dir should fail: $OUT"

# Mixed models: a warning without PCI_BUS_ID, none with it. --probe compares
# the model with the driver: within an index CUDA_VISIBLE_DEVICES and no
# order kept, the model's guess differs; asked for its own numbering of
# every device, as ls's probe asks, the driver's answer is the order, kept
# for the next doctor.
MIXED=(--simulate "$EXAMPLES/workstation-mixed.json")
CUDA_VISIBLE_DEVICES=0,1 run_status "$GPUPIN" "${MIXED[@]}" doctor --probe
expect_eq "$STATUS" 0 "warnings do not fail"
grep -Eq '^device_order +warn ' <<<"$OUT" || fail "device_order should warn: $OUT"
grep -Eq '^cuda_probe +warn .*the driver numbers devices differently' <<<"$OUT" ||
  fail "cuda_probe should warn: $OUT"
expect_contains "$(grep '^cuda_visible_devices' <<<"$OUT")" "guessed" "no order kept yet: the model guesses"
run_status "$GPUPIN" "${MIXED[@]}" doctor --probe
grep -Eq '^cuda_probe +ok ' <<<"$OUT" || fail "the driver's own numbering is the order: $OUT"
CUDA_VISIBLE_DEVICES=0,1 run_status "$GPUPIN" "${MIXED[@]}" doctor
expect_contains "$(grep '^cuda_visible_devices' <<<"$OUT")" "cuda:0 = GPU 1, cuda:1 = GPU 2" \
  "the order doctor --probe kept numbers the next doctor"
CUDA_DEVICE_ORDER=PCI_BUS_ID run_status "$GPUPIN" "${MIXED[@]}" doctor --probe
grep -Eq '^device_order +ok ' <<<"$OUT" || fail "device_order ok under PCI_BUS_ID: $OUT"
grep -Eq '^cuda_probe +ok ' <<<"$OUT" || fail "cuda_probe ok under PCI_BUS_ID: $OUT"

# Leftovers: a worker on two GPUs whose gpupin job (the lease holder) was
# killed, and a process whose parent is init.
export GPUPIN_SIM_SCENARIO="$EXAMPLES/server-4gpu.json"
"$GPUPIN" "${SIM[@]}" -q run --count 2 -- bash -c '"$0" --seconds 60 --name worker --log "$1" & wait' \
  "$WORKLOAD" "$TEST_TMP/log" &
runner=$!
bash -c 'CUDA_VISIBLE_DEVICES=3 "$0" --seconds 60 --name orphan --log "$1" &' "$WORKLOAD" "$TEST_TMP/log"
wait_until 20 "both workloads started" lines_at_least "$TEST_TMP/log" '"event":"start"' 2
worker=$(grep '"name":"worker"' "$TEST_TMP/log" | head -1 | jq .pid)
orphan=$(grep '"name":"orphan"' "$TEST_TMP/log" | head -1 | jq .pid)
[[ -n "$worker" && -n "$orphan" ]] || fail "workloads did not start: $(cat "$TEST_TMP/log" 2>/dev/null)"
job=$(pgrep -P "$runner")
# gpupin run first, so that it cannot remove the lease when its job dies.
kill -9 "$runner" && wait "$runner" 2>/dev/null || true
kill -9 "$job"
orphan_ppid=$(ps -o ppid= -p "$orphan" | tr -d ' ')
run_status "$GPUPIN" "${SIM[@]}" --json doctor
kill -9 "$worker" "$orphan"  # not jobs of this script: cleanup would not end them
expect_eq "$STATUS" 0 "leftovers only warn"
leftovers=$(jq -r '.findings[] | select(.check == "leftovers") | .verdict + ": " + .evidence + " / " + .fix' <<<"$OUT")
expect_contains "$leftovers" "warn: " "leftovers warn"
expect_contains "$leftovers" "pid $worker (" "the killed job's worker is named"
expect_eq "$(grep -o "pid $worker (" <<<"$leftovers" | wc -l)" 1 "the worker on two GPUs, named once"
expect_contains "$leftovers" "holds 2G on GPUs " "with its memory on both"
expect_eq "$(grep -ow "$worker" <<<"${leftovers#* / }" | wc -l)" 1 "the fix names its pid once"
expect_contains "$leftovers" "its gpupin lease has ended" "why: its job is gone"
expect_eq "$(jq -r '.findings[] | select(.check == "leases") | .evidence' <<<"$OUT" | cut -c1-18)" \
  "1 expired lease(s)" "the dead job's lease is expired"
expect_contains "$leftovers" "end yours: gpupin ps --leftovers --kill, or by hand: kill " "the fix says how to end them"
# A subreaper (some container inits) adopts orphans instead of init.
if [[ $orphan_ppid == 1 ]]; then
  expect_contains "$leftovers" "pid $orphan (" "the orphan is named"
  expect_contains "$leftovers" "orphaned (its parent is init)" "why: orphaned"
fi
