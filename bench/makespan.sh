#!/usr/bin/env bash
# How well the wait queue keeps cards busy: JOBS one-second `gpupin run
# --wait` jobs released at one instant on the CARDS free cards of a simulated
# server (8: a DGX H100; 4: examples/server-4gpu.json), against the ideal
# JOBS/CARDS seconds. Target: within 1 % of ideal.
#
#   cmake --build build/release --target gpupin gpupin_sim
#   bench/makespan.sh [JOBS] [SECONDS] [PAIRS] [CARDS] [FROM] [JOB]
#       # defaults: 64, 1, 3, 8, main, c
#   bench/makespan.sh 32 1 5 4 submit         # a burst: 32 jobs on 4 cards
#   bench/makespan.sh 32 1 3 4 submit python  # the same, each job a Python program
#
# JOB is what each job is, the same on every side:
#   c       the simulated CUDA program alone (bin/gpupin-sim-workload, a
#           small C++ program: about 2 ms of CPU a job, so that what the
#           queue adds weighs most against it)
#   python  a Python interpreter that starts and then becomes that program
#           (os.execv, the same process), as `python train.py` starts
#           before it opens CUDA: the interpreter's start-up is part of
#           every side's job
#
# Side by side, PAIRS times in turn, the same workloads without gpupin:
#   loops  CARDS shell loops released at the same instant, one per card,
#          each starting its JOBS/CARDS workloads one after another on its
#          fixed card (no queue, no lease, nothing to choose: what starting
#          the processes costs on this machine, with a shell's fork at each
#          hand-off). gpupin/loops is what the queue costs beyond that.
#   flock  JOBS `flock card-lock workload` released at once, job i fixed on
#          card i mod CARDS: the least a queue with one waiting process per
#          job can cost (util-linux's flock, a small C program; nothing
#          looked at, nothing chosen, nothing written). flock/loops is what
#          submitting the jobs as JOBS processes at once costs by itself.
#
# A job is its process: from its main to its end line (the workload's own
# log), and its SECONDS count from its main, so its own start-up (reading
# the scenario, as cuInit would) is part of the job. What lies between
# two jobs on a card (the queue, the fork, the exec, the dynamic loader) is
# counted against gpupin, flock or the loops. Makespan: the first job's main
# (FROM=main) or the instant the batch is released (FROM=submit: what the
# submitter sees, the burst of newcomers included) to the last job's end
# line; both are printed, FROM picks the one the ratios use. First start:
# release to the first job's main, and to the last card's first main.
# First round spread: from the first card's first main to the last card's.
# Hand-off: on each card, a job's end line to the next job's main. Longest
# job: its main to its end line (SECONDS and a little, unless the machine
# stalled it). Machine CPU: all CPU time the machine spent busy (/proc/stat,
# everything but idle and iowait) from the release to the last exit, the
# jobs and whatever else runs included: what the queue costs the other
# users of the machine. Also printed: the same from the forking of the
# processes that wait at the start line (JOBS of them for gpupin and flock,
# CARDS for the loops), which adds the benchmark's own start line. Machine
# CPU counts whatever else the machine does meanwhile; the processes' CPU
# does not: the user and system time of every process a side started (each
# waited for, so its own children's are in it), its forking at the start
# line included. Per job: the loops' processes' CPU over JOBS, and what
# gpupin's and flock's spent beyond the loops', over JOBS: what the queue
# adds to each job, whatever the job costs by itself.
set -euo pipefail
job_start=main_ms # the start line's field that says when a job began
root=$(cd "$(dirname "$0")/.." && pwd)
jobs=${1:-64} seconds=${2:-1} pairs=${3:-3} cards=${4:-8} from=${5:-main} job=${6:-c}
export GPUPIN_BIN_DIR=${GPUPIN_BIN_DIR:-$root/build/release/bin} GPUPIN_SOURCE_DIR=$root
source "$root/tests/e2e/lib.sh"
source "$root/bench/provenance.sh"
provenance bench/makespan.sh "$jobs" "$seconds" "$pairs" "$cards" "$from" "$job"
((jobs % cards == 0)) || fail "JOBS must be a multiple of $cards"
[[ $from == main || $from == submit ]] || fail "FROM is main or submit"
case $job in
  c) job_prefix=() ;;
  python)
    command -v python3 >/dev/null || fail "JOB python needs python3"
    job_prefix=(python3 -c 'import os, sys; os.execv(sys.argv[1], sys.argv[1:])')
    ;;
  *) fail "JOB is c or python" ;;
esac
case $cards in
  8) export GPUPIN_SIM_SCENARIO="$EXAMPLES/dgx-h100.json" ;;
  4) export GPUPIN_SIM_SCENARIO="$EXAMPLES/server-4gpu.json" ;;
  *) fail "CARDS is 4 or 8" ;;
esac
ideal_ms=$(awk -v j="$jobs" -v c="$cards" -v s="$seconds" 'BEGIN { print j / c * s * 1000 }')

gpupin_job() {
  exec "$GPUPIN" --simulate "$GPUPIN_SIM_SCENARIO" run --wait -- \
    "${job_prefix[@]}" "$WORKLOAD" --seconds "$seconds" --log "$log" 2>/dev/null
}

# The least a queue of one waiting process per job can cost: each job
# its own `flock` (util-linux, a small C program) on a lock file per card,
# its card fixed in advance (job i on card i mod CARDS): nothing looked at,
# nothing chosen, no record written.
flock_job() {
  local card=$((($1 - 1) % cards))
  CUDA_VISIBLE_DEVICES=$card exec flock "$TEST_TMP/card$card.lock" \
    "${job_prefix[@]}" "$WORKLOAD" --seconds "$seconds" --log "$log"
}

card_loop() {
  local card=$(($1 - 1)) k
  for ((k = 0; k < jobs / cards; k++)); do
    CUDA_VISIBLE_DEVICES=$card "${job_prefix[@]}" "$WORKLOAD" --seconds "$seconds" --log "$log"
  done
}

# busy_ms: CPU time the whole machine has spent busy since boot, in ms.
ticks_per_s=$(getconf CLK_TCK)
busy_ms() { awk -v hz="$ticks_per_s" '$1 == "cpu" { print ($2 + $3 + $4 + $7 + $8 + $9) * 1000 / hz }' /proc/stat; }

# children_cpu_ms: sets CHILDREN_MS to the CPU time (user and system, ms)
# of this shell's children that have ended and been waited for, and of
# theirs: every process a side starts, waited for to the last, and nothing
# else that runs on the machine. `times` runs in this shell (in a $(...)
# it would count the subshell's children), its output read without a fork.
children_cpu_ms() {
  local line
  times >"$TEST_TMP/times"
  { read -r _ && read -r line; } <"$TEST_TMP/times"
  # The decimal point is the locale's.
  [[ $line =~ ^([0-9]+)m([0-9]+)[.,]([0-9]+)s\ ([0-9]+)m([0-9]+)[.,]([0-9]+)s$ ]] || fail "times said: $line"
  local r=("${BASH_REMATCH[@]}")
  CHILDREN_MS=$(((10#${r[1]} + 10#${r[4]}) * 60000 + (10#${r[2]} + 10#${r[5]}) * 1000 + 10#${r[3]} + 10#${r[6]}))
}

busy_at_release() {
  busy_released=$(busy_ms)
  children_cpu_ms
  children_released=$CHILDREN_MS
}
cpu_s_since() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b - a) / 1000 }'; }
# ratio FORMAT A B: A/B, printed with FORMAT.
ratio() { awk -v f="$1" -v a="$2" -v b="$3" 'BEGIN { printf f, a / b }'; }

# measure WHAT BODY COUNT: runs COUNT copies of BODY released at once; prints
# one line for WHAT and sets RATIO, CPU_S (machine CPU from the release),
# CPU_ALL_S (from the forking of the COUNT processes that wait at the start
# line) and TREE_S (the CPU of those processes and all they started, their
# forking included).
measure() {
  local what=$1 body=$2 count=$3 busy_before busy_after
  log="$TEST_TMP/$what.$pair.log"
  busy_before=$(busy_ms)
  start_at_once "$count" "$body" busy_at_release
  wait_all_ok "${STARTED[@]}"
  children_cpu_ms
  busy_after=$(busy_ms)
  CPU_S=$(cpu_s_since "$busy_released" "$busy_after")
  TREE_S=$(awk -v a="$children_released" -v b="$CHILDREN_MS" 'BEGIN { printf "%.3f", (b - a) / 1000 }')
  CPU_ALL_S=$(cpu_s_since "$busy_before" "$busy_after")
  expect_no_overlap "$log"
  [[ $(grep -c '"event":"end"' "$log") == "$jobs" ]] || fail "$what: not every job ended"
  local makespan from_main from_submit handoff first_round first_start
  from_main=$(jq -s -r --arg start "$job_start" '(map(select(.event == "start")[$start]) | min) as $first
    | (map(select(.event == "end").t_ms) | max) - $first' "$log")
  from_submit=$(jq -s -r --argjson released "$RELEASED_MS" \
    'map(select(.event == "end").t_ms) | max - $released' "$log")
  first_start=$(jq -s -r --arg start "$job_start" --argjson released "$RELEASED_MS" '[.[] | select(.event == "start")]
    | group_by(.uuids[0]) | map(min_by(.[$start])[$start] - $released)
    | "first start \(min) ms after release, last card'"'"'s first \(max) ms"' "$log")
  if [[ $from == main ]]; then makespan=$from_main; else makespan=$from_submit; fi
  handoff=$(job_intervals "$log" "$job_start" | sort -k2,2n -k3,3n | awk 'NR > 1 && $2 == card { print $3 - end } { card = $2; end = $4 }' | sort -n |
    awk '{ a[NR] = $1; sum += $1 } END {
      printf "hand-off p50 %d ms, p99 %d ms, mean %.1f ms", a[int(NR * 0.5 + 0.999)], a[int(NR * 0.99 + 0.999)], sum / NR }')
  # The longest job: a makespan far off with short hand-offs is a job that
  # itself ran long (the machine stalled it), not the queue.
  longest=$(job_intervals "$log" "$job_start" | awk '$4 - $3 > max { max = $4 - $3 } END { print max }')
  first_round=$(jq -s -r --arg start "$job_start" '[.[] | select(.event == "start")] | group_by(.uuids[0])
    | map(min_by(.[$start])[$start]) | max - min' "$log")
  RATIO=$(ratio %.3f "$makespan" "$ideal_ms")
  printf '%-7s makespan %d ms from %s = %s× ideal (from main %d ms, from release %d ms); %s; first round spread %d ms; %s; longest job %d ms; machine CPU %s s from release (%s s from the forking); its processes %s s\n' \
    "$what" "$makespan" "$from" "$RATIO" "$from_main" "$from_submit" "$first_start" "$first_round" "$handoff" "$longest" "$CPU_S" "$CPU_ALL_S" "$TREE_S"
}

gpupin_ratios=() flock_ratios=() loop_ratios=() relative=() flock_relative=()
gpupin_cpu=() flock_cpu=() loop_cpu=() cpu_relative=() flock_cpu_relative=() cpu_all_relative=()
tree_relative=() flock_tree_relative=() loop_job_ms=() gpupin_added_ms=() flock_added_ms=()
# per_job_ms A [B]: A less B (seconds of CPU), in ms per job.
per_job_ms() { awk -v a="$1" -v b="${2:-0}" -v n="$jobs" 'BEGIN { printf "%.1f", (a - b) * 1000 / n }'; }
for ((pair = 1; pair <= pairs; pair++)); do
  measure gpupin gpupin_job "$jobs"
  g=$RATIO g_cpu=$CPU_S g_cpu_all=$CPU_ALL_S g_tree=$TREE_S
  measure flock flock_job "$jobs"
  f=$RATIO f_cpu=$CPU_S f_tree=$TREE_S
  measure loops card_loop "$cards"
  gpupin_ratios+=("$g") flock_ratios+=("$f") loop_ratios+=("$RATIO")
  gpupin_cpu+=("$g_cpu") flock_cpu+=("$f_cpu") loop_cpu+=("$CPU_S")
  relative+=("$(ratio %.3f "$g" "$RATIO")")
  flock_relative+=("$(ratio %.3f "$f" "$RATIO")")
  cpu_relative+=("$(ratio %.2f "$g_cpu" "$CPU_S")")
  flock_cpu_relative+=("$(ratio %.2f "$f_cpu" "$CPU_S")")
  cpu_all_relative+=("$(ratio %.2f "$g_cpu_all" "$CPU_ALL_S")")
  tree_relative+=("$(ratio %.2f "$g_tree" "$TREE_S")")
  flock_tree_relative+=("$(ratio %.2f "$f_tree" "$TREE_S")")
  loop_job_ms+=("$(per_job_ms "$TREE_S")")
  gpupin_added_ms+=("$(per_job_ms "$g_tree" "$TREE_S")")
  flock_added_ms+=("$(per_job_ms "$f_tree" "$TREE_S")")
done

# spread UNIT VALUE...: "median UNIT (min-max)"
spread() {
  local unit=$1
  shift
  printf '%s\n' "$@" | sort -n | awk -v u="$unit" '{ a[NR] = $1 } END { printf "%s%s  (%s-%s)", a[int((NR + 1) / 2)], u, a[1], a[NR] }'
}
echo "over $pairs pairs (median, range); machine CPU from the release:"
echo "  gpupin       $(spread × "${gpupin_ratios[@]}") of ideal, machine CPU $(spread ' s' "${gpupin_cpu[@]}")"
echo "  flock        $(spread × "${flock_ratios[@]}") of ideal, machine CPU $(spread ' s' "${flock_cpu[@]}")"
echo "  loops        $(spread × "${loop_ratios[@]}") of ideal, machine CPU $(spread ' s' "${loop_cpu[@]}")"
echo "  gpupin/loops $(spread × "${relative[@]}") makespan, $(spread × "${cpu_relative[@]}") machine CPU ($(spread × "${cpu_all_relative[@]}") from the forking)"
echo "  flock/loops  $(spread × "${flock_relative[@]}") makespan, $(spread × "${flock_cpu_relative[@]}") machine CPU"
echo "  processes' CPU: gpupin/loops $(spread × "${tree_relative[@]}"), flock/loops $(spread × "${flock_tree_relative[@]}")"
echo "processes' CPU per job ($job jobs; gpupin's and flock's beyond the loops'):"
echo "  loops        $(spread ' ms' "${loop_job_ms[@]}")"
echo "  gpupin       +$(spread ' ms' "${gpupin_added_ms[@]}")"
echo "  flock        +$(spread ' ms' "${flock_added_ms[@]}")"
