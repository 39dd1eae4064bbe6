#!/usr/bin/env bash
# Another user cannot keep a user from keeping the driver's order. With a
# file of theirs planted under the user's name (cuda-order-<uid>.json, which
# the sticky state directory does not let the user replace), the user's
# gpupin keeps the order under a random name and follows it from then on
# without asking the driver again; it follows neither the planted file nor
# files the other user planted under names like the random one. Once the
# name is free again, the order goes back under it and the random-named
# record is removed. A flood of other names there changes none of this.
source "$(dirname "$0")/lib.sh"
MIXED="$EXAMPLES/workstation-mixed.json"
as_nobody_copies "$MIXED"
install -m 0755 "$GPUPIN_BIN_DIR/libgpupin-sim-cuda.so" "$TEST_TMP/bin"
install -d -m 0755 "$TEST_TMP/nocuda"
install -m 0755 "$GPUPIN" "$GPUPIN_BIN_DIR/libgpupin-sim-nvml.so" "$TEST_TMP/nocuda"
victim=$(id -u nobody)
AS_OTHER=(setpriv --reuid=12345 --regid=12345 --clear-groups)
NAMED="$GPUPIN_STATE_DIR/cuda-order-$victim.json"
LOOKALIKE="$GPUPIN_STATE_DIR/cuda-order-$victim-0123456789abcdef.json"

# ls_order GPUPIN: as nobody, NVML indices by cuda:N and where the order came from.
ls_order() {
  run_status "${AS_NOBODY[@]}" "$1" --simulate "$SCENARIO" --json ls
  expect_eq "$STATUS" 0 "nobody's $1 --json ls"
  jq -c '[[.gpus | sort_by(.cuda_ordinal) | .[].index], .cuda_order]' <<<"$OUT"
}
# nobody's records under random names
random_named() {
  find "$GPUPIN_STATE_DIR" -maxdepth 1 -user nobody -name "cuda-order-$victim-*.json" -printf '%f\n'
}

# A record for this machine, with the driver's order reversed: what the
# other user plants, under the victim's name and under a random-looking one.
"$GPUPIN" --simulate "$SCENARIO" ls >/dev/null
jq '.fastest_first_uuids |= reverse' "$GPUPIN_STATE_DIR/cuda-order-0.json" >"$TEST_TMP/planted.json"
chmod 0644 "$TEST_TMP/planted.json"
rm "$GPUPIN_STATE_DIR/cuda-order-0.json"
"${AS_OTHER[@]}" cp "$TEST_TMP/planted.json" "$NAMED"
"${AS_OTHER[@]}" cp "$TEST_TMP/planted.json" "$LOOKALIKE"
expect_eq "$(stat -c %u "$NAMED") $(stat -c %u "$LOOKALIKE")" "12345 12345" "the planted files are the other user's"

# nobody's first ls asks the driver and keeps its order under a random name.
run_status "${AS_NOBODY[@]}" "$GPUPIN" --simulate "$SCENARIO" -v ls
expect_eq "$STATUS" 0 "nobody's first ls"
expect_contains "$OUT" "  1  cuda:0  NVIDIA GeForce RTX 3090" "nobody numbers by the driver, not the planted order"
expect_contains "$ERR" "cuda-order-$victim.json skipped: belongs to uid 12345, not to uid $victim" "-v says why"
kept=$(random_named)
[[ $kept =~ ^cuda-order-$victim-[0-9a-f]{16}\.json$ ]] || fail "nobody's order is not kept under a random name: '$kept'"
expect_eq "$(stat -c '%U %a' "$GPUPIN_STATE_DIR/$kept")" "nobody 644" "kept as nobody's, 0644"
expect_eq "$(stat -c %u "$NAMED")" 12345 "the planted file is left as it was"

# From then on it is followed without asking the driver: a gpupin that can
# load no libcuda numbers by it, and the record stays the same file.
before=$(stat -c %i "$GPUPIN_STATE_DIR/$kept")
expect_eq "$(ls_order "$TEST_TMP/nocuda/gpupin")" '[[1,2,0],"driver"]' "no libcuda: nobody's kept order"
expect_eq "$(ls_order "$GPUPIN")" '[[1,2,0],"driver"]' "the next ls"
expect_eq "$(random_named)" "$kept" "still one record of nobody's"
expect_eq "$(stat -c %i "$GPUPIN_STATE_DIR/$kept")" "$before" "not asked again"

# The other user floods the state directory with more names than a folder
# listing takes: nobody's record is still found (only names of its form are
# looked at), and no record is added.
"${AS_OTHER[@]}" /usr/bin/python3 - "$GPUPIN_STATE_DIR" <<'PY'
import os, sys
for i in range(70000):
    os.close(os.open(os.path.join(sys.argv[1], f"flood-{i:06d}"), os.O_CREAT | os.O_WRONLY, 0o644))
PY
expect_eq "$(ls_order "$TEST_TMP/nocuda/gpupin")" '[[1,2,0],"driver"]' "no libcuda, in a flood: nobody's kept order"
expect_eq "$(random_named)" "$kept" "in a flood, still one record of nobody's"
find "$GPUPIN_STATE_DIR" -maxdepth 1 -name 'flood-*' -delete

# Eight of nobody's gpupins find the record stale (another boot) at once,
# and each asks the driver and writes a record: each removes only records
# written before its own, so the latest stays and is followed.
stale_boot() {
  "${AS_NOBODY[@]}" bash -c 'jq ".boot_id = \"00000000-0000-0000-0000-000000000000\"" "$1" >"$1.new" && mv "$1.new" "$1"' \
    _ "$1"
}
stale_boot "$GPUPIN_STATE_DIR/$kept"
nobody_ls() { exec "${AS_NOBODY[@]}" "$GPUPIN" --simulate "$SCENARIO" ls >/dev/null; }
start_at_once 8 nobody_ls
wait_all_ok "${STARTED[@]}"
kept=$(random_named)
[[ -n $kept ]] || fail "no record of nobody's left after eight writers"
kept=$(head -1 <<<"$kept")
expect_eq "$(ls_order "$TEST_TMP/nocuda/gpupin")" '[[1,2,0],"driver"]' "no libcuda: the record eight writers left"

# The name free again (the other user removed the file) and nobody's record
# stale (another boot): the next probe's order goes under nobody's name, and
# the random-named record is removed. The other user's look-alike stays.
"${AS_OTHER[@]}" rm "$NAMED"
stale_boot "$GPUPIN_STATE_DIR/$kept"
expect_eq "$(ls_order "$GPUPIN")" '[[1,2,0],"driver"]' "probed again for this boot"
expect_eq "$(stat -c '%U %a' "$NAMED")" "nobody 644" "kept under nobody's name again"
expect_eq "$(jq -r .boot_id "$NAMED")" "$(cat /proc/sys/kernel/random/boot_id)" "for this boot"
expect_eq "$(random_named)" "" "the random-named record is removed"
expect_eq "$(stat -c %u "$LOOKALIKE")" 12345 "the other user's file is left"

# Root's name taken by a directory of the other user's, which root cannot
# rename a file over either: root keeps the order under a random name too,
# and root's and nobody's gpupins follow it without asking the driver.
"${AS_OTHER[@]}" mkdir -p "$GPUPIN_STATE_DIR/cuda-order-0.json/x"
run_status "$GPUPIN" --simulate "$SCENARIO" -v ls
expect_eq "$STATUS" 0 "root's ls with its name taken by a directory"
[[ $ERR != *"not kept"* ]] || fail "root's order is not kept: $ERR"
root_kept=$(find "$GPUPIN_STATE_DIR" -maxdepth 1 -user root -name 'cuda-order-0-*.json' -printf '%f\n')
[[ $root_kept =~ ^cuda-order-0-[0-9a-f]{16}\.json$ ]] || fail "root's order is not kept under a random name: '$root_kept'"
run_status "$TEST_TMP/nocuda/gpupin" --simulate "$SCENARIO" --json ls
expect_eq "$(jq -c '[[.gpus | sort_by(.cuda_ordinal) | .[].index], .cuda_order]' <<<"$OUT")" '[[1,2,0],"driver"]' \
  "no libcuda: root follows its random-named record"
"${AS_NOBODY[@]}" rm "$NAMED"
expect_eq "$(ls_order "$TEST_TMP/nocuda/gpupin")" '[[1,2,0],"driver"]' "no libcuda: nobody follows root's random-named record"
echo PASS
