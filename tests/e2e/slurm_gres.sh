# slurm gres prints one gres.conf line per GPU, keyed by device file.
source "$(dirname "$0")/lib.sh"
run_status "$GPUPIN" --simulate "$EXAMPLES/lab-8gpu.json" slurm gres
expect_eq "$STATUS" 0 "slurm gres"
expect_eq "$(grep -c '^Name=gpu ' <<<"$OUT")" 8 "one line per GPU"
expect_contains "$OUT" "Name=gpu Type=nvidia_rtx_a6000 File=/dev/nvidia1 Cores=0-15,32-47" "type, device file and cores"
expect_contains "$OUT" "Gres=gpu:nvidia_geforce_rtx_2080_ti:2,gpu:nvidia_geforce_rtx_3090:2,gpu:nvidia_rtx_a6000:4" "slurm.conf hint"
run_status "$GPUPIN" slurm
expect_eq "$STATUS" 2 "slurm needs a subcommand"
echo PASS
