#!/usr/bin/env bash
# nobody squats the parts of a state directory that root created for
# everyone (mode 1777, sticky, as doc/state-dir.md says): it makes leases/
# or queue/ (which it would own, and so could empty of everyone's leases) or
# the lock (which it could replace, so two processes would lock two files).
# Every command refuses such a part with one line naming it, its owner and
# the fix; ls and ps show the cards with that line and no lease. nobody
# cannot create a missing part either. A state directory that a user owns
# (a /tmp/gpupin its first user made) is used, with one warning from each
# command that writes a lease, and doctor fails it.
source "$(dirname "$0")/lib.sh"

as_nobody_copies "$EXAMPLES/server-4gpu.json"
gpupin() { "$GPUPIN" --simulate "$SCENARIO" "$@"; }

for part in leases queue lock; do
  state="$TEST_TMP/state-$part"
  install -d -m 1777 "$state"
  if [[ $part == lock ]]; then
    "${AS_NOBODY[@]}" touch "$state/lock"
  else
    "${AS_NOBODY[@]}" mkdir -m 1777 "$state/$part"
  fi
  for who in root nobody; do
    as=()
    [[ $who == nobody ]] && as=("${AS_NOBODY[@]}")
    # STATUS:COMMAND. ls and ps still show the cards and their processes,
    # with no lease or job and the same line saying why.
    commands=("1:run --only 0 -- true" "1:leases" "0:--json ls" "0:ps")
    # nobody's pick would reserve for root's shell, which it refuses anyway.
    [[ $who == root ]] && commands+=("1:pick")
    for command in "${commands[@]}"; do
      read -ra words <<<"${command#*:}"
      GPUPIN_STATE_DIR=$state run_status "${as[@]}" "$GPUPIN" --simulate "$SCENARIO" "${words[@]}"
      expect_eq "$STATUS" "${command%%:*}" "$who's ${command#*:} with a squatted $part"
      expect_eq "$(wc -l <<<"$ERR")" 1 "lines on stderr for $who's ${command#*:} with a squatted $part"
      expect_contains "$ERR" "$state/$part belongs to nobody" "$who's ${command#*:} with a squatted $part"
      expect_contains "$ERR" "$state/$part', as root) and gpupin makes it anew" "the fix for a squatted $part"
    done
    # The table says it under the cards, where --watch redraws it in place.
    GPUPIN_STATE_DIR=$state run_status "${as[@]}" "$GPUPIN" --simulate "$SCENARIO" ls
    expect_eq "$STATUS" 0 "$who's ls with a squatted $part"
    expect_contains "$OUT" "leases not shown: state" "$who's ls with a squatted $part"
    expect_contains "$OUT" "$state/$part belongs to nobody" "$who's ls with a squatted $part"
  done
  # Root applies the fix it was given (rm, which follows no link, never
  # chown or chmod); then both users run.
  rm -r "$state/$part"
  GPUPIN_STATE_DIR=$state run_status gpupin run --only 0 -- true
  expect_eq "$STATUS" 0 "root's run once the $part is root's: $ERR"
  GPUPIN_STATE_DIR=$state run_status "${AS_NOBODY[@]}" "$GPUPIN" --simulate "$SCENARIO" run --only 0 -- true
  expect_eq "$STATUS" 0 "nobody's run once the $part is root's: $ERR"
done

# In a fresh directory of root's, nobody creates no part: it is told to let
# root (or the tmpfiles.d entry) create them.
install -d -m 1777 "$TEST_TMP/fresh"
GPUPIN_STATE_DIR="$TEST_TMP/fresh" run_status "${AS_NOBODY[@]}" "$GPUPIN" --simulate "$SCENARIO" run -- true
expect_eq "$STATUS" 1 "nobody's run in a fresh directory of root's"
expect_contains "$ERR" "$TEST_TMP/fresh/leases is missing, and only root or the directory's owner root (uid 0) may create it" \
  "nobody's run in a fresh directory of root's"
expect_eq "$(ls -A "$TEST_TMP/fresh")" "" "parts nobody left in root's fresh directory"

# A state directory of nobody's (the first user to run gpupin made
# /tmp/gpupin): root's commands that write a lease warn once, those that do
# not stay quiet, and doctor fails the state_dir check.
install -d -m 1777 "$TEST_TMP/tmp"
"${AS_NOBODY[@]}" mkdir -m 1777 "$TEST_TMP/tmp/gpupin"
GPUPIN_STATE_DIR="$TEST_TMP/tmp/gpupin" run_status "${AS_NOBODY[@]}" "$GPUPIN" --simulate "$SCENARIO" leases
expect_eq "$STATUS" 0 "nobody's leases in its own directory: $ERR"
for command in "run --only 0 -- true" "pick --ttl 1s"; do
  read -ra words <<<"$command"
  GPUPIN_STATE_DIR="$TEST_TMP/tmp/gpupin" run_status gpupin "${words[@]}"
  expect_eq "$STATUS" 0 "root's $command in nobody's directory: $ERR"
  expect_eq "$(grep -c 'warning:' <<<"$ERR")" 1 "warnings from root's $command in nobody's directory"
  expect_contains "$ERR" "belongs to nobody (uid $(id -u nobody)), who can remove everyone's leases" \
    "root's $command in nobody's directory"
  expect_contains "$ERR" "/run/gpupin" "the way to a safe directory"
done
GPUPIN_STATE_DIR="$TEST_TMP/tmp/gpupin" run_status gpupin leases
expect_eq "$ERR" "" "leases (writes none) in nobody's directory"
GPUPIN_STATE_DIR="$TEST_TMP/tmp/gpupin" run_status gpupin doctor
grep -Eq "^state_dir +fail .*belongs to nobody" <<<"$OUT" || fail "doctor's state_dir check: $OUT"

# A private directory of nobody's is nobody's to empty too: root's job
# there is warned.
"${AS_NOBODY[@]}" mkdir -m 0700 "$TEST_TMP/tmp/private"
GPUPIN_STATE_DIR="$TEST_TMP/tmp/private" run_status gpupin run -- true
expect_eq "$STATUS" 0 "root's run in nobody's private directory: $ERR"
expect_contains "$ERR" "belongs to nobody (uid $(id -u nobody)), who can remove everyone's leases" \
  "root's run in nobody's private directory"

# A part of nobody's directory made writable by all: root is told to choose
# another directory, never to chmod a path that nobody can swap for a link.
"${AS_NOBODY[@]}" chmod 0777 "$TEST_TMP/tmp/gpupin/leases"
GPUPIN_STATE_DIR="$TEST_TMP/tmp/gpupin" run_status gpupin run -- true
expect_eq "$STATUS" 1 "root's run with nobody's leases/ made 0777"
expect_contains "$ERR" "nobody (uid $(id -u nobody))'s: choose another with --state-dir" \
  "the fix root is given in nobody's directory"
[[ $ERR != *chmod* ]] || fail "root is told to chmod in nobody's directory: $ERR"
echo PASS
