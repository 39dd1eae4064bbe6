#!/usr/bin/env bash
# 24 `gpupin run --wait` jobs released at one instant on 4 free cards, and,
# while they queue and run, SIGKILL every 120 ms: in turn a random gpupin
# (waiting, or standing in for a running job) and a random running job, a
# kind still short of 2 targets taking the turn of one that has them; at
# least 12 kills and on until each kind has hit 2 targets (at most 48).
# Whatever is killed, no two jobs ever share a card; a job whose gpupin was
# killed after it started keeps its card and runs to its end (the lease is
# the job's, not gpupin's); every job whose gpupin and process survived runs
# to its end and exits 0; a killed job frees its card for the next; and the
# queue drains to nothing. GPUPIN_CHAOS_SEED replays a run's choices.
source "$(dirname "$0")/lib.sh"

# The jobs last longer where everything is slower (sanitizers), so that the
# queue does not drain before the kill rounds have found their targets.
jobs=24 seconds=$(awk -v f="$TIME_FACTOR" 'BEGIN { print 0.8 * f }') kills=12 most_kills=48
seed=${GPUPIN_CHAOS_SEED:-$(($(date +%s%N) % 32768))}
echo "seed $seed (GPUPIN_CHAOS_SEED=$seed replays these choices)"
RANDOM=$seed
scenario="$EXAMPLES/server-4gpu.json"
log="$TEST_TMP/workload.log"
job() {
  exec "$GPUPIN" --simulate "$scenario" run --wait -- \
    "$WORKLOAD" --seconds "$seconds" --name "j$1" --log "$log" 2>"$TEST_TMP/gpupin.$1.err"
}

names_with() { [[ -f "$log" ]] && jq -r --arg e "$1" 'select(.event == $e) | .name' "$log" | sort; }
# running_jobs: "NAME PID" of each job that has started and not ended.
running_jobs() {
  join -v 1 <(jq -r 'select(.event == "start") | "\(.name) \(.pid)"' "$log" | sort) <(names_with end)
}
# gone_or_zombie PID (gpupin and the workload have no space in their names)
gone_or_zombie() {
  local state=
  { read -r _ _ state _ <"/proc/$1/stat"; } 2>/dev/null || return 0
  [[ $state == Z ]]
}

# pick ITEM...: one of the items at random, in PICKED.
pick() { PICKED=${*:RANDOM % $# + 1:1}; }

# A kill that lands as its target ends by itself leaves it ambiguous (its
# end line written, or gpupin already releasing): such a job may exit 0.
declare -A gpupin_killed=() job_killed=() ambiguous=()
killed_waiting=() killed_running=()
enough_targets() { ((${#killed_waiting[@]} >= 2 && ${#killed_running[@]} >= 2 && ${#job_killed[@]} >= 2)); }
short_of() {
  case $1 in
    0) ((${#killed_waiting[@]} < 2)) ;;
    1) ((${#killed_running[@]} < 2)) ;;
    2) ((${#job_killed[@]} < 2)) ;;
  esac
}

# Each kill_* returns 1 when it finds no target of its kind.
# kill_gpupin_of KILLED_LIST JOB...: SIGKILLs the gpupin of one of the jobs.
kill_gpupin_of() {
  local -n killed_list=$1
  shift
  (($#)) || return 1
  pick "$@"
  kill -9 "${STARTED[PICKED - 1]}" 2>/dev/null || true
  gpupin_killed[$PICKED]=1 ambiguous[$PICKED]=1
  killed_list+=("$PICKED")
}
kill_waiting_gpupin() { # the gpupin of a job that has not started: a waiter
  local waiting=() i
  for ((i = 1; i <= jobs; i++)); do
    [[ -n "${gpupin_killed[$i]:-}" ]] || grep -q "\"name\":\"j$i\"" "$log" 2>/dev/null ||
      waiting+=("$i")
  done
  kill_gpupin_of killed_waiting "${waiting[@]}"
}
kill_running_gpupin() { # the gpupin of a running job: the job keeps its lease
  local candidates=() line i
  for line in "${running[@]}"; do
    i=${line%% *} i=${i#j}
    [[ -n "${gpupin_killed[$i]:-}" ]] || candidates+=("$i")
  done
  kill_gpupin_of killed_running "${candidates[@]}"
}
kill_running_job() {
  local name pid killed_at
  ((${#running[@]})) || return 1
  pick "${running[@]}"
  read -r name pid <<<"$PICKED"
  killed_at=$(now_ms)
  kill -9 "$pid" 2>/dev/null || true # it may have ended since
  wait_until 5 "killed job $name ($pid) gone" gone_or_zombie "$pid"
  if grep -q "\"event\":\"end\",\"name\":\"$name\"" "$log"; then
    ambiguous[${name#j}]=1
  else
    # Its end, for the overlap check: when the kill was sent. A job on
    # its card that started before then started beside a live job.
    echo "{\"event\":\"end\",\"name\":\"$name\",\"pid\":$pid,\"t_ms\":$killed_at,\"killed\":true}" >>"$log"
    job_killed[${name#j}]=1
  fi
}
kinds=(kill_waiting_gpupin kill_running_gpupin kill_running_job)

start_at_once "$jobs" job
sleep 0.15
for ((k = 0; k < most_kills; k++)); do
  ((k >= kills)) && enough_targets && break
  running=()
  [[ -f "$log" ]] && mapfile -t running < <(running_jobs)
  # The kinds in turn from this round's, those still short of two targets
  # first: on a loaded machine a round is slow and the queue may drain
  # before a strict rotation comes round to the kind that is short.
  order=()
  for ((d = 0; d < 3; d++)); do short_of $(((k + d) % 3)) && order+=($(((k + d) % 3))); done
  for ((d = 0; d < 3; d++)); do short_of $(((k + d) % 3)) || order+=($(((k + d) % 3))); done
  for kind in "${order[@]}"; do "${kinds[kind]}" && break; done
  sleep 0.12
done
echo "killed the gpupin of waiting jobs ${killed_waiting[*]}, of running jobs ${killed_running[*]}; killed jobs ${!job_killed[*]}"
enough_targets || fail "the kills found too few targets"

for ((i = 1; i <= jobs; i++)); do
  status=0
  wait "${STARTED[i - 1]}" || status=$?
  if [[ -n "${job_killed[$i]:-}" ]]; then
    expect_eq "$status" 137 "exit status of j$i, killed"
  elif [[ -n "${ambiguous[$i]:-}" ]]; then
    [[ $status == 0 || $status == 137 ]] || fail "exit status of j$i: expected 0 or 137, got $status"
  else
    expect_eq "$status" 0 "exit status of j$i"
  fi
done
# Jobs whose gpupin was killed after they started outlive it.
wait_until 20 "every started job ended" eval '[[ "$(names_with start)" == "$(names_with end)" ]]'

expect_no_overlap "$log"
started=$(names_with start | tr '\n' ' ')
for ((i = 1; i <= jobs; i++)); do
  [[ -n "${job_killed[$i]:-}" ]] && continue
  ran_to_end=$(jq -r --arg n "j$i" 'select(.event == "end" and .name == $n and (.killed | not)) | .name' "$log")
  if [[ -z "${gpupin_killed[$i]:-}" ]]; then
    expect_eq "$ran_to_end" "j$i" "j$i ran to its end"
  elif [[ " $started" == *" j$i "* ]]; then
    expect_eq "$ran_to_end" "j$i" "j$i, started before its gpupin was killed, ran to its end"
  fi
done

run_status "$GPUPIN" --simulate "$scenario" --json leases
expect_eq "$STATUS" 0 "leases"
expect_eq "$(jq -c '[.leases, .queue]' <<<"$OUT")" "[[],[]]" "no live lease and nobody waiting at the end"
run_status "$GPUPIN" --simulate "$scenario" run -n 4 -- true
expect_eq "$STATUS" 0 "all 4 cards free again"
echo PASS
