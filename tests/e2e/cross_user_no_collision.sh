#!/usr/bin/env bash
# Jobs of two users (root and nobody) started at one instant on a shared
# state directory and a shared simulated server never share a card.
source "$(dirname "$0")/lib.sh"

if [[ $(id -u) != 0 ]] || ! id nobody >/dev/null 2>&1; then
  echo "skipped: needs root and a 'nobody' user"
  exit 0
fi
chmod 0711 "$TEST_TMP"  # nobody may reach the shared paths inside, nothing more
log="$TEST_TMP/workload.log"
install -m 0666 /dev/null "$log"
install -d -m 1777 "$GPUPIN_SIM_LIVE_DIR"
# The checkout may be private (a mktemp -d clone is 0700): both users run
# the same copies of the binaries and the scenario from where nobody can read.
install -d -m 0755 "$TEST_TMP/bin"
install -m 0755 "$GPUPIN" "$GPUPIN_BIN_DIR/libgpupin-sim-nvml.so" "$WORKLOAD" "$TEST_TMP/bin"
install -m 0644 "$EXAMPLES/server-4gpu.json" "$TEST_TMP/server-4gpu.json"
GPUPIN="$TEST_TMP/bin/gpupin"
WORKLOAD="$TEST_TMP/bin/gpupin-sim-workload"
scenario="$TEST_TMP/server-4gpu.json"
"$GPUPIN" --simulate "$scenario" ls >/dev/null  # creates the state directory
jobs=8
job() {
  local as=()
  (($1 % 2 == 0)) && as=(setpriv --reuid=nobody --regid="$(id -gn nobody)" --clear-groups)
  exec "${as[@]}" "$GPUPIN" --simulate "$scenario" run --wait -- \
    "$WORKLOAD" --seconds 0.3 --name "job$1" --log "$log" 2>"$TEST_TMP/job$1.err"
}
start_at_once "$jobs" job
wait_all_ok "${STARTED[@]}"
expect_eq "$(grep -c '"event":"end"' "$log")" "$jobs" "workloads that ran to the end"
expect_eq "$(stat -c %a "$GPUPIN_STATE_DIR")" 1777 "the shared state directory's mode"
expect_no_overlap "$log"
