# doc/json.md lists every key of every --json output: each command runs
# with --json on an example server, with a lease, a queued job, a leftover
# process and house rules in place so that its lists are not empty, and
# every key path it prints (`gpus[].memory.total_bytes`) must appear, in
# backquotes, in the section of doc/json.md that documents that output;
# and no key breaks its rules of naming.
source "$(dirname "$0")/lib.sh"
export PATH="$GPUPIN_SOURCE_DIR/tests/e2e/fake-docker:$PATH"
export FAKE_DOCKER_STATE="$TEST_TMP/docker"
doc="$GPUPIN_SOURCE_DIR/doc/json.md"
SIM=(--simulate "$EXAMPLES/server-4gpu.json")

# key_paths: the path of every key in the JSON documents on stdin, array
# elements as [], one a line.
key_paths() {
  jq -r 'paths | select(.[-1] | type == "string")
    | map(if type == "number" then "[]" else "." + . end) | join("")' |
    sed 's/^\.//' | sort -u
}
# section HEADING: the text of doc/json.md under "## HEADING", up to the next "## ".
section() {
  awk -v heading="## $1" '$0 == heading { inside = 1; next } /^## / { inside = 0 } inside' "$doc"
}
missing=()
misnamed=()
checked=0
# documented HEADING WHAT: every key path of the JSON on stdin (WHAT printed
# it) is in the section HEADING.
documented() {
  local text paths path
  text=$(section "$1")
  [[ -n $text ]] || fail "doc/json.md has no section '## $1'"
  paths=$(key_paths)
  [[ -n $paths ]] || fail "$2 printed no JSON"
  for path in $paths; do
    checked=$((checked + 1))
    [[ $text == *"\`$path\`"* ]] || missing+=("$path (of $2) under '## $1'")
    # One name for one thing (doc/json.md): a bare `id` says not whose, and
    # `index` is only a GPU's or MIG device's own, in its entry of a list.
    case $path in
      id | *.id) misnamed+=("$path (of $2): a bare id; name it lease_id, ticket_id, ...") ;;
      "gpus[].index" | "gpus[].mig.devices[].index") ;;
      index | *.index) misnamed+=("$path (of $2): a GPU named from elsewhere is gpu_index") ;;
    esac
  done
}
run_json() { # ARGS...: gpupin --json ARGS, its stdout in OUT
  run_status "$GPUPIN" "${SIM[@]}" --json "$@"
  [[ $STATUS == 0 ]] || fail "gpupin --json $* exited $STATUS: $ERR"
}

# A job on GPU 0, and a job on GPU 1 whose own process is killed, so that
# its worker is left over.
"$GPUPIN" "${SIM[@]}" -q run --only 0 -- "$WORKLOAD" --seconds 60 >/dev/null 2>"$TEST_TMP/job.err" &
"$GPUPIN" "${SIM[@]}" -q run --only 1 -- bash -c "\"$WORKLOAD\" --seconds 60 & wait" \
  >/dev/null 2>"$TEST_TMP/parent.err" &
on_gpu() { [[ $("$GPUPIN" "${SIM[@]}" --json ls | jq ".gpus[$1].processes | length") == 1 ]]; }
wait_until 20 "the job on GPU 0" on_gpu 0
wait_until 20 "the worker on GPU 1" on_gpu 1
job=$("$GPUPIN" "${SIM[@]}" --json ls | jq '.gpus[0].processes[0].pid')
worker=$("$GPUPIN" "${SIM[@]}" --json ls | jq '.gpus[1].processes[0].pid')
trap 'kill -9 "$job" "$worker" 2>/dev/null || true; cleanup' EXIT
kill -KILL "$(awk '{print $4}' "/proc/$worker/stat")"
left_over() { [[ $("$GPUPIN" "${SIM[@]}" --json ps --leftovers | jq '.processes | length') == 1 ]]; }
wait_until 20 "the worker to be left over" left_over
run_json ls --all
documented '`gpupin --json ls`' "ls --all" <<<"$OUT"
OUT=$("$GPUPIN" --simulate "$EXAMPLES/a100-mig.json" --json ls --all)
documented '`gpupin --json ls`' "ls --all of MIG devices" <<<"$OUT"
run_json ps --devfiles
documented '`gpupin --json ps`' "ps" <<<"$OUT"
run_json ps --leftovers --kill --dry-run
expect_eq "$(jq -c '[.processes[].pid]' <<<"$OUT")" "[$worker]" "the leftover worker"
documented '`gpupin --json ps --leftovers --kill`' "ps --leftovers --kill" <<<"$OUT"

choice='`pick`, `env`, `docker --print`, and the events of `run` and `docker`'
run_status "$GPUPIN" "${SIM[@]}" --json pick --only 0
expect_eq "$STATUS" 3 "pick of the held GPU 0"
documented "$choice" "pick that chooses nothing" < <(head -n 1 <<<"$ERR")
run_json docker --print --only 2
documented "$choice" "docker --print" <<<"$OUT"
"$GPUPIN" "${SIM[@]}" -q release
run_json run --verify=1s --only 2 -- true
documented "$choice" "run's events" <<<"$ERR"
run_json docker --only 2 -- run -d img sleep infinity
documented "$choice" "docker's events" <<<"$ERR"
docker rm -f "$OUT" >/dev/null
leases_left() { [[ $("$GPUPIN" "${SIM[@]}" --json leases | jq '.leases | length') == "$1" ]]; }
wait_until 10 "the container's lease to end" leases_left 1
run_json pick --only 2
documented "$choice" "pick" <<<"$OUT"
run_json env --only 3
documented "$choice" "env" <<<"$OUT"

"$GPUPIN" "${SIM[@]}" -q run --wait --only 0 -- true >/dev/null 2>"$TEST_TMP/waiter.err" &
queued() { [[ $("$GPUPIN" "${SIM[@]}" --json leases | jq '.queue | length') == 1 ]]; }
wait_until 20 "the waiting job in the queue" queued
run_json leases --all
expect_eq "$(jq -c '[(.leases | length), (.queue | length)]' <<<"$OUT")" "[3,1]" "leases and queue"
documented '`gpupin --json leases`' "leases" <<<"$OUT"
run_json release
expect_eq "$(jq '.released != [] and .kept != []' <<<"$OUT")" true "released and kept: $OUT"
documented '`gpupin --json release`' "release" <<<"$OUT"

run_json map --pid "$job" --probe
documented '`gpupin --json map`' "map --pid --probe" <<<"$OUT"
run_json map --env 'CUDA_VISIBLE_DEVICES=0,7'
documented '`gpupin --json map`' "map --env" <<<"$OUT"
printf 'import torch\nimport os\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\n' >"$TEST_TMP/late.py"
run_status "$GPUPIN" "${SIM[@]}" --json doctor "$TEST_TMP/late.py"
documented '`gpupin --json doctor`' "doctor" <<<"$OUT"
run_json slurm gres
documented '`gpupin --json slurm gres`' "slurm gres" <<<"$OUT"

# House rules that cap users add holdings to leases and config (needs root).
if [[ $(id -u) == 0 ]]; then
  house_rules '[limits]\nmax_gpus_per_user = 2\n'
  run_json leases
  documented '`gpupin --json leases`' "leases under a cap" <<<"$OUT"
  run_json config
  documented '`gpupin --json config`' "config under a cap" <<<"$OUT"
else
  run_json config
  documented '`gpupin --json config`' "config" <<<"$OUT"
fi

if ((${#misnamed[@]} > 0)); then
  printf 'misnamed: %s\n' "${misnamed[@]}" >&2
  fail "${#misnamed[@]} key paths break the rules of naming in doc/json.md"
fi
if ((${#missing[@]} > 0)); then
  printf 'doc/json.md does not list %s\n' "${missing[@]}" >&2
  fail "${#missing[@]} of $checked key paths are not in doc/json.md"
fi
echo "PASS: $checked key paths documented"
