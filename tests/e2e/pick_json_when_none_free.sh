# pick --json that finds no GPU (exit 3) still prints its verdicts, with the
# reason, as one line of JSON on stderr before its error line: they matter
# most then. Stdout stays empty, as on every failure.
source "$(dirname "$0")/lib.sh"
SIM=(--simulate "$EXAMPLES/lab-8gpu.json")

# failure_json: the JSON line of the last run's stderr, and stdout empty.
failure_json() {
  expect_eq "$OUT" "" "stdout on failure"
  expect_eq "$(wc -l <<<"$ERR")" 2 "the JSON line and the error line: $ERR"
  OUT=$(head -n 1 <<<"$ERR")
}
run_status "$GPUPIN" "${SIM[@]}" --json pick -n 8
expect_eq "$STATUS" 3 "8 cards asked, 2 of them busy"
failure_json
expect_eq "$(jq -r .exit_code <<<"$OUT")" 3 "exit_code in the JSON"
expect_eq "$(jq '.verdicts | length' <<<"$OUT")" 8 "a verdict per card"
expect_eq "$(jq '[.verdicts[] | select(.eligible)] | length' <<<"$OUT")" 6 "6 eligible cards"
expect_eq "$(jq -r '.verdicts[] | select(.gpu_index == 2) | .reason' <<<"$OUT" | grep -c busy)" 1 "GPU 2 is busy"
expect_contains "$(jq -r .error <<<"$OUT")" "8 GPUs asked, only 6 available" "the reason"
expect_contains "$(tail -n 1 <<<"$ERR")" "gpupin: " "and the usual line on stderr"
expect_contains "$(tail -n 1 <<<"$ERR")" "8 GPUs asked, only 6 available" "naming the reason"
expect_eq "$("$GPUPIN" "${SIM[@]}" --json leases | jq '.leases | length')" 0 "nothing reserved"

# A request no card could ever meet says so too, with no verdict to give.
run_status "$GPUPIN" "${SIM[@]}" --json pick -n 9
expect_eq "$STATUS" 3 "9 cards asked of 8"
failure_json
expect_eq "$(jq -c '[.exit_code, .verdicts]' <<<"$OUT")" '[3,[]]' "exit_code, and no verdicts"
expect_eq "$(jq -r .error <<<"$OUT")" "asked for 9 GPUs but this machine has 8" "the reason"
CUDA_VISIBLE_DEVICES=-1 run_status "$GPUPIN" "${SIM[@]}" --json pick
expect_eq "$STATUS" 3 "an allocation of no card"
failure_json
expect_contains "$(jq -r .error <<<"$OUT")" "no GPU is in your allocation" "the reason"
echo PASS
