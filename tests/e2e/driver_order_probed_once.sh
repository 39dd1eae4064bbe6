#!/usr/bin/env bash
# On mixed models CUDA's default order is not public. ls and map ask the
# (simulated) CUDA driver once per boot, driver and set of GPUs, keep its
# answer in the state directory, and number cuda:N by it; every command
# follows it while it matches. A kept order that is another user's, a
# symlink or for another boot or set of GPUs is not followed; "guess" is
# said only when the driver cannot be asked.
source "$(dirname "$0")/lib.sh"
MIXED="$EXAMPLES/workstation-mixed.json"
SIM=(--simulate "$MIXED")
KEPT="$GPUPIN_STATE_DIR/cuda-order-0.json"
A4000=GPU-4a7c2e91-0b3d-4f6e-8a12-5c9d3e7f1a20
RTX3090=GPU-9e1f5b33-7c2a-4d8e-b6f4-0a3c8d2e5f71
A6000=GPU-2d8b6f40-5e9c-4a1b-93d7-6f0e2c4a8b15
as_nobody_setup

# ls_order [GPUPIN] ARGS...: NVML indices by cuda:N, and where the order came from.
ls_order() {
  run_status "$@" --json ls
  expect_eq "$STATUS" 0 "$* --json ls"
  jq -c '[[.gpus | sort_by(.cuda_ordinal) | .[].index], .cuda_order]' <<<"$OUT"
}
inode() { stat -c %i "$1"; }
# plant FILE ORDER...: FILE holds the kept record with the given order.
plant() {
  local file=$1
  shift
  jq '.fastest_first_uuids = $ARGS.positional' --args "$@" <"$KEPT.good" >"$file"
  chmod 0644 "$file"
}

# Choosing cards inside CUDA_VISIBLE_DEVICES=0 asks the driver rather than
# choose on a guess, and keeps its order; removed here, so that ls asks next.
CUDA_VISIBLE_DEVICES=0 run_status "$GPUPIN" "${SIM[@]}" pick
expect_eq "$STATUS" 0 "pick before any probe"
expect_eq "$OUT" "$RTX3090" "pick asked the driver: the 3090 is its 0"
[[ $ERR != *"can only guess"* ]] || fail "pick guessed: $ERR"
[[ -e $KEPT ]] || fail "pick did not keep the driver's order"
rm "$KEPT"
"$GPUPIN" "${SIM[@]}" release >/dev/null

# The first ls asks the driver and numbers as it does, without --probe.
expect_eq "$(ls_order "$GPUPIN" "${SIM[@]}")" '[[1,2,0],"driver"]' "ls numbers by the driver's order"
run_status "$GPUPIN" "${SIM[@]}" --json map --probe
expect_eq "$(jq -c '[.probe.devices[].gpu_index]' <<<"$OUT")" '[1,2,0]' "map --probe: the driver's order"
expect_eq "$(jq -c '[.cuda_order_is_guess, .cuda_order, .probe.agree]' <<<"$OUT")" '[false,"driver",true]' \
  "map: the model is the driver's order, and agrees"
run_status "$GPUPIN" "${SIM[@]}" ls
expect_contains "$OUT" "  1  cuda:0  NVIDIA GeForce RTX 3090" "the table: the 3090 is cuda:0"
[[ $OUT != *"guess"* ]] || fail "ls says guess with the driver's order: $OUT"
expect_eq "$(jq -c '[.key, .fastest_first_uuids]' <<<"{\"key\": $(jq -c '[.boot_id, .driver_version, .gpu_uuids]' "$KEPT"), \"fastest_first_uuids\": $(jq -c .fastest_first_uuids "$KEPT")}")" \
  "[[\"$(cat /proc/sys/kernel/random/boot_id)\",\"535.183.01\",[\"$A6000\",\"$A4000\",\"$RTX3090\"]],[\"$RTX3090\",\"$A6000\",\"$A4000\"]]" \
  "the kept record: boot id, driver, UUIDs and the driver's order"
expect_eq "$(stat -c '%U %a' "$KEPT")" "root 644" "kept as the caller's, 0644"
cp "$KEPT" "$KEPT.good"

# The next commands do not probe again: the file stays as it was, and a copy
# of gpupin that cannot load any libcuda still numbers by the driver.
before=$(inode "$KEPT")
expect_eq "$(ls_order "$GPUPIN" "${SIM[@]}")" '[[1,2,0],"driver"]' "the second ls"
expect_eq "$(inode "$KEPT")" "$before" "the second ls did not probe"
run_status "$GPUPIN" "${SIM[@]}" -v ls
expect_contains "$ERR" "cuda:N follow the CUDA driver's order, kept in $GPUPIN_STATE_DIR/cuda-order-$(id -u).json for this boot" \
  "-v ls says where the order came from"
install -d -m 0755 "$TEST_TMP/nocuda"
install -m 0755 "$GPUPIN" "$GPUPIN_BIN_DIR/libgpupin-sim-nvml.so" "$TEST_TMP/nocuda"
NOCUDA="$TEST_TMP/nocuda/gpupin"
expect_eq "$(ls_order "$NOCUDA" "${SIM[@]}")" '[[1,2,0],"driver"]' "no libcuda, the kept order"
CUDA_VISIBLE_DEVICES=0 run_status "$GPUPIN" "${SIM[@]}" pick
expect_eq "$OUT" "$RTX3090" "pick inside CUDA_VISIBLE_DEVICES=0 follows the kept order: the 3090"
[[ $ERR != *"can only guess"* ]] || fail "pick guesses with a kept order: $ERR"
"$GPUPIN" "${SIM[@]}" release >/dev/null

# A kept order is followed while its key matches: here a wrong one (PCI
# order), which map --probe catches and names.
plant "$KEPT" "$A4000" "$RTX3090" "$A6000"
expect_eq "$(ls_order "$GPUPIN" "${SIM[@]}")" '[[0,1,2],"driver"]' "a matching kept order is followed"
# With CUDA_DEVICE_ORDER set, its probe is not the one ls would run: the
# file stays, and the user is told to remove it.
CUDA_DEVICE_ORDER=FASTEST_FIRST run_status "$GPUPIN" "${SIM[@]}" map --probe
expect_contains "$OUT" "model and driver DISAGREE" "map --probe checks the kept order"
expect_contains "$OUT" "kept in $KEPT, and the driver now numbers otherwise: remove that file" \
  "and says which file to remove"
expect_eq "$(jq -c .fastest_first_uuids "$KEPT")" "[\"$A4000\",\"$RTX3090\",\"$A6000\"]" \
  "a probe under CUDA_DEVICE_ORDER leaves the kept order"
# Without it, map --probe asks what ls asks: it shows the kept order beside
# the driver's, then keeps the driver's, and says so instead.
run_status "$GPUPIN" "${SIM[@]}" map --probe
expect_contains "$OUT" "model and driver DISAGREE" "map --probe checks the kept order"
expect_contains "$OUT" "kept in $KEPT, and the driver now numbers otherwise: gpupin now keeps the driver's new order" \
  "and says it replaced it"
[[ $OUT != *"remove that file"* ]] || fail "map --probe advises removing the file it replaced: $OUT"
expect_eq "$(jq -c .fastest_first_uuids "$KEPT")" "[\"$RTX3090\",\"$A6000\",\"$A4000\"]" \
  "map --probe kept the driver's order"
expect_eq "$(ls_order "$GPUPIN" "${SIM[@]}")" '[[1,2,0],"driver"]' "ls follows the replaced order"

# An order that leaves out a card the driver lists is none (no probe keeps
# one): the driver is asked again, and its whole order kept.
plant "$KEPT" "$A6000" "$A4000"
run_status "$GPUPIN" "${SIM[@]}" -v ls
expect_contains "$ERR" "is not used: it leaves out GPU 1 ($RTX3090)" "-v says why"
expect_eq "$(jq -c .fastest_first_uuids "$KEPT")" "[\"$RTX3090\",\"$A6000\",\"$A4000\"]" \
  "probed again and kept whole"
plant "$KEPT"
expect_eq "$(ls_order "$GPUPIN" "${SIM[@]}")" '[[1,2,0],"driver"]' "an empty kept order is not followed"

# Another boot: the record is not followed, and the driver is asked again.
jq '.boot_id = "00000000-0000-0000-0000-000000000000" | .fastest_first_uuids |= reverse' "$KEPT.good" >"$KEPT"
expect_eq "$(ls_order "$GPUPIN" "${SIM[@]}")" '[[1,2,0],"driver"]' "another boot's order"
expect_eq "$(jq -r .boot_id "$KEPT")" "$(cat /proc/sys/kernel/random/boot_id)" "probed again for this boot"
# Another driver, likewise.
jq '.driver_version = "550.54.14" | .fastest_first_uuids |= reverse' "$KEPT.good" >"$KEPT"
expect_eq "$(ls_order "$GPUPIN" "${SIM[@]}")" '[[1,2,0],"driver"]' "another driver's order"
expect_eq "$(jq -r .driver_version "$KEPT")" 535.183.01 "probed again for this driver"
# Another set of GPUs (a card swapped, the driver's order changed with it).
swapped="$TEST_TMP/swapped.json"
jq '.gpus[0].uuid = "GPU-00000000-1111-2222-3333-444444444444" | .cuda_fastest_first_order = [2, 0, 1]' \
  "$MIXED" >"$swapped"
expect_eq "$(ls_order "$GPUPIN" --simulate "$swapped")" '[[2,0,1],"driver"]' "new cards, the new order"
expect_eq "$(jq -c .fastest_first_uuids[1] "$KEPT")" '"GPU-00000000-1111-2222-3333-444444444444"' \
  "probed again for the new cards"
cp "$KEPT.good" "$KEPT"

# Nobody can plant an order for root: a file of nobody's under root's name
# is not followed (root probes and replaces it).
rm "$KEPT"
plant "$TEST_TMP/planted.json" "$A4000" "$RTX3090" "$A6000"
chmod 0644 "$TEST_TMP/planted.json"
"${AS_NOBODY[@]}" cp "$TEST_TMP/planted.json" "$KEPT"
expect_eq "$(stat -c %U "$KEPT")" nobody "the planted file is nobody's"
run_status "$GPUPIN" "${SIM[@]}" -v ls
expect_contains "$ERR" "cuda-order-0.json skipped: belongs to uid 65534, not to uid 0" "-v says why"
expect_eq "$(ls_order "$GPUPIN" "${SIM[@]}")" '[[1,2,0],"driver"]' "another user's order is not followed"
# A symlink to a matching order is not followed either, nor a file of
# root's that others may write.
rm -f "$KEPT"
ln -s "$TEST_TMP/planted.json" "$KEPT"
run_status "$GPUPIN" "${SIM[@]}" -v ls
expect_contains "$ERR" "symbolic link" "-v: the symlink"
expect_contains "$OUT" "  1  cuda:0  NVIDIA GeForce RTX 3090" "a symlinked order is not followed"
[[ ! -L $KEPT ]] || fail "the symlink is still there: the order was not kept"
plant "$KEPT" "$A4000" "$RTX3090" "$A6000"
chmod 0666 "$KEPT"
expect_eq "$(ls_order "$GPUPIN" "${SIM[@]}")" '[[1,2,0],"driver"]' "a world-writable order is not followed"

# Root's kept order serves every user: nobody, with a gpupin that can load
# no libcuda, numbers by it.
cp "$KEPT.good" "$KEPT"
as_nobody_copies "$MIXED"
expect_eq "$(ls_order "${AS_NOBODY[@]}" "$GPUPIN" --simulate "$SCENARIO")" '[[1,2,0],"driver"]' \
  "nobody follows root's kept order"

# No order kept and the driver cannot be asked: the guess, said as one.
rm "$KEPT"
expect_eq "$(ls_order "$NOCUDA" "${SIM[@]}")" '[[2,1,0],"guess"]' "no libcuda: the guess"
run_status "$NOCUDA" "${SIM[@]}" -v ls
expect_contains "$OUT" "cuda:N is a guess" "the table says it guesses"
expect_contains "$ERR" "libgpupin-sim-cuda.so is not installed" "-v says why the driver was not asked"
run_status "$NOCUDA" "${SIM[@]}" --json map
expect_eq "$(jq -c '[.cuda_order_is_guess, .cuda_order, [.devices[].gpu_index]]' <<<"$OUT")" \
  '[true,"guess",[2,1,0]]' "map: the guess"
[[ ! -e $KEPT ]] || fail "a guess was kept"
echo PASS
