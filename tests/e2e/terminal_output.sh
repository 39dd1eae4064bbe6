#!/usr/bin/env bash
# What gpupin writes to a terminal (a pty, through script(1)): NO_COLOR
# takes the colour away and nothing else, so `ls --watch` still redraws in
# place; TERM=dumb takes colour and cursor movement away; `env` printed to a
# terminal (not eval'd) says that its lines set nothing, and which lease it
# holds; `pick` printed to a terminal says what it reserved.
source "$(dirname "$0")/lib.sh"
SIM=(--simulate "$EXAMPLES/workstation-2gpu.json")
# in_pty FILE COMMAND: runs COMMAND (a shell line) on a pty; FILE gets what
# the terminal got.
in_pty() { script -qec "$2" "$1" >/dev/null 2>&1 || true; }
ESC=$'\x1b'
watch="timeout -s INT 0.7 $GPUPIN ${SIM[*]} ls --watch 0.2"

NO_COLOR=1 TERM=xterm in_pty "$TEST_TMP/nocolor" "$watch"
grep -q "${ESC}\[?25l" "$TEST_TMP/nocolor" || fail "NO_COLOR: --watch did not redraw in place"
grep -q "${ESC}\[3[0-9]m" "$TEST_TMP/nocolor" && fail "NO_COLOR: colour codes were written"

unset NO_COLOR
TERM=xterm in_pty "$TEST_TMP/color" "$GPUPIN ${SIM[*]} ls"
grep -q "${ESC}\[" "$TEST_TMP/color" || fail "no colour on a terminal without NO_COLOR"
TERM=dumb in_pty "$TEST_TMP/dumb" "$watch"
grep -q "${ESC}" "$TEST_TMP/dumb" && fail "TERM=dumb: escape sequences were written"
grep -q '^2 GPUs' "$TEST_TMP/dumb" || fail "TERM=dumb: no table"

export NO_COLOR=1
in_pty "$TEST_TMP/env" "$GPUPIN ${SIM[*]} env"
expect_contains "$(cat "$TEST_TMP/env")" "these lines set nothing when printed here" "env on a terminal"
lease=$(sed -n "s/^export GPUPIN_LEASE_ID='\([^']*\)'.*/\1/p" "$TEST_TMP/env" | tr -d '\r')
[[ -n $lease ]] || fail "env printed no lease id: $(cat "$TEST_TMP/env")"
expect_contains "$(cat "$TEST_TMP/env")" "gpupin release $lease" "names the lease to release"
run_status "$GPUPIN" "${SIM[@]}" env
[[ $ERR != *"set nothing"* ]] || fail "env into a pipe warned: $ERR"
# pick printed to a terminal says that the card stays reserved for this
# shell, whose next `gpupin run` would otherwise find it taken unawares.
in_pty "$TEST_TMP/pick" "$GPUPIN ${SIM[*]} pick"
reservation=$(sed -n 's/.*gpupin release \([^ ]*\) frees it.*/\1/p' "$TEST_TMP/pick" | tr -d '\r')
[[ -n $reservation ]] || fail "pick on a terminal named no reservation: $(cat "$TEST_TMP/pick")"
expect_contains "$(cat "$TEST_TMP/pick")" "reserved for this shell" "pick on a terminal"
run_status "$GPUPIN" "${SIM[@]}" pick --ttl 1s
[[ $ERR != *"reserved for this shell"* ]] || fail "pick into a pipe said so too: $ERR"

# The waiting line, redrawn in place, fits one row of a narrow terminal: a
# line that wrapped would leave its first rows behind at each redraw.
log="$TEST_TMP/jobs.log"
FOUR=(--simulate "$EXAMPLES/server-4gpu.json")
"$GPUPIN" "${FOUR[@]}" run -n 4 -- "$WORKLOAD" --seconds 60 --name holder --log "$log" 2>/dev/null &
holder=$!
wait_for_line "$log" '"name":"holder"'
in_pty "$TEST_TMP/narrow" "stty cols 50; timeout -s INT 1 $GPUPIN ${FOUR[*]} run --wait -- true"
kill "$holder"
wait "$holder" || true
grep -q "gpupin: waiting" "$TEST_TMP/narrow" || fail "no waiting line: $(cat "$TEST_TMP/narrow")"
longest=$(tr '\r' '\n' <"$TEST_TMP/narrow" | sed "s/${ESC}\[K//g" | grep 'gpupin: waiting' |
  awk '{ if (length($0) > max) max = length($0) } END { print max }')
((longest <= 49)) || fail "a waiting line of $longest columns on a 50-column terminal"
