#!/usr/bin/env bash
# One card of a single-model server falls off the bus. The others keep
# their numbers (NVML numbers in PCI order, so the lost card keeps its
# place), the lost card's model does not make the models "differ", and its
# reason is printed under its row rather than widening the table.
source "$(dirname "$0")/lib.sh"
scenario="$TEST_TMP/lost.json"
jq '.gpus[1].lost = true' "$EXAMPLES/server-4gpu.json" >"$scenario"
SIM=(--simulate "$scenario")

run_status "$GPUPIN" "${SIM[@]}" ls
expect_eq "$STATUS" 0 "ls"
for index in 0 1 2 3; do
  expect_contains "$OUT" "  $index  cuda:$index  " "ls, GPU $index keeps cuda:$index"
done
expect_contains "$OUT" "└ reading its UUID failed (NVML: GPU is lost)" "the reason under the row"
width=$(awk 'NR == 2 { print length($0) }' <<<"$OUT")
((width < 110)) || fail "the header is $width characters wide: the reason widened a column"
[[ $OUT != *"models differ"* ]] || fail "ls says the models differ: $OUT"

run_status "$GPUPIN" "${SIM[@]}" pick --only 2
expect_eq "$OUT" 2 "pick prints the index, as on a single-model server"
expect_eq "$ERR" "" "pick has nothing to warn about"
"$GPUPIN" "${SIM[@]}" release >/dev/null

run_status env CUDA_VISIBLE_DEVICES=2 "$GPUPIN" "${SIM[@]}" --json map
expect_eq "$(jq -c '[.devices[] | .gpu_index]' <<<"$OUT")" "[2]" "map: CUDA_VISIBLE_DEVICES=2 is GPU 2"
[[ $OUT != *"mixed models"* ]] || fail "map says the models are mixed: $OUT"

# What NVML could not say about the lost GPU is null in JSON, not "".
run_status "$GPUPIN" "${SIM[@]}" --json ls
expect_eq "$(jq -c '.gpus[1] | [.uuid, .name, .pci_bus_id, .healthy]' <<<"$OUT")" "[null,null,null,false]" \
  "ls --json, the lost GPU"
run_status "$GPUPIN" "${SIM[@]}" --json map
expect_eq "$(jq -c '[.devices[] | select(.gpu_index == 1) | .uuid, .name]' <<<"$OUT")" "[null,null]" \
  "map --json, the lost GPU"
run_status "$GPUPIN" "${SIM[@]}" --json slurm gres
expect_eq "$(jq -c '[.left_out[] | .uuid]' <<<"$OUT")" "[null]" "slurm gres --json, the lost GPU"

run_status "$GPUPIN" "${SIM[@]}" --json doctor
expect_eq "$(jq -r '.findings[] | select(.check == "device_order") | .verdict' <<<"$OUT")" ok \
  "doctor's device order check"
# A card in reset still gives its name, but not its compute capability:
# what was not read is no sign of a second model either.
jq '.gpus[1].errors = {"nvmlDeviceGetMemoryInfo": "RESET_REQUIRED"}' "$EXAMPLES/server-4gpu.json" >"$TEST_TMP/reset.json"
run_status "$GPUPIN" --simulate "$TEST_TMP/reset.json" ls
expect_contains "$OUT" "  3  cuda:3  " "ls, beside a card in reset, GPU 3 keeps cuda:3"
[[ $OUT != *"cuda:N is a guess"* ]] || fail "ls guesses cuda:N beside a card in reset: $OUT"
run_status "$GPUPIN" --simulate "$TEST_TMP/reset.json" pick -n 2
[[ $OUT =~ ^[023],[023]$ ]] || fail "pick beside a card in reset printed '$OUT', not two indices"
[[ $ERR != *"differ"* ]] || fail "pick says the models differ: $ERR"
echo PASS
