#!/usr/bin/env bash
# How much slower `gpupin --json ls` is than the least a program can do for
# the same table (bench/nvml_floor.c: only the NVML calls the table shows,
# from plain C), in wall time and in NVML calls, on 8 and on 16 cards.
#
#   cmake --build build/release --target gpupin nvml_floor cxx_start_floor gpupin_sim
#   bench/ls_vs_floor.sh [RUNS] [SCENARIO...]
#       # defaults: 200, examples/lab-8gpu.json examples/lab-16gpu.json
#
# Both run against the simulated NVML (bin/libgpupin-sim-nvml.so) on the same
# scenario, RUNS times each, interleaved so that machine noise hits both
# alike. Prints, per scenario, the median wall time of each, gpupin/floor
# (target at most 1.2), and the NVML calls each makes, counted through the
# simulated library's trace (GPUPIN_SIM_NVML_TRACE; target at most 1.15 times
# the floor's, growing linearly with the cards). GPUPIN_BENCH_BIN=DIR takes
# the binaries from DIR instead of build/release/bin; DIR:DIR... measures
# the gpupin of each (two builds side by side, all runs interleaved) against
# the first one's floor. First, the start alone: `gpupin --version` against
# /bin/true and against bin/cxx_start_floor (the C++ runtime's share). Exits
# 1 if any command fails once.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
runs=${1:-200}
shift || true
scenarios=("$@")
((${#scenarios[@]})) || scenarios=("$root/examples/lab-8gpu.json" "$root/examples/lab-16gpu.json")
IFS=: read -r -a bins <<<"${GPUPIN_BENCH_BIN:-$root/build/release/bin}"
bin=${bins[0]}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for program in "$bin/cxx_start_floor" "$bin/nvml_floor"; do
  if [[ ! -x $program ]]; then
    echo "ls_vs_floor: $program not built; cmake --build build/release --target nvml_floor cxx_start_floor" >&2
    exit 1
  fi
done
source "$root/bench/provenance.sh"
provenance bench/ls_vs_floor.sh "$runs" "${scenarios[@]##*/}"

# Microseconds of one run, from bash's own clock (no fork to measure).
time_us() {
  local start=$EPOCHREALTIME
  "$@" >/dev/null
  local end=$EPOCHREALTIME
  echo $(((${end/./} - ${start/./})))
}

median_us() { printf '%s\n' "$@" | sort -n | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

# NVML calls of one run of the command.
nvml_calls() {
  rm -f "$tmp/trace"
  GPUPIN_SIM_NVML_TRACE=$tmp/trace "$@" >/dev/null
  wc -l <"$tmp/trace"
}

ms() { awk -v us="$1" 'BEGIN {printf "%8.3f", us / 1000}'; }
# How a line names the gpupin of DIR: by its folder when several are measured.
label_of() { if ((${#bins[@]} == 1)); then echo gpupin; else echo "gpupin $1"; fi; }

# The start alone, which every command pays: `gpupin --version` (no command
# built, no NVML) against /bin/true and against bin/cxx_start_floor (a C++
# program linked as gpupin is that only starts and prints a line: what any
# C++ program of this build pays), interleaved the same way.
true_times=() cxx_times=()
declare -A version_times=()
for ((i = 0; i < runs; i++)); do
  true_times+=("$(time_us /bin/true)")
  cxx_times+=("$(time_us "$bin/cxx_start_floor")")
  for dir in "${bins[@]}"; do
    version_times[$dir]+="$(time_us "$dir/gpupin" --version) "
  done
done
true_us=$(median_us "${true_times[@]}")
cxx_us=$(median_us "${cxx_times[@]}")
printf 'start, %d runs each\n' "$runs"
printf '  /bin/true         median %s ms\n' "$(ms "$true_us")"
printf '  cxx_start_floor   median %s ms   (C++ runtime: %s ms over /bin/true)\n' "$(ms "$cxx_us")" \
  "$(ms "$(awk -v a="$cxx_us" -v b="$true_us" 'BEGIN {print a - b}')")"
for dir in "${bins[@]}"; do
  # shellcheck disable=SC2086 # the times are words
  version_us=$(median_us ${version_times[$dir]})
  printf '  %s --version  median %s ms   (gpupin'"'"'s own: %s ms over cxx_start_floor)\n' \
    "$(label_of "$dir")" "$(ms "$version_us")" "$(ms "$(awk -v a="$version_us" -v b="$cxx_us" 'BEGIN {print a - b}')")"
done

for scenario in "${scenarios[@]}"; do
  export GPUPIN_SIM_SCENARIO=$scenario
  floor_cmd=("$bin/nvml_floor" "$bin/libgpupin-sim-nvml.so")
  gpupin_args=(--simulate "$scenario" --json ls)
  if ! "${floor_cmd[@]}" >/dev/null; then
    echo "ls_vs_floor: failed: ${floor_cmd[*]}" >&2
    exit 1
  fi
  for dir in "${bins[@]}"; do
    if ! "$dir/gpupin" "${gpupin_args[@]}" >/dev/null; then
      echo "ls_vs_floor: failed: $dir/gpupin ${gpupin_args[*]}" >&2
      exit 1
    fi
  done
  floor_calls=$(nvml_calls "${floor_cmd[@]}")
  floor_times=()
  declare -A gpupin_times=()
  for ((i = 0; i < runs; i++)); do
    floor_times+=("$(time_us "${floor_cmd[@]}")")
    for dir in "${bins[@]}"; do
      gpupin_times[$dir]+="$(time_us "$dir/gpupin" "${gpupin_args[@]}") "
    done
  done
  floor=$(median_us "${floor_times[@]}")
  printf '%s (%s cards), %d runs each\n' "${scenario##*/}" "$(jq '.gpus | length' "$scenario")" "$runs"
  printf '  floor   median %s ms  %4d NVML calls\n' "$(ms "$floor")" "$floor_calls"
  for dir in "${bins[@]}"; do
    # shellcheck disable=SC2086 # the times are words
    gpupin=$(median_us ${gpupin_times[$dir]})
    gpupin_calls=$(nvml_calls "$dir/gpupin" "${gpupin_args[@]}")
    printf '  %s  median %s ms  %4d NVML calls\n' "$(label_of "$dir")" "$(ms "$gpupin")" "$gpupin_calls"
    printf '  ratio   time %.2f (target <= 1.2), calls %.2f (target <= 1.15)\n' \
      "$(awk -v a="$gpupin" -v b="$floor" 'BEGIN {print a / b}')" \
      "$(awk -v a="$gpupin_calls" -v b="$floor_calls" 'BEGIN {print a / b}')"
  done
  unset gpupin_times
done
