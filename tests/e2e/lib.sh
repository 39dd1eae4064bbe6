# Shared helpers for the end-to-end scripts: each script sources this, runs
# the real gpupin binary against a simulated server, and checks what a user
# would see. A failed check prints what was expected and exits 1.
set -euo pipefail

: "${GPUPIN_BIN_DIR:?run through ctest, or set GPUPIN_BIN_DIR to build/<config>/bin}"
: "${GPUPIN_SOURCE_DIR:?set GPUPIN_SOURCE_DIR to the repository root}"
GPUPIN="$GPUPIN_BIN_DIR/gpupin"
# Multiplies every timing bound: 1 for release builds, more under ASan.
TIME_FACTOR=${GPUPIN_TIME_FACTOR:-1}
WORKLOAD="$GPUPIN_BIN_DIR/gpupin-sim-workload"
EXAMPLES="$GPUPIN_SOURCE_DIR/examples"

TEST_TMP=$(mktemp -d "${TMPDIR:-/tmp}/gpupin-e2e.XXXXXX")
# Every test gets its own state directory and its own live-process registry,
# so tests never see each other's leases or simulated processes.
export GPUPIN_STATE_DIR="$TEST_TMP/state"
export GPUPIN_SIM_LIVE_DIR="$TEST_TMP/live"
# As a machine's state directory is: a command that only reads it refuses
# one that does not exist.
install -d -m 1777 "$GPUPIN_STATE_DIR"
unset CUDA_VISIBLE_DEVICES CUDA_DEVICE_ORDER NVIDIA_VISIBLE_DEVICES SLURM_JOB_GPUS SLURM_STEP_GPUS GPU_DEVICE_ORDINAL
export NO_COLOR=1

# A killed job may still finish the system call it is in (a lease file
# written, a lock taken) after kill returns, so cleanup reaps the jobs before
# removing their directory, and tries again for a process that is not ours.
# Leftovers under $TMPDIR never fail a test whose checks passed.
cleanup() {
  local pids
  pids=$(jobs -p) || true
  if [[ -n "$pids" ]]; then
    kill -9 $pids 2>/dev/null || true
    wait $pids 2>/dev/null || true
  fi
  for _ in 1 2 3; do
    rm -rf "$TEST_TMP" 2>/dev/null && return 0
    sleep 0.2
  done
  echo "note: could not remove $TEST_TMP" >&2
}
trap cleanup EXIT

# fail MESSAGE: the test fails, showing MESSAGE and the end of what each
# process said in $TEST_TMP/*.err.
fail() {
  local err
  echo "FAIL: $*" >&2
  for err in "$TEST_TMP"/*.err; do
    if [[ -s "$err" ]]; then
      echo "--- ${err##*/}:" >&2
      tail -n 5 "$err" >&2
    fi
  done
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

# A start line for many processes: `barrier_wait` blocks a process until
# `barrier_release N` writes one line for each of N of them in a single
# write. The write end stays open, so a process that reaches the barrier late
# still passes it; barrier_ready waits until N processes stand at it.
BARRIER="$TEST_TMP/barrier"
mkfifo "$BARRIER"
mkdir -p "$TEST_TMP/ready"
exec {BARRIER_FD}<>"$BARRIER"
barrier_wait() {
  : >"$TEST_TMP/ready/$BASHPID"
  read -r _ <"$BARRIER"
}
barrier_ready() {
  wait_until 20 "$1 processes at the barrier" files_at_least "$TEST_TMP/ready" "$1"
  sleep 0.05  # from "ready" to blocked in read
}
barrier_release() {
  printf '%*s' "$1" '' | tr ' ' '\n' >&"$BARRIER_FD"
}

# start_at_once N FUNCTION [AT_RELEASE]: runs `FUNCTION 1` ... `FUNCTION N`
# (which should exec the job) as N background processes released at one
# instant. Their pids land in STARTED, the release time in RELEASED_MS.
# AT_RELEASE, a command, runs once all N stand at the start line, just
# before they are released.
start_at_once() {
  local n=$1 body=$2 at_release=${3:-:} i
  STARTED=()
  for i in $(seq "$n"); do
    (
      barrier_wait
      "$body" "$i"
    ) &
    STARTED+=($!)
  done
  barrier_ready "$n"
  "$at_release"
  RELEASED_MS=$(now_ms)
  barrier_release "$n"
}

# wait_all_ok PID...: waits for each; the first that fails fails the test.
wait_all_ok() {
  local pid
  for pid in "$@"; do
    wait "$pid" || fail "a job failed with status $?"
  done
}

# wait_until SECONDS WHAT CMD...: runs CMD every 10 ms until it succeeds;
# fails the test, saying WHAT did not happen, after SECONDS (x TIME_FACTOR).
# For waits on other processes, never for timing claims.
wait_until() {
  local limit=$(($1 * TIME_FACTOR)) what=$2 deadline
  shift 2
  deadline=$((SECONDS + limit))
  until "$@"; do
    ((SECONDS < deadline)) || fail "not within ${limit}s: $what"
    sleep 0.01
  done
}

# lines_at_least FILE PATTERN N: FILE exists and has N lines matching the
# grep -E pattern.
lines_at_least() {
  [[ -f "$1" ]] && (($(grep -cE "$2" "$1") >= $3))
}

# files_at_least DIR N: DIR holds N entries.
files_at_least() { (($(ls "$1" | wc -l) >= $2)); }

# flock_held FILE: another process holds a flock on FILE.
flock_held() { ! flock -n "$1" true; }

# wait_for_line FILE PATTERN [SECONDS]: waits until FILE has a line matching
# the grep -E pattern.
wait_for_line() {
  wait_until "${3:-20}" "a line matching '$2' in $1" lines_at_least "$1" "$2" 1
}

# job_intervals LOG [START_FIELD]: one line "PID CARD START_MS END_MS" per
# workload and card, from gpupin-sim-workload's own log (END_MS empty while it
# runs). START_MS is the start line's t_ms (when it held the card), or
# main_ms (when its process began) if asked.
job_intervals() {
  jq -rs --arg start "${2:-t_ms}" '(map(select(.event == "end")) | map({key: (.pid | tostring), value: .t_ms}) | from_entries) as $ends
    | .[] | select(.event == "start") | .pid as $pid | .[$start] as $t
    | .nvml_indices[] | "\($pid) \(.) \($t) \($ends[$pid | tostring] // "")"' "$1"
}

# expect_no_overlap LOG: no two workloads in LOG ran on one card at once.
expect_no_overlap() {
  local clash
  clash=$(job_intervals "$1" | sort -k2,2n -k3,3n | awk '
    { stop = ($4 == "") ? 1e18 : $4 }
    $2 == card && $3 < end { print "GPU " $2 ": pid " $1 " started at " $3 " while pid " who " ran until " end }
    $2 != card || stop > end { card = $2; end = stop; who = $1 }')
  [[ -z "$clash" ]] || fail "two jobs shared a card: $clash"
}

# event_field LOG EVENT NAME FIELD: FIELD of the workload named NAME's EVENT line.
event_field() {
  jq -r --arg e "$2" --arg n "$3" "select(.event == \$e and .name == \$n) | .$4" "$1" | head -1
}

# expect_start_after_kill VICTIM WAITER NAME LIMIT_MS: SIGKILLs VICTIM; the
# background gpupin WAITER (stderr in $TEST_TMP/NAME.err) must start its
# workload NAME (logging to $log) within LIMIT_MS (x TIME_FACTOR).
expect_start_after_kill() {
  local victim=$1 waiter=$2 name=$3 limit_ms=$(($4 * TIME_FACTOR)) killed_ms started_ms
  killed_ms=$(now_ms)
  kill -9 "$victim"
  wait "$waiter" || fail "$name failed"
  started_ms=$(event_field "$log" start "$name" t_ms)
  echo "$name started $((started_ms - killed_ms))ms after pid $victim was killed"
  ((started_ms - killed_ms < limit_ms)) ||
    fail "$name started $((started_ms - killed_ms))ms after pid $victim was killed (over ${limit_ms}ms)"
}

# expect_passed_over_while_stopped BEHIND PID...: suspends a waiting job
# (SIGSTOP to PID...), then SIGKILLs the workload named holder (in $log).
# The job behind the suspended one (background gpupin BEHIND, workload named
# behind, waiting with --poll 200ms) must start within 2 s (x TIME_FACTOR)
# and succeed; `gpupin leases` must show the suspended job still queued, as
# stopped; then it is continued.
expect_passed_over_while_stopped() {
  local behind=$1 killed_ms started_ms
  shift
  kill -STOP "$@"
  killed_ms=$(now_ms)
  kill -9 "$(event_field "$log" start holder pid)"
  wait_for_line "$log" '"event":"start".*"name":"behind"' 10
  started_ms=$(event_field "$log" start behind t_ms)
  echo "behind started $((started_ms - killed_ms))ms after the holder was killed"
  ((started_ms - killed_ms < 2000 * TIME_FACTOR)) ||
    fail "behind started $((started_ms - killed_ms))ms after the holder was killed (poll: 200ms)"
  wait "$behind" || fail "behind failed"
  expect_eq "$("$GPUPIN" --json leases | jq -r '[.queue[].state] | join(",")')" stopped \
    "the queue (gpupin --json leases) while the job is suspended"
  expect_contains "$("$GPUPIN" leases)" "stopped (passed over)" "gpupin leases while the job is suspended"
  kill -CONT "$@"
}

# expect_ran_after NAME OTHER: the workload NAME (in $log) started only once
# OTHER had ended.
expect_ran_after() {
  local other_end name_start
  other_end=$(event_field "$log" end "$2" t_ms)
  name_start=$(event_field "$log" start "$1" t_ms)
  [[ -n $other_end && -n $name_start ]] || fail "$1 or $2 never ran to its end"
  ((name_start >= other_end)) || fail "$1 started at $name_start, while $2 ran (until $other_end)"
}

# make_sysfs DIR SOCKETS CORES THREADS: a sysfs tree (for GPUPIN_SYSFS_ROOT)
# of SOCKETS x CORES x THREADS CPUs numbered the usual Linux way: the first
# thread of every core, socket by socket, then the second threads in the same
# order, so core c's threads are c, c + SOCKETS*CORES, ...
make_sysfs() {
  local dir=$1/devices/system/cpu sockets=$2 cores=$3 threads=$4
  local total=$((sockets * cores)) cpu core siblings topology
  mkdir -p "$dir"
  echo "0-$((total * threads - 1))" >"$dir/online"
  for ((cpu = 0; cpu < total * threads; cpu++)); do
    core=$((cpu % total))
    siblings=$(seq -s, "$core" "$total" $((total * threads - 1)))
    topology="$dir/cpu$cpu/topology"
    mkdir -p "$topology"
    echo $((core / cores)) >"$topology/physical_package_id"
    echo "$siblings" >"$topology/core_cpus_list"
  done
}

# as_nobody_setup: skips the test unless it runs as root beside a 'nobody'
# user; then lets nobody reach the shared paths inside $TEST_TMP (nothing
# more) and sets AS_NOBODY, the command prefix that runs as nobody.
as_nobody_setup() {
  if [[ $(id -u) != 0 ]] || ! id nobody >/dev/null 2>&1; then
    echo "skipped: needs root and a 'nobody' user"
    exit 0
  fi
  chmod 0711 "$TEST_TMP"
  AS_NOBODY=(setpriv --reuid=nobody --regid="$(id -gn nobody)" --clear-groups)
}

# as_nobody_copies SCENARIO: as_nobody_setup, then points GPUPIN, WORKLOAD
# and SCENARIO at copies that nobody can run and read (the checkout may be
# private: a mktemp -d clone is 0700), and lets both users' simulated
# processes register in the live directory.
as_nobody_copies() {
  as_nobody_setup
  install -d -m 0755 "$TEST_TMP/bin"
  # After house_rules, GPUPIN is the copy already there.
  [[ $GPUPIN == "$TEST_TMP/bin/gpupin" ]] || install -m 0755 "$GPUPIN" "$TEST_TMP/bin"
  install -m 0755 "$GPUPIN_BIN_DIR/libgpupin-sim-nvml.so" "$WORKLOAD" "$TEST_TMP/bin"
  install -m 0644 "$1" "$TEST_TMP/bin/scenario.json"
  install -d -m 1777 "$GPUPIN_SIM_LIVE_DIR"
  GPUPIN="$TEST_TMP/bin/gpupin"
  WORKLOAD="$TEST_TMP/bin/gpupin-sim-workload"
  SCENARIO="$TEST_TMP/bin/scenario.json"
}

# nobody_sleeps SECONDS: starts nobody's `sleep SECONDS` (a live process of
# nobody's for planted records to name); its pid and start time (field 22
# of /proc/PID/stat) land in SLEEPER and SLEEPER_START.
nobody_sleeps() {
  "${AS_NOBODY[@]}" sleep "$1" &
  SLEEPER=$!
  SLEEPER_START=$(awk '{ print $22 }' "/proc/$SLEEPER/stat")
}

# help_entries COMMAND SECTION: the first words of the entries of SECTION
# ("Options", "Subcommands") in the --help of COMMAND ("" for gpupin itself,
# "slurm gres"), one a line.
help_entries() {
  local -a words
  read -ra words <<<"$1"
  "$GPUPIN" "${words[@]}" --help |
    awk -v section="$2:" '$0 == section { inside = 1; next }
      /^[^ ]/ || /^$/ { inside = 0 }
      inside && /^  [^ ]/ { print $1 }'
}

# help_commands: every command and nested command that --help lists, one a
# line ("ls", "slurm", "slurm gres").
help_commands() {
  local command nested
  for command in $(help_entries "" Subcommands); do
    echo "$command"
    for nested in $(help_entries "$command" Subcommands); do echo "$command $nested"; done
  done
}

# help_options COMMAND: every option name in the --help of COMMAND ("" for
# gpupin's own), one a line ("-n", "--count", "--near", "--no-near").
help_options() {
  help_entries "$1" Options | tr ',' '\n' | sed 's/{.*//'
}

# cpu_ticks PID: the user and system CPU time PID has spent, in clock ticks.
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

# expect_attack_costs_waiter_little WAITER WHAT LEAST ARG...: runs the
# Python program on stdin as nobody, with ARG...; it attacks for a while and
# prints how many times it acted and its own CPU seconds. It must have acted
# more than LEAST times, and the gpupin WAITER (a pid) must have spent at
# most a quarter of the attacker's CPU meanwhile.
expect_attack_costs_waiter_little() {
  local waiter=$1 what=$2 least=$3 before after count attacker_seconds waiter_seconds
  shift 3
  before=$(cpu_ticks "$waiter")
  "${AS_NOBODY[@]}" /usr/bin/python3 - "$@" >"$TEST_TMP/attack"
  after=$(cpu_ticks "$waiter")
  read -r count attacker_seconds <"$TEST_TMP/attack"
  waiter_seconds=$(awk -v t=$((after - before)) -v hz="$(getconf CLK_TCK)" 'BEGIN { print t / hz }')
  echo "$count $what; attacker CPU ${attacker_seconds}s, waiter CPU ${waiter_seconds}s"
  ((count > least)) || fail "the attacker made only $count $what"
  awk -v w="$waiter_seconds" -v a="$attacker_seconds" 'BEGIN { exit !(w <= 0.25 * a) }' ||
    fail "the waiter spent ${waiter_seconds}s of CPU against the attacker's ${attacker_seconds}s"
}

# shared_copies SCENARIO: as_nobody_copies, plus a workload log $log that
# both users may write, `scenario` naming the shared copy, and the state
# directory created.
shared_copies() {
  as_nobody_copies "$1"
  scenario=$SCENARIO
  log="$TEST_TMP/workload.log"
  install -m 0666 /dev/null "$log"
  "$GPUPIN" --simulate "$scenario" ls >/dev/null
}

# kill_workloads_at_exit: the workloads that logged a start line to $log
# are killed when the test ends, then cleanup runs: a workload outlives its
# gpupin when cleanup kills that, and ctest would wait for it.
kill_workloads_at_exit() {
  # shellcheck disable=SC2016 # expanded when the trap runs
  trap 'kill -9 $(jq -r "select(.event == \"start\") | .pid" "$log" 2>/dev/null) 2>/dev/null || true; cleanup' EXIT
}

# root_holds_every_card: root's `run --only N` holds each of the 4 cards of
# $SCENARIO with a 120-second workload named holderN, logging to $log;
# returns once all four have started.
root_holds_every_card() {
  local card
  kill_workloads_at_exit
  for card in 0 1 2 3; do
    "$GPUPIN" --simulate "$SCENARIO" run --only "$card" -- "$WORKLOAD" --seconds 120 \
      --name "holder$card" --log "$log" 2>/dev/null &
  done
  wait_until 10 "root's four holders started" lines_at_least "$log" '"event":"start"' 4
}

# house_rules TEXT: the admin's config file for this test holds TEXT
# (printf %b), and GPUPIN becomes gpupin-testing, the test build's copy of
# gpupin that reads the admin's file from GPUPIN_TEST_ADMIN_CONFIG instead of
# /etc/gpupin/config.toml (doc/config.md). The file is root's, as the real
# one must be, so the test is skipped unless it runs as root. The binary and
# the simulated libraries are copied to $TEST_TMP/bin, where a second user
# (as_nobody_setup) can run them too. Call again to change the rules.
house_rules() {
  if [[ $(id -u) != 0 ]]; then
    echo "skipped: the admin's file must be root's; run as root"
    exit 0
  fi
  install -d -m 0755 "$TEST_TMP/etc" "$TEST_TMP/bin"
  printf '%b' "$1" >"$TEST_TMP/etc/config.toml"
  chmod 0644 "$TEST_TMP/etc/config.toml"
  install -m 0755 "$GPUPIN_BIN_DIR/gpupin-testing" "$TEST_TMP/bin/gpupin"
  install -m 0755 "$GPUPIN_BIN_DIR"/libgpupin-sim-*.so "$TEST_TMP/bin"
  export GPUPIN_TEST_ADMIN_CONFIG="$TEST_TMP/etc/config.toml"
  GPUPIN="$TEST_TMP/bin/gpupin"
}
