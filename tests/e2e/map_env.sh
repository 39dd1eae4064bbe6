#!/usr/bin/env bash
# gpupin map --env: which physical GPU each cuda:N is under a given
# environment, and every entry CUDA drops, with why.
source "$(dirname "$0")/lib.sh"
SIM=(--simulate "$EXAMPLES/server-4gpu.json")
GPU0=GPU-127ba902-1edf-46cf-53e1-47bf2de4f848
GPU1=GPU-067ec317-a825-4be6-2214-80883f6c1796

# The acceptance case: CUDA stops at the invalid 7, so 1 goes with it.
run_status "$GPUPIN" "${SIM[@]}" map --env 'CUDA_VISIBLE_DEVICES=0,7,1'
expect_eq "$STATUS" 0 "map --env status"
expect_contains "$OUT" '--env: CUDA_VISIBLE_DEVICES="0,7,1", CUDA_DEVICE_ORDER=unset' "header"
row=$(grep '^cuda:' <<<"$OUT")
expect_eq "$(wc -l <<<"$row")" 1 "exactly one visible device"
expect_contains "$row" "cuda:0" "cuda:0 row"
expect_contains "$row" "00000000:17:00.0  $GPU0  NVIDIA L40S" "cuda:0 is GPU 0"
expect_contains "$OUT" 'entry 1 "7": no such index' "7 dropped, and why"
expect_contains "$OUT" 'entry 2 "1": after an invalid entry' "1 dropped with it"

# JSON: the same answer, typed.
run_status "$GPUPIN" "${SIM[@]}" --json map --env 'CUDA_VISIBLE_DEVICES=0,7,1'
expect_eq "$STATUS" 0 "map --json status"
expect_eq "$(jq -c '[.schema_version, .cuda_visible_devices, .cuda_device_order]' <<<"$OUT")" \
  '[2,"0,7,1",null]' "json environment"
expect_eq "$(jq -c '[.devices[] | [.cuda_ordinal, .gpu_index, .uuid]]' <<<"$OUT")" \
  "[[0,0,\"$GPU0\"]]" "json devices"
expect_eq "$(jq -c '[.dropped[] | [.position, .token, .reason]]' <<<"$OUT")" \
  '[[1,"7","no_such_index"],[2,"1","after_invalid"]]' "json dropped"

# A UUID prefix names its GPU; quotes and a second variable are shell-like.
run_status "$GPUPIN" "${SIM[@]}" map --env "CUDA_VISIBLE_DEVICES='GPU-067e' CUDA_DEVICE_ORDER=PCI_BUS_ID"
expect_eq "$STATUS" 0 "uuid prefix status"
expect_contains "$(grep '^cuda:0' <<<"$OUT")" "$GPU1" "a UUID prefix names GPU 1"
expect_contains "$OUT" 'CUDA_DEVICE_ORDER="PCI_BUS_ID"' "order in the header"

# A UUID without digits names nothing (driver 580 refuses it, bench/gpu/check.sh (f)).
run_status "$GPUPIN" "${SIM[@]}" map --env 'CUDA_VISIBLE_DEVICES=GPU-'
expect_eq "$STATUS" 0 "digitless UUID status"
expect_contains "$OUT" "CUDA sees no device" "a UUID without digits leaves no device"
expect_contains "$OUT" 'entry 0 "GPU-": invalid entry (`GPU-` has no UUID digits' "digitless UUID named"

# A duplicate leaves CUDA no device at all.
run_status "$GPUPIN" "${SIM[@]}" map --env 'CUDA_VISIBLE_DEVICES=2,2'
expect_eq "$STATUS" 0 "duplicate status"
expect_contains "$OUT" "CUDA sees no device" "duplicate leaves no device"
expect_contains "$OUT" 'entry 1 "2": duplicate' "duplicate named"

# One ordinal; a missing one says which exist; cuda:N and N are the same.
run_status "$GPUPIN" "${SIM[@]}" map cuda:1 --env 'CUDA_VISIBLE_DEVICES=3,1'
expect_eq "$STATUS" 0 "map cuda:1 status"
expect_eq "$(grep -c '^cuda:' <<<"$OUT")" 1 "map cuda:1 shows one row"
expect_contains "$(grep '^cuda:1' <<<"$OUT")" "$GPU1" "cuda:1 is GPU 1"
run_status "$GPUPIN" "${SIM[@]}" map 5 --env 'CUDA_VISIBLE_DEVICES=3,1'
expect_eq "$STATUS" 1 "missing ordinal status"
expect_eq "$OUT" "" "missing ordinal prints nothing on stdout"
expect_contains "$ERR" "cuda:5 does not exist under --env: cuda:0 to cuda:1 exist" "missing ordinal"

# --env starts from an empty environment: our own CUDA_VISIBLE_DEVICES is ignored.
CUDA_VISIBLE_DEVICES=3 run_status "$GPUPIN" "${SIM[@]}" map --env ''
expect_contains "$OUT" "CUDA_VISIBLE_DEVICES=unset" "--env '' is an empty environment"
expect_eq "$(grep -c '^cuda:' <<<"$OUT")" 4 "all four GPUs under an empty environment"
# Without --env, gpupin's own environment.
CUDA_VISIBLE_DEVICES=3 run_status "$GPUPIN" "${SIM[@]}" map
expect_contains "$OUT" 'this environment: CUDA_VISIBLE_DEVICES="3"' "own environment"
expect_eq "$(grep -c '^cuda:' <<<"$OUT")" 1 "own environment shows one GPU"

# Usage errors name what is wrong and exit 2.
run_status "$GPUPIN" "${SIM[@]}" map --env 'CUDA_VISIBLE_DEVICES=0 python'
expect_eq "$STATUS" 2 "word without = status"
expect_contains "$ERR" "'python' is not NAME=VALUE" "word without = named"
run_status "$GPUPIN" "${SIM[@]}" map gpu1
expect_eq "$STATUS" 2 "bad ordinal status"
expect_contains "$ERR" "'gpu1' is not a CUDA device" "bad ordinal named"
run_status "$GPUPIN" "${SIM[@]}" map --env 'A=1' --pid 1
expect_eq "$STATUS" 2 "--env with --pid status"

# pick inside such a value says how CUDA reads it (a repeated device: as no
# device at all; a range: in part), and where to see it.
CUDA_VISIBLE_DEVICES=2,2 run_status "$GPUPIN" "${SIM[@]}" pick
expect_eq "$STATUS" 3 "pick inside a repeated device"
expect_contains "$ERR" "no GPU is in your allocation, CUDA_VISIBLE_DEVICES=2,2, which leaves CUDA no device (gpupin map says why)" "pick names the cut"
CUDA_VISIBLE_DEVICES=1-3 run_status "$GPUPIN" "${SIM[@]}" pick -n 2
expect_contains "$ERR" "only 1 is in your allocation, CUDA_VISIBLE_DEVICES=1-3, which CUDA reads only in part" "pick names a range"
