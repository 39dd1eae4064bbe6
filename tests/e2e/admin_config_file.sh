#!/usr/bin/env bash
# The admin's /etc/gpupin/config.toml (here through gpupin-testing, see
# house_rules in lib.sh): one it cannot trust (not root's, writable by group
# or others, in a folder others may write), a syntax error or an unknown key
# stops every gpupin with one line and exit 1; its [defaults] sit below the
# user's file, --config and the command line.
source "$(dirname "$0")/lib.sh"
house_rules '[defaults]\norder = "3"\n\n[limits]\nmax_gpus_per_user = 2\n'
admin="$GPUPIN_TEST_ADMIN_CONFIG"
scenario="$EXAMPLES/server-4gpu.json"
export XDG_CONFIG_HOME="$TEST_TMP/xdg"

# pick_with ARGS...: the card pick chooses; its reservation is released.
pick_with() {
  run_status "$GPUPIN" --simulate "$scenario" "$@" pick
  [[ $STATUS == 0 ]] || fail "pick $*: exit $STATUS: $ERR"
  "$GPUPIN" --simulate "$scenario" release >/dev/null 2>&1
}
pick_with
expect_eq "$OUT" 3 "the admin's [defaults] order"
mkdir -p "$XDG_CONFIG_HOME/gpupin"
printf '[defaults]\norder = ["2"]\n' >"$XDG_CONFIG_HOME/gpupin/config.toml"
pick_with
expect_eq "$OUT" 2 "the user's file wins over the admin's defaults"
printf '[pick]\norder = "1"\n' >"$TEST_TMP/mine.toml"
pick_with --config "$TEST_TMP/mine.toml"
expect_eq "$OUT" 1 "--config wins over both files"
run_status "$GPUPIN" --simulate "$scenario" --config "$TEST_TMP/mine.toml" pick --order 0
expect_eq "$OUT" 0 "the command line wins over every file"
"$GPUPIN" --simulate "$scenario" release >/dev/null 2>&1

# expect_refused WHAT MESSAGE: every command, even ls, exits 1 with the
# one line MESSAGE.
expect_refused() {
  run_status "$GPUPIN" --simulate "$scenario" ls
  expect_eq "$STATUS" 1 "exit status for $1"
  expect_eq "$ERR" "gpupin: $2" "the message for $1"
}
fix="its rules bind every user, so only root may write it: chown root $admin && chmod go-w $admin"
chmod g+w "$admin"
expect_refused "a group-writable admin file" "$admin: is writable by group or others; $fix"
chmod g-w,o+w "$admin"
expect_refused "a world-writable admin file" "$admin: is writable by group or others; $fix"
chmod o-w "$admin"
if id nobody >/dev/null 2>&1; then
  chown nobody "$admin"
  expect_refused "an admin file not owned by root" "$admin: is not owned by root; $fix"
  chown root "$admin"
fi
chmod 0777 "$TEST_TMP/etc"
expect_refused "an admin file in a folder others may write" \
  "$admin: its folder $TEST_TMP/etc is writable by group or others; its rules bind every user, so only root may write there: chown root $TEST_TMP/etc && chmod go-w $TEST_TMP/etc"
chmod 0755 "$TEST_TMP/etc"

house_rules '[limits]\nmax_gpus_per_user = 2\nqueue = fair\n'
expect_refused "a syntax error" \
  "$admin:3: Error while parsing boolean: expected 'false', saw 'fai'"
house_rules '[limits]\nmax_gpus_per_usr = 2\n'
expect_refused "an unknown key" \
  "$admin:2: [limits]: no key 'max_gpus_per_usr'; the keys are max_gpus_per_user, max_gpus_per_job, reserved, queue, and sections [limits.users.NAME] and [limits.groups.NAME]"
house_rules '[limits.users.alice]\nreserved = ["1"]\n'
expect_refused "a key a user's section does not take" \
  "$admin:2: [limits.users.alice]: no key 'reserved'; it takes max_gpus_per_user and max_gpus_per_job"
house_rules '[limits]\nmax_gpus_per_job = 2\nmax-gpus-per-job = 3\n'
expect_refused "a cap given twice" \
  "$admin:3: max-gpus-per-job: given twice, also as max_gpus_per_job on line 2; give it once"
house_rules '[defaults]\ncount = 1\nn = 2\n'
expect_refused "a default given by its short and long name" \
  "$admin:3: n: given twice, also as count on line 2; give it once"
# john_doe and john-doe are two accounts, not one key written twice.
house_rules '[limits.users.john_doe]\nmax_gpus_per_user = 1\n[limits.users.john-doe]\nmax_gpus_per_user = 2\n'
run_status "$GPUPIN" --simulate "$scenario" ls
expect_eq "$STATUS:$ERR" "0:" "rules for two users whose names differ by _ and -"
house_rules '[limits]\nmax_gpus_per_job = -1\n'
expect_refused "a negative cap" "$admin:2: max_gpus_per_job: give a whole number of GPUs, 0 to 4096"
house_rules '[limits]\nqueue = "lifo"\n'
expect_refused "an unknown queue order" "$admin:2: queue: give \"fair\" or \"fifo\""
house_rules '[defaults]\nmax_usd = "2G"\n'
expect_refused "a default for no option" \
  "$admin:2: [defaults]: no option --max-usd to give a default for; see gpupin --help and each command's --help"
house_rules '[limit]\nqueue = "fifo"\n'
expect_refused "an unknown section" "$admin:1: [limit]: not a section this file has; it has [defaults] and [limits]"
house_rules 'max_used = "2G"\n'
expect_refused "a default at the top" \
  "$admin:1: 'max_used': a setting at the top; in this file it goes under [defaults] (or, a rule, [limits])"
house_rules '[defaults]\nprefer = "fastest"\n'
run_status "$GPUPIN" --simulate "$scenario" pick
expect_eq "$STATUS" 1 "exit status for a default no command takes"
expect_contains "$ERR" "gpupin: $admin:2: prefer: " "a default's bad value names its line"
expect_eq "$(wc -l <<<"$ERR")" 1 "one line for a default's bad value"
run_status "$GPUPIN" --help
expect_eq "$STATUS" 0 "--help works whatever the admin's file holds"

# The user's file: defaults only.
house_rules '[limits]\nmax_gpus_per_user = 2\n'
printf '[limits]\nmax_gpus_per_user = 8\n' >"$XDG_CONFIG_HOME/gpupin/config.toml"
expect_refused "[limits] in the user's file" \
  "$XDG_CONFIG_HOME/gpupin/config.toml:1: [limits]: limits belong to the admin, in $admin; a user's file gives defaults only"
printf '[defaults]\nordr = "1"\n' >"$XDG_CONFIG_HOME/gpupin/config.toml"
expect_refused "an unknown key in the user's file" \
  "$XDG_CONFIG_HOME/gpupin/config.toml:2: [defaults]: no option --ordr to give a default for; see gpupin --help and each command's --help"

# A value of the right kind that the command refuses once it reads it is
# said at the file's line too, not as if typed; typing the option wins.
user_file="$XDG_CONFIG_HOME/gpupin/config.toml"
printf '[defaults]\nwait = true\nmax_used = "lots"\n' >"$user_file"
run_status "$GPUPIN" --simulate "$scenario" pick
expect_eq "$STATUS" 1 "exit status for a size the command refuses, from the user's file"
expect_eq "$ERR" "gpupin: $user_file:3: max-used: --max-used: invalid size 'lots'; write a number with a unit, e.g. 24G or 500M" \
  "a refused size is said at the user's file's line"
run_status "$GPUPIN" --simulate "$scenario" pick --max-used 2G
expect_eq "$STATUS" 0 "a typed --max-used wins over the file's refused one: $ERR"
"$GPUPIN" --simulate "$scenario" release >/dev/null 2>&1
run_status "$GPUPIN" --simulate "$scenario" config
expect_eq "$(awk '$1 == "wait" { $1 = ""; print substr($0, 2) }' <<<"$OUT" | tr -s ' ')" \
  "as --wait alone $user_file:2" "config shows wait = true as the option given alone"

# A default max_jobs is for shared requests: an exclusive one goes on
# without it, a shared one is held to it, and a typed --max-jobs without
# --mem is still refused.
printf '[defaults]\nmax_jobs = 1\n' >"$user_file"
run_status "$GPUPIN" --simulate "$scenario" pick
expect_eq "$STATUS:$ERR" "0:" "an exclusive pick with a default max_jobs"
"$GPUPIN" --simulate "$scenario" release >/dev/null 2>&1
"$GPUPIN" --simulate "$scenario" run --only 2 --mem 1G -- sleep 30 >/dev/null 2>&1 &
first_job=$!
wait_until 20 "the first shared job's lease" files_at_least "$GPUPIN_STATE_DIR/leases" 1
run_status "$GPUPIN" --simulate "$scenario" run --only 2 --mem 1G -- true
expect_eq "$STATUS" 3 "a second job on a card held to max_jobs = 1: $ERR"
expect_contains "$ERR" "--max-jobs 1" "the default max_jobs is applied to a shared request"
kill "$first_job"
wait "$first_job" || true
run_status "$GPUPIN" --simulate "$scenario" pick --max-jobs 2
expect_eq "$STATUS" 2 "a typed --max-jobs without --mem"

# A reserved id that names no card reserves nothing: pick takes every card
# without a word, and doctor says why.
rm -f "$user_file"
house_rules '[limits]\nreserved = ["3", "9"]\n'
run_status "$GPUPIN" --simulate "$scenario" --json doctor
expect_eq "$STATUS" 0 "doctor's exit status: a warning, not a failure"
expect_eq "$(jq -r '.findings[] | select(.check == "reserved") | .verdict' <<<"$OUT")" warn "the reserved check"
expect_contains "$(jq -r '.findings[] | select(.check == "reserved") | .evidence' <<<"$OUT")" \
  "reserved 9: no GPU has that index (NVML indices here run 0 to 3)" "names the id that reserves nothing"
house_rules '[limits]\nreserved = ["3"]\n'
run_status "$GPUPIN" --simulate "$scenario" doctor
expect_contains "$OUT" "GPU 3 is taken only by a request that names it with --only" "a reserved card that exists"
# A MIG instance cannot be reserved: doctor names the card it is part of.
mig_server="$EXAMPLES/a100-mig.json"
house_rules '[limits]\nreserved = ["MIG-a1ca08f7"]\n'
run_status "$GPUPIN" --simulate "$mig_server" --json doctor
expect_contains "$(jq -r '.findings[] | select(.check == "reserved") | .evidence' <<<"$OUT")" \
  "reserved MIG-a1ca08f7: a MIG instance of GPU 0; reserved names whole cards: give 0 or its UUID, though no card in MIG mode is chosen" \
  "a reserved MIG instance is named as part of its card"

# A [defaults] ttl is the length of pick's reservations; env's lease still
# follows its shell. Under [env] in a --config file, or typed, it applies.
house_rules '[defaults]\nttl = "5m"\n'
rm -f "$XDG_CONFIG_HOME/gpupin/config.toml"
# deadline_of ARGS...: the reservation deadline of the lease `env ARGS`
# takes in a shell that is still alive when the leases are read.
deadline_of() {
  bash -c 'eval "$("$0" --simulate "$1" env "${@:2}")" && "$0" --json leases' "$GPUPIN" "$scenario" "$@" |
    jq -c '[.leases[].reservation_deadline_unix_ms]'
}
expect_eq "$(deadline_of)" "[null]" "env does not take the admin's default ttl"
printf '[env]\nttl = "5m"\n' >"$TEST_TMP/env-ttl.toml"
[[ $(deadline_of --config "$TEST_TMP/env-ttl.toml") == "[null]" ]] && fail "env's own --config ttl was dropped"
[[ $(deadline_of --ttl 5m) == "[null]" ]] && fail "a typed --ttl was dropped"
run_status "$GPUPIN" --simulate "$scenario" --json pick
before=$(now_ms)
deadline=$("$GPUPIN" --json leases | jq '.leases[0].reservation_deadline_unix_ms')
((deadline > before + 240000)) || fail "pick did not take the admin's 5m ttl: $deadline"
"$GPUPIN" --simulate "$scenario" release --all >/dev/null 2>&1
echo PASS
