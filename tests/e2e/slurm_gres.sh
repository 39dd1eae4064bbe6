# slurm gres prints one gres.conf line per GPU, keyed by device file, in PCI
# bus order, with Cores= in Slurm's core numbers for the CPU topology that
# GPUPIN_SYSFS_ROOT describes.
source "$(dirname "$0")/lib.sh"
# lab-8gpu's affinities ("0-15,32-47") are those of 2 sockets x 16 cores x 2 threads.
make_sysfs "$TEST_TMP/sys-2x16x2" 2 16 2
export GPUPIN_SYSFS_ROOT="$TEST_TMP/sys-2x16x2"
run_status "$GPUPIN" --simulate "$EXAMPLES/lab-8gpu.json" slurm gres
expect_eq "$STATUS" 0 "slurm gres"
expect_eq "$(grep -c '^Name=gpu ' <<<"$OUT")" 8 "one line per GPU"
expect_contains "$OUT" "Name=gpu Type=nvidia_rtx_a6000 File=/dev/nvidia1 Cores=0-15 " "type, device file and Slurm core indices"
expect_contains "$OUT" "Gres=gpu:nvidia_geforce_rtx_2080_ti:2,gpu:nvidia_geforce_rtx_3090:2,gpu:nvidia_rtx_a6000:4" "slurm.conf hint"
expect_eq "$(grep -o '# NVML index [0-9]*' <<<"$OUT" | grep -o '[0-9]*$' | tr '\n' ' ')" "0 1 2 3 4 5 6 7 " "lines in NVML index order"
text_lines=$(grep '^Name=gpu ' <<<"$OUT" | sed 's/  # .*//')

# --json: the same lines, as fields, for a script that writes gres.conf.
run_status "$GPUPIN" --simulate "$EXAMPLES/lab-8gpu.json" slurm gres --json
expect_eq "$STATUS" 0 "slurm gres --json"
expect_eq "$(jq -r '.lines[].line' <<<"$OUT")" "$text_lines" "the JSON's lines are the text's"
expect_eq "$(jq -r '.lines[1] | [.gpu_index, .type, .file, .cores] | join(" ")' <<<"$OUT")" \
  "1 nvidia_rtx_a6000 /dev/nvidia1 0-15" "one line's fields"
expect_eq "$(jq -r '.node_gres' <<<"$OUT")" \
  "gpu:nvidia_geforce_rtx_2080_ti:2,gpu:nvidia_geforce_rtx_3090:2,gpu:nvidia_rtx_a6000:4" "node_gres"
expect_eq "$(jq -r '[.schema_version, (.left_out | length), (.notes | length)] | join(" ")' <<<"$OUT")" \
  "2 0 1" "schema version; nothing left out, one note"
expect_contains "$(jq -r '.notes[0]' <<<"$OUT")" "Several models: Slurm may number typed GPUs type by type" \
  "the note on several models"

# Minor numbers out of PCI bus order: the lines stay in PCI bus order, and say so.
fixture="$GPUPIN_SOURCE_DIR/tests/e2e/fixtures/server-4gpu-ht-minors.json"
run_status "$GPUPIN" --simulate "$fixture" slurm gres
expect_eq "$STATUS" 0 "slurm gres, minors out of order"
echo "$OUT"
expect_eq "$(grep -o 'File=/dev/nvidia[0-9]* Cores=[0-9-]*  # NVML index [0-9]' <<<"$OUT" | tr '\n' ';')" \
  "File=/dev/nvidia2 Cores=0-15  # NVML index 0;File=/dev/nvidia3 Cores=0-15  # NVML index 1;File=/dev/nvidia0 Cores=16-31  # NVML index 2;File=/dev/nvidia1 Cores=16-31  # NVML index 3;" \
  "PCI bus order, Slurm core indices"
expect_contains "$OUT" "not in PCI bus order here: do not sort the lines by File=" "warning about minor numbers"

# A machine without those CPUs: no Cores= rather than wrong ones, and why.
make_sysfs "$TEST_TMP/sys-1x2x1" 1 2 1
GPUPIN_SYSFS_ROOT="$TEST_TMP/sys-1x2x1" run_status "$GPUPIN" --simulate "$fixture" slurm gres
expect_eq "$STATUS" 0 "slurm gres on a smaller machine"
expect_eq "$(grep -c '^Name=.* Cores=' <<<"$OUT" || true)" 0 "no Cores= for CPUs the machine lacks"
expect_contains "$OUT" "# Cores= left out for GPU 0: NVML's CPU affinity: CPUs 2-15,32-47 of \"0-15,32-47\" not on this machine" "why Cores= is left out"
expect_contains "$OUT" "GPUPIN_SYSFS_ROOT can name a sysfs tree" "hint for the simulated server"
GPUPIN_SYSFS_ROOT="$TEST_TMP/sys-1x2x1" run_status "$GPUPIN" --json --simulate "$fixture" slurm gres
expect_eq "$(jq -r '.lines[0] | [(.cores | tostring), .cores_left_out] | join(" / ")' <<<"$OUT")" \
  "null / NVML's CPU affinity: CPUs 2-15,32-47 of \"0-15,32-47\" not on this machine" "--json: why Cores= is left out"
GPUPIN_SYSFS_ROOT="$TEST_TMP/nowhere" run_status "$GPUPIN" --simulate "$fixture" slurm gres
expect_eq "$STATUS" 0 "slurm gres without a CPU topology"
expect_contains "$OUT" "# Cores= left out: cannot read the CPU topology: " "no topology"
expect_contains "$OUT" "$TEST_TMP/nowhere/devices/system/cpu/online" "names the file"

# A card in MIG mode: Slurm must be given its MIG devices, never the whole card.
run_status "$GPUPIN" --simulate "$EXAMPLES/a100-mig.json" --json slurm gres
expect_eq "$(jq -c '[.lines[].gpu_index]' <<<"$OUT")" "[1]" "only the card out of MIG mode is a gres line"
expect_eq "$(jq -r '.left_out[0] | "\(.gpu_index) \(.reason)"' <<<"$OUT")" \
  "0 in MIG mode: give Slurm its MIG devices (MultipleFiles= in gres.conf, or AutoDetect=nvml), not the whole card" \
  "the card in MIG mode is left out, with why"

run_status "$GPUPIN" slurm
expect_eq "$STATUS" 2 "slurm needs a subcommand"
echo PASS
