# Shared helpers for the end-to-end scripts: each script sources this, runs
# the real gpupin binary against a simulated server, and checks what a user
# would see. A failed check prints what was expected and exits 1.
set -euo pipefail

: "${GPUPIN_BIN_DIR:?run through ctest, or set GPUPIN_BIN_DIR to build/<config>/bin}"
: "${GPUPIN_SOURCE_DIR:?set GPUPIN_SOURCE_DIR to the repository root}"
GPUPIN="$GPUPIN_BIN_DIR/gpupin"
WORKLOAD="$GPUPIN_BIN_DIR/gpupin-sim-workload"
EXAMPLES="$GPUPIN_SOURCE_DIR/examples"

TEST_TMP=$(mktemp -d "${TMPDIR:-/tmp}/gpupin-e2e.XXXXXX")
# Every test gets its own state directory and its own live-process registry,
# so tests never see each other's leases or simulated processes.
export GPUPIN_STATE_DIR="$TEST_TMP/state"
export GPUPIN_SIM_LIVE_DIR="$TEST_TMP/live"
unset CUDA_VISIBLE_DEVICES CUDA_DEVICE_ORDER NVIDIA_VISIBLE_DEVICES SLURM_JOB_GPUS SLURM_STEP_GPUS GPU_DEVICE_ORDINAL
export NO_COLOR=1

cleanup() {
  local pids
  pids=$(jobs -p) || true
  if [[ -n "$pids" ]]; then kill -9 $pids 2>/dev/null || true; fi
  rm -rf "$TEST_TMP"
}
trap cleanup EXIT

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# expect_eq ACTUAL EXPECTED WHAT
expect_eq() {
  [[ "$1" == "$2" ]] || fail "$3: expected '$2', got '$1'"
}

# expect_contains HAYSTACK NEEDLE WHAT
expect_contains() {
  [[ "$1" == *"$2"* ]] || fail "$3: expected to contain '$2', got: $1"
}

# run_status CMD...: runs CMD, stores stdout in OUT, stderr in ERR, status in STATUS.
run_status() {
  STATUS=0
  OUT=$("$@" 2>"$TEST_TMP/stderr") || STATUS=$?
  ERR=$(cat "$TEST_TMP/stderr")
}

now_ms() { date +%s%3N; }
