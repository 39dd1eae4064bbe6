#!/usr/bin/env bash
# Checks gpupin against a real NVIDIA driver, with an independent witness
# (gpu_probe.c, which reads NVML and CUDA itself; judge.py compares). One
# command, at most about 4 minutes even when everything times out:
# bench/gpu/check.sh. See bench/gpu/README.md.
#   (a) gpupin --json ls agrees with nvidia-smi (index, UUID, bus id, memory)
#   (b) a CUDA process (context + allocation) is seen by gpupin with its pid
#       and memory on its GPU: the _v3 process list is read with the stride
#       the driver really writes
#   (c) gpupin run --verify puts the program on the leased card: the UUID the
#       program gets from cuDeviceGetUuid is the lease's
#   (d) nvmlDeviceGetMemoryInfo_v2 is accepted and gpupin reports its numbers
# Prints PASS/FAIL/SKIP/INFO lines and a summary. Exit 0: all passed;
# 1: something failed; 77: no NVIDIA driver here, nothing was checked.
# Env: GPUPIN_BIN (default build/release/bin/gpupin, else gpupin on PATH).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

gpupin=${GPUPIN_BIN:-$root/build/release/bin/gpupin}
[[ -x $gpupin ]] || gpupin=$(command -v gpupin || true)

work=$(mktemp -d "${TMPDIR:-/tmp}/gpupin-gpu-check.XXXXXX")
holder=""
cleanup() {
  if [[ -n $holder ]]; then kill "$holder" 2>/dev/null; wait "$holder" 2>/dev/null; fi
  rm -rf "$work"
}
trap cleanup EXIT
# Leases of this check stay out of the machine's shared state directory.
export GPUPIN_STATE_DIR=$work/state

passed=0 failed=0 skipped=0
report() {  # report PASS|FAIL|SKIP|INFO name detail
  echo "$1 $2: $3"
  case $1 in PASS) ((passed++)) ;; FAIL) ((failed++)) ;; SKIP) ((skipped++)) ;; esac
}

# The witness: the one built beside gpupin, else compiled here (plain C).
probe=$(dirname "${gpupin:-/nonexistent}")/gpu_probe
if [[ ! -x $probe ]]; then
  probe=$work/gpu_probe
  if ! cc -std=c11 -D_DEFAULT_SOURCE -O2 -o "$probe" "$here/gpu_probe.c" -ldl 2>"$work/cc.err"; then
    echo "FAIL setup: cannot compile bench/gpu/gpu_probe.c: $(head -1 "$work/cc.err")"
    exit 1
  fi
fi

timeout 30 "$probe" nvml >"$work/nvml.txt" 2>"$work/nvml.err"
rc=$?
if ((rc == 77)); then
  echo "no NVIDIA driver: nothing to check ($(head -1 "$work/nvml.err"))"
  exit 77
fi
if ((rc != 0)); then
  echo "FAIL setup: the NVML probe failed: $(head -1 "$work/nvml.err")"
  exit 1
fi
if [[ -z $gpupin ]]; then
  echo "FAIL setup: no gpupin binary; build it (scripts/build release) or set GPUPIN_BIN"
  exit 1
fi
if ! command -v python3 >/dev/null; then
  echo "FAIL setup: python3 is needed to read gpupin's JSON"
  exit 1
fi
gpu_count=$(grep -c '^gpu ' "$work/nvml.txt")
echo "INFO setup: $gpu_count GPU(s); gpupin: $gpupin; witness: $probe"
if ((gpu_count == 0)); then
  echo "FAIL setup: the driver lists no GPU"
  exit 1
fi

# One comparison of judge.py (gpupin's JSON against the witnesses); its
# lines are reported and counted. A comparison that breaks (say, on a
# changed JSON schema) is a failure, never a silent pass.
judge() {
  local out status name detail
  if ! out=$(python3 "$here/judge.py" "$@" 2>"$work/judge.err"); then
    out+=$'\n'"FAIL $1 judge.py could not compare: $(tail -n 1 "$work/judge.err")"
  fi
  while read -r status name detail; do
    [[ -n $status ]] && report "$status" "$name" "$detail"
  done <<<"$out"
}

# ---- (a) gpupin --json ls against nvidia-smi ----
if ! timeout 20 "$gpupin" --json ls >"$work/ls.json" 2>"$work/ls.err"; then
  report FAIL a "gpupin --json ls failed: $(head -1 "$work/ls.err")"
elif ! command -v nvidia-smi >/dev/null; then
  report SKIP a "nvidia-smi not found"
elif ! timeout 20 nvidia-smi --query-gpu=index,uuid,pci.bus_id,memory.total,memory.used \
    --format=csv,noheader,nounits >"$work/smi.csv" 2>"$work/smi.err"; then
  report FAIL a "nvidia-smi failed: $(head -1 "$work/smi.err")"
else
  judge ls "$work/ls.json" "$work/smi.csv"
fi

# ---- (d) memory v2 ----
judge memory "$work/nvml.txt" "$work/ls.json"

# ---- (b) a CUDA process seen with its pid and memory ----
hold_mib=512
env -u CUDA_VISIBLE_DEVICES "$probe" hold "$hold_mib" 60 >"$work/hold.out" 2>"$work/hold.err" &
holder=$!
for _ in $(seq 1 60); do
  grep -q '^ready ' "$work/hold.out" && break
  kill -0 "$holder" 2>/dev/null || break
  sleep 0.5
done
if ! grep -q '^ready ' "$work/hold.out"; then
  report FAIL b "the CUDA process did not start: $(head -1 "$work/hold.err")"
else
  # NVML may list a new context a moment after it exists.
  for _ in $(seq 1 8); do
    timeout 10 "$gpupin" --json ls >"$work/ls-hold.json" 2>/dev/null &&
      python3 "$here/judge.py" seen "$work/ls-hold.json" "$holder" && break
    sleep 1
  done
  timeout 30 "$probe" nvml >"$work/nvml-hold.txt" 2>/dev/null
  judge process "$work/ls-hold.json" "$work/nvml-hold.txt" "$work/hold.out" "$hold_mib"
fi
kill "$holder" 2>/dev/null
wait "$holder" 2>/dev/null
holder=""

# ---- (c) gpupin run --verify lands on the leased card ----
target=$((gpu_count - 1))  # not the default first card, so a wrong mapping shows
timeout 60 "$gpupin" --json run --only "$target" --verify -- "$probe" hold 256 15 \
  >"$work/run.out" 2>"$work/run.err"
rc=$?
if ((rc != 0)); then
  report FAIL c "gpupin run exited $rc: $(grep -v '^{' "$work/run.err" | head -1)"
else
  judge run "$work/run.out" "$work/run.err" "$target"
fi

echo "summary: $passed passed, $failed failed, $skipped skipped"
((failed == 0))
