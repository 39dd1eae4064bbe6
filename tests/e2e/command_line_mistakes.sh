#!/usr/bin/env bash
# Slips of the hand at the command line get one line and exit 2, or do what
# "--" means (the end of the options): never something broader than asked.
source "$(dirname "$0")/lib.sh"
SIM=(--simulate "$EXAMPLES/server-4gpu.json")

# `release -- ID` releases that lease and no other.
"$GPUPIN" "${SIM[@]}" pick >/dev/null
"$GPUPIN" "${SIM[@]}" pick >/dev/null
mapfile -t ids < <("$GPUPIN" "${SIM[@]}" --json leases | jq -r '.leases[].lease_id')
((${#ids[@]} == 2)) || fail "expected two reservations, got ${#ids[@]}"
run_status "$GPUPIN" "${SIM[@]}" release -- "${ids[0]}"
expect_eq "$STATUS" 0 "release -- ID"
expect_eq "$("$GPUPIN" "${SIM[@]}" --json leases | jq -r '.leases[].lease_id')" "${ids[1]}" \
  "the lease left after release -- ${ids[0]}"
# `release "$ID"` with ID unset: an empty id would match every lease.
run_status "$GPUPIN" "${SIM[@]}" release ""
expect_eq "$STATUS" 2 "release ''"
expect_contains "$ERR" "an empty lease id" "release ''"
expect_eq "$("$GPUPIN" "${SIM[@]}" --json leases | jq -r '.leases[].lease_id')" "${ids[1]}" \
  "the lease left after release ''"

# Words after "--" of a command that runs nothing are its positionals.
run_status "$GPUPIN" "${SIM[@]}" map -- cuda:5
expect_eq "$STATUS" 1 "map -- cuda:5 on 4 cards"
expect_contains "$ERR" "cuda:5 does not exist" "map read the id after --"
# After '--' an option is an argument too, so a command that takes none
# refuses it rather than obeying it (CLI11 alone would print JSON here).
for words in "ls -- foo bar" "leases -- x" "pick --wait -- 5s" "ls -- --json" "leases -- --json" \
  "slurm gres -- --json" "ps -- --simulate $EXAMPLES/lab-8gpu.json" "pick -- -n 2"; do
  read -ra args <<<"$words"
  run_status "$GPUPIN" "${SIM[@]}" "${args[@]}"
  expect_eq "$STATUS" 2 "gpupin $words"
  expect_eq "$(wc -l <<<"$ERR")" 1 "lines on stderr for gpupin $words"
  expect_contains "$ERR" "${args[-1]}'; see gpupin ${args[0]} --help" "gpupin $words"
  expect_eq "$OUT" "" "stdout of gpupin $words"
done
run_status "$GPUPIN" "${SIM[@]}" ls -- foo bar
expect_eq "$ERR" "gpupin: unexpected 'foo bar'; see gpupin ls --help" "the words in the order typed"

# A pid that is not a number gets the same line as any other number.
run_status "$GPUPIN" --simulate "$EXAMPLES/server-4gpu.json" env --for abc
expect_eq "$STATUS" 2 "env --for abc"
expect_eq "$ERR" "gpupin: --for: 'abc': write a whole number from 1 to 2147483647; see gpupin env --help" "env --for abc says what to write"
# A mistake in a command's own option points at that command's help; one in
# a global option, at gpupin's.
run_status "$GPUPIN" "${SIM[@]}" ps --kill
expect_eq "$STATUS:$ERR" "2:gpupin: --kill requires --leftovers; see gpupin ps --help" "ps --kill"
run_status "$GPUPIN" "${SIM[@]}" slurm gres extra
expect_eq "$STATUS:$ERR" "2:gpupin: unexpected 'extra'; see gpupin slurm gres --help" "slurm gres extra"
run_status "$GPUPIN" "${SIM[@]}" ls --state-dir ""
expect_eq "$STATUS:$ERR" "2:gpupin: --state-dir: give a directory; see gpupin --help" "ls --state-dir ''"

# The separator forgotten: the command is not run, and the fix is shown.
run_status "$GPUPIN" "${SIM[@]}" run touch "$TEST_TMP/ran"
expect_eq "$STATUS" 2 "run without --"
expect_contains "$ERR" "the command goes after '--', as in: gpupin run --wait -- python train.py" "run without --"
[[ ! -e $TEST_TMP/ran ]] || fail "run without -- ran the command"
# The command's own -n read as gpupin's second --count: still the separator.
run_status "$GPUPIN" "${SIM[@]}" run -n 1 python train.py -n 2
expect_eq "$STATUS:$ERR" "2:gpupin: unexpected 'python train.py': the command goes after '--', as in: gpupin run --wait -- python train.py" \
  "run without -- and a command with an option of gpupin's"
run_status "$GPUPIN" "${SIM[@]}" run -n 1 -n 2 -- true
expect_eq "$STATUS:$ERR" "2:gpupin: --count given more than once; give it once" "--count twice"
run_status "$GPUPIN" "${SIM[@]}" docker run image
expect_eq "$STATUS" 2 "docker without --"
expect_contains "$ERR" "gpupin docker -- run" "docker without --"
run_status "$GPUPIN" "${SIM[@]}" docker --ttl 5s -- run image
expect_eq "$STATUS:$ERR" "2:gpupin: --ttl is for --print: without it the lease lasts as long as the docker client, or the container of run -d" \
  "docker --ttl without --print"

# A mistyped option gets a suggestion, as a mistyped command does; global
# options count after a command too. An option given twice is refused in
# gpupin's words, a switch too (before or after the command, or two letters
# in one word).
for case in "leases --al|unknown option '--al' of 'gpupin leases'; did you mean '--all'?" \
  "run --wiat -- true|unknown option '--wiat' of 'gpupin run'; did you mean '--wait'?" \
  "ls --jsno|unknown option '--jsno' of 'gpupin ls'; did you mean '--json'?" \
  "pick --prefer=free --near=true --explian|unknown option '--explian' of 'gpupin pick'; did you mean '--explain'?" \
  "ls --frobnicate|unknown option '--frobnicate' of 'gpupin ls'; see gpupin ls --help" \
  "--state-dir $TEST_TMP/a ls --state-dir $TEST_TMP/b|--state-dir given more than once; give it once" \
  "--json ls --json|--json given more than once; give it once" \
  "-v -v ls|--verbose given more than once; give it once" \
  "-vv ls|--verbose given more than once; give it once" \
  "ls --all --all|--all given more than once; give it once" \
  "pick --near --near|--near given more than once; give it once" \
  "pick --no-near --no-near|--no-near given more than once; give it once" \
  "pick --near --no-near|--near and --no-near contradict each other; give one of them" \
  "pick --no-near -n 2 --near|--near and --no-near contradict each other; give one of them"; do
  read -ra args <<<"${case%%|*}"
  run_status "$GPUPIN" "${SIM[@]}" "${args[@]}"
  expect_eq "$STATUS" 2 "gpupin ${case%%|*}"
  expect_eq "$ERR" "gpupin: ${case#*|}" "gpupin ${case%%|*}"
done
# The lists add up instead.
run_status "$GPUPIN" "${SIM[@]}" pick --ttl 1ms -n 2 --only 2 --only 3
expect_eq "$STATUS:$OUT" "0:2,3" "--only given twice"
# Help shows a negated flag as it is typed.
run_status "$GPUPIN" pick --help
expect_contains "$OUT" "--near,--no-near " "pick --help"
[[ $OUT != *"{false}"* ]] || fail "pick --help shows CLI11's {false}: $OUT"

# A command with commands of its own.
run_status "$GPUPIN" "${SIM[@]}" slurm gress
expect_eq "$STATUS" 2 "slurm gress"
expect_eq "$ERR" "gpupin: unknown command 'slurm gress'; did you mean 'slurm gres'?" "slurm gress"
run_status "$GPUPIN" "${SIM[@]}" slurm
expect_eq "$STATUS" 2 "slurm alone"
expect_eq "$ERR" "gpupin: 'slurm' needs a command: gres" "slurm alone"
# Numbers and lists out of range say what to write, in one line, at once.
for words in "pick -n 0:--count: '0': write a whole number from 1 to 4096" \
  "run -n abc -- true:--count: 'abc': write a whole number from 1 to 4096" \
  "pick --max-jobs 0:--max-jobs: '0': write a whole number from 1 to 10000" \
  "map --pid 0:--pid: '0': write a whole number from 1 to 2147483647" \
  "ls --watch nan:--watch: 'nan': write a number of seconds from 0.1 to 86400" \
  "ls --watch 1e300:--watch: '1e300': write a number of seconds from 0.1 to 86400" \
  "pick --wait=1e10s:--wait: duration '1e10s' is over 1000 days" \
  "pick --wait=2562047h:--wait: duration '2562047h' is over 1000 days" \
  "pick --only ,:--only: an empty id in ','" \
  "pick --order 0,,1:--order: an empty id in '0,,1'" \
  "pick --ttl 0:--ttl: must be longer than 0; a reservation of no time holds nothing" \
  "env --ttl 0ms:--ttl: must be longer than 0; a reservation of no time holds nothing" \
  "docker --print --ttl 0s:--ttl: must be longer than 0; a reservation of no time holds nothing"; do
  read -ra args <<<"${words%%:*}"
  run_status timeout $((10 * TIME_FACTOR)) "$GPUPIN" "${SIM[@]}" "${args[@]}"
  expect_eq "$STATUS" 2 "gpupin ${words%%:*}"
  expect_eq "$(wc -l <<<"$ERR")" 1 "lines on stderr for gpupin ${words%%:*}"
  expect_contains "$ERR" "gpupin: ${words#*:}" "gpupin ${words%%:*}"
done
# `gpupin run -- "$CMD"` with CMD unset: one line, exit 2, nothing chosen.
run_status "$GPUPIN" "${SIM[@]}" run -- ''
expect_eq "$STATUS" 2 "run -- ''"
expect_eq "$ERR" "gpupin: the command is an empty word; is a variable unset?" "run -- ''"
# The simulated workload logs a name that is not UTF-8 rather than abort.
GPUPIN_SIM_SCENARIO="$EXAMPLES/server-4gpu.json" run_status "$WORKLOAD" --seconds 0 \
  --name "$(printf 'bad\xff')" --log "$TEST_TMP/names.log"
expect_eq "$STATUS" 0 "workload with a name that is not UTF-8"
expect_eq "$(jq -r .name "$TEST_TMP/names.log" | sort -u)" "bad�" "the name as logged"
# An empty --state-dir would quietly be the default directory, where leases
# of this one do not count.
run_status "$GPUPIN" "${SIM[@]}" --state-dir '' pick
expect_eq "$STATUS" 2 "--state-dir ''"
expect_eq "$ERR" "gpupin: --state-dir: give a directory; see gpupin --help" "--state-dir ''"
run_status "$GPUPIN" --nvml '' ls
expect_eq "$STATUS:$ERR" "2:gpupin: --nvml: give a path; see gpupin --help" "--nvml ''"
run_status "$GPUPIN" "${SIM[@]}" ls --simulate
expect_eq "$STATUS:$ERR" "2:gpupin: --simulate needs a value; see gpupin --help" "--simulate with no value"
run_status "$GPUPIN" "${SIM[@]}" run --verify=0 -- true
expect_eq "$STATUS:$ERR" "2:gpupin: --verify: must be longer than 0; a job needs time to appear" \
  "--verify=0"
expect_eq "$OUT" "" "stdout of --state-dir ''"
printf '[pick]\ncount = 0\n' >"$TEST_TMP/count.toml"
run_status "$GPUPIN" "${SIM[@]}" --config "$TEST_TMP/count.toml" pick
expect_eq "$STATUS" 2 "count = 0 in a config file"
expect_contains "$ERR" "'0': write a whole number from 1 to 4096" "count = 0 in a config file"
# A mistyped global option before the command is named as such, not its
# value taken for an unknown command.
run_status "$GPUPIN" --simulat "$EXAMPLES/lab-8gpu.json" ls
expect_eq "$STATUS:$ERR" "2:gpupin: unknown option '--simulat'; did you mean '--simulate'?" \
  "a mistyped global option before the command"
run_status "$GPUPIN" --jsn ls
expect_eq "$STATUS:$ERR" "2:gpupin: unknown option '--jsn' of 'gpupin'; did you mean '--json'?" \
  "a mistyped switch before the command is gpupin's"
run_status "$GPUPIN" ls --jsn
expect_eq "$STATUS:$ERR" "2:gpupin: unknown option '--jsn' of 'gpupin ls'; did you mean '--json'?" \
  "after the command, the command's"
run_status "$GPUPIN" -qv --simulate "$EXAMPLES/lab-8gpu.json" lss
expect_eq "$STATUS:$ERR" "2:gpupin: unknown command 'lss'; did you mean 'ls'?" "known flags, then a mistyped command"
# A size without a unit is refused, not taken as bytes: `--mem 10` as 10
# bytes would be a shared request that fits beside anything.
run_status "$GPUPIN" "${SIM[@]}" pick --mem 10
expect_eq "$STATUS:$ERR" "2:gpupin: --mem: size '10' has no unit; write e.g. 10G, 10M, or 10B for bytes" \
  "--mem without a unit"
run_status "$GPUPIN" "${SIM[@]}" pick --max-used 10
expect_eq "$STATUS:$ERR" "2:gpupin: --max-used: '10' has no unit; write e.g. 10% of the card's memory, or 10G, 10M, 10B" \
  "--max-used without a unit: a share or an amount"
printf '[pick]\nmem = 10\n' >"$TEST_TMP/mem.toml"
run_status "$GPUPIN" "${SIM[@]}" --config "$TEST_TMP/mem.toml" pick
expect_eq "$STATUS:$ERR" "2:gpupin: $TEST_TMP/mem.toml:2: mem: --mem: size '10' has no unit; write e.g. 10G, 10M, or 10B for bytes" \
  "mem = 10 in a config file"
# Every spelling of a size that gpupin itself prints is accepted.
for size in 5Gi 20GiB 1P 4096B; do
  run_status "$GPUPIN" "${SIM[@]}" pick --mem "$size"
  [[ $ERR != *"invalid size"* ]] || fail "--mem $size refused: $ERR"
done
# --wait=0 waits no time: it takes no place in the queue and does not say
# it waits.
"$GPUPIN" "${SIM[@]}" release --all >/dev/null 2>&1
"$GPUPIN" "${SIM[@]}" pick --count 4 >/dev/null
run_status "$GPUPIN" "${SIM[@]}" run --wait=0 -- true
expect_eq "$STATUS" 3 "--wait=0 with every card taken"
[[ $ERR != *"waiting:"* ]] || fail "--wait=0 said it waited: $ERR"
expect_contains "$ERR" "no GPU available" "--wait=0 fails as without --wait"
expect_contains "$ERR" "; a --wait of 0 does not queue: give --wait or --wait=DURATION" "--wait=0's advice"
"$GPUPIN" "${SIM[@]}" release >/dev/null 2>&1
# gpupin alone: its help on stdout, and the one line of a usage error.
run_status "$GPUPIN"
expect_eq "$STATUS:$ERR" "2:gpupin: no command given; gpupin --help lists them" "gpupin alone"
expect_contains "$OUT" "Subcommands:" "gpupin alone prints its help"

# -q keeps the notes back and -v adds reasons: together, one line and exit 2,
# in any spelling.
for words in "-q -v ls" "-qv ls" "ls --quiet --verbose" "-v ls -q"; do
  read -ra args <<<"$words"
  run_status "$GPUPIN" "${SIM[@]}" "${args[@]}"
  expect_eq "$STATUS:$ERR:$OUT" "2:gpupin: -q and -v pull opposite ways; give one of them:" "gpupin $words"
done
echo PASS
