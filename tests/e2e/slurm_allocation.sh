#!/usr/bin/env bash
# gpupin inside a real Slurm: this test starts munged, slurmctld and slurmd
# (a single node whose GPUs are the simulated server's, as fake device
# nodes, configured by `gpupin slurm gres`) and checks that slurmd takes
# that gres.conf (Cores= in Slurm's core numbers on a hyperthreaded node),
# that Slurm's GPU numbers are NVML's although the /dev/nvidiaN minor numbers
# are not in PCI bus order, that gpupin, run under srun, chooses only among
# the cards Slurm allocated, that two Slurm jobs using gpupin never share a
# card, and that doctor is content.
# Needs root and Debian's slurmctld, slurmd, slurm-client and munge
# (scripts/setup installs them); without them it says "skipped".
source "$(dirname "$0")/lib.sh"

PATH=$PATH:/usr/sbin:/sbin # the daemons live there; a non-login root may lack it
for tool in munged mungekey slurmctld slurmd srun sinfo squeue scancel setpriv; do
  command -v "$tool" >/dev/null || {
    echo "skipped: $tool is not installed (scripts/setup installs Slurm)"
    exit 0
  }
done
[[ $(id -u) == 0 ]] || {
  echo "skipped: slurmd and mknod need root"
  exit 0
}

# 4 GPUs on a 2 x 16-core x 2-thread node, minors 2,3,0,1 in PCI bus order.
scenario="$GPUPIN_SOURCE_DIR/tests/e2e/fixtures/server-4gpu-ht-minors.json"
SIM=(--simulate "$scenario")
export GPUPIN_SIM_SCENARIO=$scenario
log="$TEST_TMP/workload.log"
# Never talk to a Slurm this test did not start.
unset $(compgen -v SLURM_) || true

W="$TEST_TMP/slurm"
mkdir -p "$W"/{etc,state,spool,log,munge,dev}
# munged serves its socket only if every directory above it is o+x.
chmod 711 "$TEST_TMP" "$W" "$W/munge"
export SLURM_CONF="$W/etc/slurm.conf"
DAEMON_PIDS=()

# Everything this test's Slurm runs (daemons, srun, slurmstepd, job
# tasks) was started with SLURM_CONF in its environment, a path no other
# Slurm uses. This shell is not listed: it exported SLURM_CONF after it started.
slurm_processes() {
  (
    unset SLURM_CONF # so that grep and cut do not list themselves
    { grep -lsxz "SLURM_CONF=$W/etc/slurm.conf" /proc/[0-9]*/environ || true; } | cut -d/ -f3
  )
}

# slurm_processes less the daemons and their children (slurmctld's slurmscriptd).
slurm_work() {
  local pid ppid
  for pid in $(slurm_processes); do
    ppid=$(sed 's/.*) //' "/proc/$pid/stat" 2>/dev/null | cut -d' ' -f2) || continue
    [[ " ${DAEMON_PIDS[*]} " == *" $pid "* || " ${DAEMON_PIDS[*]} " == *" $ppid "* ]] || echo "$pid"
  done
}

# Cancels the jobs, lets their srun and slurmstepd end, stops the daemons,
# and kills whatever is left: no process outlives the test.
stop_slurm() {
  local pid ids work
  if ((${#DAEMON_PIDS[@]})); then
    ids=$(timeout 5 squeue -h -o %i 2>/dev/null) || true
    if [[ -n "$ids" ]]; then timeout 5 scancel $ids 2>/dev/null || true; fi
    for _ in $(seq 50); do
      work=$(slurm_work)
      [[ -n "$work" ]] || break
      sleep 0.1
    done
    if [[ -n "$work" ]]; then kill -TERM $work 2>/dev/null || true; fi
  fi
  for pid in "${DAEMON_PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${DAEMON_PIDS[@]}"; do
    for _ in $(seq 50); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  work=$(slurm_processes)
  if [[ -n "$work" ]]; then kill -KILL $work 2>/dev/null || true; fi
}
on_exit() {
  local status=$?
  set +e
  trap '' TERM INT # a second signal must not cut the cleanup short
  ((status == 0)) || tail -n 12 "$W"/log/* >&2 2>/dev/null || true
  stop_slurm
  cleanup
}
trap on_exit EXIT
trap 'exit 143' TERM
trap 'exit 130' INT

# start_daemon NAME CMD...: runs CMD in the background, logging to
# $W/log/NAME.out. It is killed should this shell die without running its
# EXIT trap (a SIGKILL from a ctest timeout).
start_daemon() {
  local name=$1
  shift
  setpriv --pdeathsig KILL -- "$@" >"$W/log/$name.out" 2>&1 &
  DAEMON_PIDS+=($!)
}

free_port() {
  local port
  for _ in $(seq 100); do
    port=$((20000 + RANDOM % 20000))
    if ! grep -qi ":$(printf '%04X' "$port") " /proc/net/tcp /proc/net/tcp6 2>/dev/null &&
      [[ " ${*} " != *" $port "* ]]; then
      echo "$port"
      return
    fi
  done
  fail "no free TCP port"
}
ctld_port=$(free_port)
slurmd_port=$(free_port "$ctld_port")

# The node's gres.conf is gpupin's own output for the simulated server; only
# File= moves from /dev/nvidiaN to fake device nodes in $W/dev with the same
# major:minor (195:N), because Slurm needs a character device there and /dev
# is not ours to change.
# The simulated node's CPUs, for gres.conf's Cores= (this VM has others).
make_sysfs "$TEST_TMP/sys" 2 16 2
GPUPIN_SYSFS_ROOT="$TEST_TMP/sys" run_status "$GPUPIN" "${SIM[@]}" slurm gres
expect_eq "$STATUS" 0 "slurm gres"
echo "gres.conf:"$'\n'"$OUT"
# Line k is NVML's GPU k (PCI bus order), whatever its minor number.
expect_eq "$(grep -o 'File=/dev/nvidia[0-9]* Cores=[0-9-]*  # NVML index [0-9]' <<<"$OUT" | tr '\n' ';')" \
  "File=/dev/nvidia2 Cores=0-15  # NVML index 0;File=/dev/nvidia3 Cores=0-15  # NVML index 1;File=/dev/nvidia0 Cores=16-31  # NVML index 2;File=/dev/nvidia1 Cores=16-31  # NVML index 3;" \
  "gres.conf lines"
sed "s|File=/dev/nvidia|File=$W/dev/nvidia|" <<<"$OUT" >"$W/etc/gres.conf"
for minor in $(grep -o 'File=/dev/nvidia[0-9]*' <<<"$OUT" | grep -o '[0-9]*$'); do
  mknod "$W/dev/nvidia$minor" c 195 "$minor"
done
# slurm.conf takes the node line gpupin suggests ("#   NodeName=host Gres=…").
node_line=$(sed -n 's/^#   NodeName=//p' <<<"$OUT")
node=${node_line%% *}
gres=${node_line#* Gres=}
[[ -n "$node" && "$gres" == gpu:* ]] || fail "no slurm.conf node line in: $OUT"

# One node with the simulated server's 2 x 16 cores x 2 threads (the gres
# Cores= refer to them), trusted over the real hardware; root everywhere; no
# cgroups, so jobs see Slurm's global GPU indices.
cat >"$SLURM_CONF" <<EOF
ClusterName=gpupin-e2e
SlurmctldHost=localhost
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$W/munge/socket
StateSaveLocation=$W/state
SlurmdSpoolDir=$W/spool
SlurmctldPidFile=$W/state/slurmctld.pid
SlurmdPidFile=$W/spool/slurmd.pid
SlurmctldLogFile=$W/log/slurmctld.log
SlurmdLogFile=$W/log/slurmd.log
MailProg=/bin/true
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
ReturnToService=2
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
GresTypes=gpu
NodeName=$node NodeAddr=127.0.0.1 CPUs=64 Boards=1 SocketsPerBoard=2 CoresPerSocket=16 ThreadsPerCore=2 RealMemory=1000 Gres=$gres State=UNKNOWN
PartitionName=debug Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF

mungekey --create --keyfile="$W/munge/key"
start_daemon munged munged -F --socket="$W/munge/socket" --key-file="$W/munge/key" \
  --pid-file="$W/munge/pid" --log-file="$W/log/munged.log" --seed-file="$W/munge/seed"
until munge -S "$W/munge/socket" -n 2>/dev/null | unmunge -S "$W/munge/socket" >/dev/null 2>&1; do
  kill -0 "${DAEMON_PIDS[0]}" 2>/dev/null || fail "munged exited: $(cat "$W/log/munged.out")"
  sleep 0.02
done
start_daemon slurmctld slurmctld -D -c -i -f "$SLURM_CONF"
start_daemon slurmd slurmd -D -N "$node" -f "$SLURM_CONF"
node_idle() { [[ "$(timeout 5 sinfo -h -n "$node" -o %T 2>/dev/null)" == idle ]]; }
wait_until 20 "node $node idle" node_idle

# slurmd took gpupin's gres.conf: the node offers the 4 GPUs, bound to both
# sockets by their Cores=, and no line was refused.
expect_eq "$(timeout 5 sinfo -h -n "$node" -O Gres:60 | tr -d ' ')" "$gres(S:0-1)" "the node's gres in sinfo"
grep -q 'error:.*gres' "$W/log/slurmd.log" && fail "slurmd refused gres.conf: $(grep 'error:.*gres' "$W/log/slurmd.log")"

# in_job N CMD...: CMD as one task of an srun with N GPUs; never waits for resources.
in_job() {
  local n=$1
  shift
  exec timeout 30 srun --immediate=5 --gres=gpu:"$n" "$@"
}

# card_of NAME: the NVML indices of the workload NAME, from its start line.
card_of() {
  jq -r --arg n "$1" 'select(.event == "start" and .name == $n) | .nvml_indices | map(tostring) | join(",")' "$log"
}

# start_foreign NAME: workload NAME, started outside gpupin and Slurm, uses
# 4G of GPU 2; its pid lands in FOREIGN.
start_foreign() {
  CUDA_VISIBLE_DEVICES=2 "$WORKLOAD" --mem 4G --name "$1" --log "$log" &
  FOREIGN=$!
  wait_for_line "$log" "\"name\":\"$1\""
}

# expect_run_lands NAME CARD WHAT: gpupin run in a job of 2 GPUs starts
# workload NAME on CARD.
expect_run_lands() {
  run_status in_job 2 "$GPUPIN" "${SIM[@]}" run -- "$WORKLOAD" --seconds 0 --name "$1" --log "$log"
  expect_eq "$STATUS" 0 "$3: $ERR"
  expect_eq "$(card_of "$1")" "$2" "$3"
}

# A job that holds Slurm's GPUs 0 and 1 without touching them: gpupin sees
# them free, so a gpupin that ignored the allocation would choose GPU 0.
# Slurm numbers GPUs by their gres.conf line, not by the digits of File=
# (/dev/nvidia2 and 3 here): its 0 and 1 are NVML's 0 and 1.
(in_job 2 bash -c 'echo "$SLURM_JOB_ID $CUDA_VISIBLE_DEVICES" >"$0"; exec sleep 30' "$TEST_TMP/holder" 2>/dev/null) &
holder=$!
wait_for_line "$TEST_TMP/holder" '.'
read -r holder_job holder_gpus <"$TEST_TMP/holder"
expect_eq "$holder_gpus" "0,1" "the holder's allocation"

run_status in_job 2 bash -c 'echo "$CUDA_VISIBLE_DEVICES $("$0" "$@")"' "$GPUPIN" "${SIM[@]}" pick
expect_eq "$STATUS" 0 "pick in a job: $ERR"
expect_eq "$OUT" "2,3 2" "CUDA_VISIBLE_DEVICES and pick in a job"

# env's reservation lives in a state directory of its own, so that it holds
# no card for the checks below.
GPUPIN_STATE_DIR="$TEST_TMP/env-state" run_status in_job 2 "$GPUPIN" "${SIM[@]}" env
expect_eq "$STATUS" 0 "env in a job: $ERR"
expect_contains "$OUT" "export CUDA_VISIBLE_DEVICES='2'" "env in a job"

expect_run_lands inside 2 "run in a job"

# A foreign process on allocated GPU 2: the other allocated card, 3.
start_foreign foreign
run_status in_job 2 "$GPUPIN" "${SIM[@]}" pick
expect_eq "$STATUS" 0 "pick beside a foreign process: $ERR"
expect_eq "$OUT" "3" "pick beside a foreign process on GPU 2"
kill "$FOREIGN"
wait "$FOREIGN" || true

# A gpupin job outside Slurm holds GPU 3: run lands on 2.
"$GPUPIN" "${SIM[@]}" run --only 3 -- "$WORKLOAD" --name leased --log "$log" 2>"$TEST_TMP/leased.err" &
leased=$!
wait_for_line "$log" '"name":"leased"'
expect_run_lands beside_lease 2 "run beside a lease on GPU 3"

# Both allocated cards taken: no GPU, although 0 and 1 are free outside the allocation.
start_foreign foreign2
run_status in_job 2 "$GPUPIN" "${SIM[@]}" pick --explain
echo "pick --explain with both allocated cards taken:"$'\n'"$ERR"
expect_eq "$STATUS" 3 "pick with both allocated cards taken"
expect_eq "$OUT" "" "pick's stdout when nothing fits"
reason=$(grep '^gpupin: ' <<<"$ERR")
expect_contains "$reason" "no GPU available within CUDA_VISIBLE_DEVICES=2,3: GPU 2 busy: 4G used" "why GPU 2 was refused"
expect_contains "$reason" "GPU 3 leased by root" "why GPU 3 was refused"
for gpu in 0 1; do
  expect_contains "$(grep -E "^ +$gpu " <<<"$ERR")" "not in CUDA_VISIBLE_DEVICES" "why GPU $gpu was passed over"
done

# doctor in a step whose CUDA_VISIBLE_DEVICES are Slurm's global ids 2,3.
run_status in_job 2 "$GPUPIN" "${SIM[@]}" doctor
echo "doctor in a job: $(grep -E '^slurm ' <<<"$OUT")"
grep -Eq '^slurm +ok +Slurm job [0-9]+: CUDA_VISIBLE_DEVICES="2,3", SLURM_STEP_GPUS="2,3"' <<<"$OUT" ||
  fail "doctor's slurm check in a job: $OUT"
kill "$FOREIGN" "$leased"
scancel "$holder_job"
wait "$FOREIGN" "$leased" "$holder" 2>/dev/null || true

# Two Slurm jobs of 2 GPUs at once, each running two gpupin tasks of one GPU:
# every card is used by exactly one workload, inside its own job's allocation.
: >"$log"
two_gpupin_tasks() {
  exec timeout 30 srun --immediate=5 --gres=gpu:2 -n 2 bash -c \
    'exec "$0" "$@" --name "job$SLURM_JOB_ID-$CUDA_VISIBLE_DEVICES"' \
    "$GPUPIN" "${SIM[@]}" run -- "$WORKLOAD" --seconds 0.5 --log "$log" 2>"$TEST_TMP/job$1.err"
}
start_at_once 2 two_gpupin_tasks
wait_all_ok "${STARTED[@]}"
expect_no_overlap "$log"
placed=$(jq -r 'select(.event == "start") | "\(.name) GPU \(.nvml_indices | map(tostring) | join(","))"' "$log" | sort)
echo "workloads (job-allocation GPU card):"$'\n'"$placed"
expect_eq "$(awk '{ print $3 }' <<<"$placed" | sort | tr '\n' ' ')" "0 1 2 3 " "cards used by the 4 workloads"
jq -e -s 'map(select(.event == "start") | (.name | sub("^job[0-9]+-"; "") | split(",")) as $allocated
  | (.nvml_indices[0] | tostring) as $card | $allocated | index([$card])) | all' "$log" >/dev/null ||
  fail "a workload ran outside its job's allocation: $placed"
echo PASS
