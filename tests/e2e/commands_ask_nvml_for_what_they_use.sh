# Each command asks NVML only for what it uses, counted through the
# simulated library's call trace (GPUPIN_SIM_NVML_TRACE): ls never asks for
# topology, affinity or board facts, pick -n 1 never for pairwise topology,
# slurm gres for affinity and minor numbers, map for processes only with
# --pid, ps for minor numbers only with --devfiles, doctor never for
# topology; compute capability and cores only where CUDA's default order
# needs them; ls --watch reads the facts that cannot change once per process.
source "$(dirname "$0")/lib.sh"
LAB="$EXAMPLES/lab-8gpu.json"
ONE_MODEL="$EXAMPLES/server-4gpu.json"
MIXED="$EXAMPLES/workstation-mixed.json"
TRACE="$TEST_TMP/trace"

# traced CMD...: runs CMD with a fresh trace; it must succeed.
traced() {
  rm -f "$TRACE"
  GPUPIN_SIM_NVML_TRACE="$TRACE" run_status "$@"
  expect_eq "$STATUS" 0 "$*"
}
# calls FUNCTION: how many times the last traced command called it.
calls() { grep -cx "$1" "$TRACE" || true; }

for json in "" --json; do
  traced "$GPUPIN" --simulate "$LAB" $json ls
  expect_eq "$(calls nvmlDeviceGetTopologyCommonAncestor)" 0 "$json ls: no topology"
  expect_eq "$(calls nvmlDeviceGetCpuAffinity)" 0 "$json ls: no CPU affinity"
  expect_eq "$(calls nvmlDeviceGetNvLinkState)" 0 "$json ls: no NVLink"
  expect_eq "$(calls nvmlDeviceGetMinorNumber)" 0 "$json ls: no minor numbers"
  expect_eq "$(calls nvmlDeviceGetComputeMode)" 0 "$json ls: no compute mode"
  # Three models: the cuda:N column needs CUDA's default order.
  expect_eq "$(calls nvmlDeviceGetCudaComputeCapability)" 8 "$json ls: mixed models' capability"
  # The table's columns are read, once per card.
  expect_eq "$(calls nvmlDeviceGetUUID)" 8 "$json ls: every card's UUID"
  expect_eq "$(calls nvmlDeviceGetPowerUsage)" 8 "$json ls: every card's power draw"
  expect_eq "$(calls nvmlDeviceGetTemperature)" 8 "$json ls: every card's temperature"
done
traced "$GPUPIN" --simulate "$LAB" --json ls --all
(($(calls nvmlDeviceGetTopologyCommonAncestor) == 28)) || fail "ls --all reads the topology of every pair"
expect_eq "$(jq '.topology | length' <<<"$OUT")" 28 "and shows it: every pair once"
expect_eq "$(jq -c '.topology[0]' <<<"$OUT")" '{"gpus":[0,1],"level":"pcie_switch"}' "a pair and its level"
(($(calls nvmlDeviceGetCpuAffinity) == 8)) || fail "ls --all reads every card's affinity"
expect_eq "$(jq -r '.gpus[0].compute_mode' <<<"$OUT")" default "ls --all shows the compute mode"
# The table has no column for the rest: without --json, --all reads no more.
traced "$GPUPIN" --simulate "$LAB" ls
table_calls=$(wc -l <"$TRACE")
traced "$GPUPIN" --simulate "$LAB" ls --all
expect_eq "$(wc -l <"$TRACE")" "$table_calls" "ls --all without --json: the table's calls only"

# One model: CUDA's default order is PCI order. Mixed models: the cuda:N
# column needs capability and cores, unless the order is PCI's.
traced "$GPUPIN" --simulate "$ONE_MODEL" ls
expect_eq "$(calls nvmlDeviceGetCudaComputeCapability)" 0 "one model: no capability"
expect_eq "$(calls nvmlDeviceGetNumGpuCores)" 0 "one model: no cores"
traced "$GPUPIN" --simulate "$MIXED" ls
gpus=$(jq '.gpus | length' "$MIXED")
expect_eq "$(calls nvmlDeviceGetCudaComputeCapability)" "$gpus" "mixed models: every card's capability"
CUDA_DEVICE_ORDER=PCI_BUS_ID traced "$GPUPIN" --simulate "$MIXED" ls
expect_eq "$(calls nvmlDeviceGetCudaComputeCapability)" 0 "PCI_BUS_ID order: no capability"

traced "$GPUPIN" --simulate "$LAB" pick -n 1
expect_eq "$(calls nvmlDeviceGetTopologyCommonAncestor)" 0 "pick -n 1: no topology"
expect_eq "$(calls nvmlDeviceGetNvLinkState)" 0 "pick -n 1: no NVLink"
expect_eq "$(calls nvmlDeviceGetTemperature)" 0 "pick -n 1: no temperature"
expect_eq "$(calls nvmlDeviceGetComputeMode)" 8 "pick -n 1: every card's compute mode"
expect_eq "$(calls nvmlDeviceGetPersistenceMode)" 0 "pick -n 1: no persistence mode"
# CUDA's default order only to read the caller's own CUDA_VISIBLE_DEVICES.
expect_eq "$(calls nvmlDeviceGetCudaComputeCapability)" 0 "pick -n 1: no capability"
# The count above is of a path that reads topology when it needs it.
traced "$GPUPIN" --simulate "$LAB" pick -n 2
(($(calls nvmlDeviceGetTopologyCommonAncestor) > 0)) || fail "pick -n 2 reads the topology"
expect_eq "$(calls nvmlDeviceGetNumaNodeId)" 8 "pick -n 2: every card's NUMA node"
expect_eq "$(calls nvmlDeviceGetMinorNumber)" 0 "pick -n 2: no minor numbers"
expect_eq "$(calls nvmlDeviceGetCpuAffinity)" 0 "pick -n 2: no CPU affinity"
traced "$GPUPIN" --simulate "$LAB" pick -n 2 --no-near
expect_eq "$(calls nvmlDeviceGetTopologyCommonAncestor)" 0 "pick -n 2 --no-near: no topology"

traced "$GPUPIN" --simulate "$LAB" slurm gres
expect_eq "$(calls nvmlDeviceGetCpuAffinity)" 8 "slurm gres: every card's affinity"
expect_eq "$(calls nvmlDeviceGetMinorNumber)" 8 "slurm gres: every card's minor number"
expect_eq "$(calls nvmlDeviceGetMigMode)" 8 "slurm gres: every card's MIG mode (a card in MIG mode is left out)"
expect_eq "$(calls nvmlDeviceGetNumaNodeId)" 0 "slurm gres: no NUMA node"
expect_eq "$(calls nvmlDeviceGetBoardId)" 0 "slurm gres: no board id"
expect_eq "$(calls nvmlDeviceGetTopologyCommonAncestor)" 0 "slurm gres: no topology"
expect_eq "$(calls nvmlDeviceGetUtilizationRates)" 0 "slurm gres: no utilization"

# map shows where each cuda:N lands, not what runs there: process lists and
# memory only for --pid, whose uses it shows.
traced "$GPUPIN" --simulate "$LAB" map
expect_eq "$(calls nvmlDeviceGetComputeRunningProcesses_v3)" 0 "map: no process lists"
expect_eq "$(calls nvmlDeviceGetMemoryInfo_v2)" 0 "map: no memory"
expect_eq "$(calls nvmlDeviceGetCudaComputeCapability)" 8 "map: mixed models' capability"
# Not where the environment examined numbers in PCI order.
CUDA_DEVICE_ORDER=PCI_BUS_ID traced "$GPUPIN" --simulate "$LAB" map
expect_eq "$(calls nvmlDeviceGetCudaComputeCapability)" 0 "map in PCI_BUS_ID order: no capability"
traced "$GPUPIN" --simulate "$LAB" map --env CUDA_DEVICE_ORDER=PCI_BUS_ID
expect_eq "$(calls nvmlDeviceGetCudaComputeCapability)" 0 "map --env PCI_BUS_ID: no capability"
traced "$GPUPIN" --simulate "$LAB" map --pid $$
(($(calls nvmlDeviceGetComputeRunningProcesses_v3) >= 8)) || fail "map --pid reads every card's processes"

# ps needs the cards' minor numbers only to name the holders of their device
# files; doctor checks cards and processes, not how the cards are connected.
traced "$GPUPIN" --simulate "$LAB" ps
expect_eq "$(calls nvmlDeviceGetMinorNumber)" 0 "ps: no minor numbers"
expect_eq "$(calls nvmlDeviceGetBoardId)" 0 "ps: no board ids"
traced "$GPUPIN" --simulate "$LAB" ps --devfiles
expect_eq "$(calls nvmlDeviceGetMinorNumber)" 8 "ps --devfiles: every card's minor number"
traced "$GPUPIN" --simulate "$LAB" doctor
expect_eq "$(calls nvmlDeviceGetTopologyCommonAncestor)" 0 "doctor: no topology"
expect_eq "$(calls nvmlDeviceGetNvLinkState)" 0 "doctor: no NVLink"
expect_eq "$(calls nvmlDeviceGetCpuAffinity)" 0 "doctor: no CPU affinity"
expect_eq "$(calls nvmlDeviceGetPersistenceMode)" 8 "doctor: every card's persistence mode"
CUDA_DEVICE_ORDER=PCI_BUS_ID traced "$GPUPIN" --simulate "$LAB" doctor
expect_eq "$(calls nvmlDeviceGetCudaComputeCapability)" 0 "doctor in PCI_BUS_ID order: no capability"

# ls --watch: what cannot change is read once, what changes on every frame.
rm -f "$TRACE"
GPUPIN_SIM_NVML_TRACE="$TRACE" "$GPUPIN" --simulate "$LAB" --json ls --watch 0.1 >"$TEST_TMP/frames" &
pid=$!
wait_until 20 "three --json frames" lines_at_least "$TEST_TMP/frames" . 3
kill -TERM "$pid"
wait "$pid" || true
frames=$(wc -l <"$TEST_TMP/frames")
expect_eq "$(calls nvmlDeviceGetUUID)" 8 "ls --watch: UUIDs read once"
expect_eq "$(calls nvmlDeviceGetName)" 8 "ls --watch: names read once"
(($(calls nvmlDeviceGetUtilizationRates) >= 8 * frames - 8)) ||
  fail "ls --watch: utilization read on every frame ($frames frames)"
# pick reads CUDA's default order only for the caller's own
# CUDA_VISIBLE_DEVICES (in a state directory of their own: the picks above
# hold their cards).
export GPUPIN_STATE_DIR="$TEST_TMP/state-of-visible-devices"
install -d -m 1777 "$GPUPIN_STATE_DIR"
CUDA_VISIBLE_DEVICES=0,1 traced "$GPUPIN" --simulate "$LAB" pick -n 1 --ttl 1
expect_eq "$(calls nvmlDeviceGetCudaComputeCapability)" 8 \
  "pick under CUDA_VISIBLE_DEVICES=0,1 on mixed models: every card's capability"
CUDA_VISIBLE_DEVICES=0,1 CUDA_DEVICE_ORDER=PCI_BUS_ID traced "$GPUPIN" --simulate "$LAB" pick -n 1 --ttl 1
expect_eq "$(calls nvmlDeviceGetCudaComputeCapability)" 0 "pick in PCI_BUS_ID order: no capability"
echo PASS
