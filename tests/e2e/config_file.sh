# --config (or GPUPIN_CONFIG) gives defaults for global and per-command
# options; the command line wins; a missing file, a TOML syntax error and an
# option or section that does not exist are usage errors naming the line.
source "$(dirname "$0")/lib.sh"
cat >"$TEST_TMP/gpupin.toml" <<TOML
simulate = "$EXAMPLES/server-4gpu.json"
[pick]
order = "3,2"
TOML
run_status "$GPUPIN" --config "$TEST_TMP/gpupin.toml" pick
expect_eq "$OUT" 3 "pick honours [pick] order from the file"
GPUPIN_CONFIG="$TEST_TMP/gpupin.toml" run_status "$GPUPIN" pick --order 1
expect_eq "$OUT" 1 "the command line wins over the file"
run_status "$GPUPIN" --config "$TEST_TMP/missing.toml" ls
expect_eq "$STATUS" 2 "missing config file"
expect_contains "$ERR" "missing.toml" "names the file"

run_status "$GPUPIN" --config "$TEST_TMP/gpupin.toml" ls
expect_eq "$STATUS" 0 "ls takes a file with a [pick] section"

# expect_config_error TEXT MESSAGE: a config holding TEXT is refused with
# exit 2 and the one line MESSAGE, by pick and by a command the section is
# not for (each process builds only its own command's options; the file is
# still checked against every command's).
expect_config_error() {
  printf '%b' "$1" >"$TEST_TMP/bad.toml"
  local command
  for command in pick ls; do
    run_status "$GPUPIN" --config "$TEST_TMP/bad.toml" --simulate "$EXAMPLES/server-4gpu.json" "$command"
    expect_eq "$STATUS" 2 "exit status of $command for a config holding '$1'"
    expect_eq "$ERR" "gpupin: $TEST_TMP/bad.toml:$2" "the error of $command for a config holding '$1'"
  done
}
expect_config_error '[pick]\n# the order of cards\nordr = "3,2"\n' \
  '3: gpupin pick has no option --ordr; see gpupin pick --help'
expect_config_error 'simulate = "x"\n[pick]\norder = "3,2\n' \
  '3: Error while parsing string: unescaped control characters other than TAB (U+0009) are explicitly prohibited'
expect_config_error '[pik]\norder = "3"\n' \
  '1: [pik]: no such command; a section holds the options of one command, such as [run] or [pick]'
# The user's file's section, copied into a --config file, says where it belongs.
expect_config_error '[defaults]\nprefer = "util"\n' \
  "1: [defaults]: that section is for the admin's file and your own (~/.config/gpupin/config.toml); a --config file gives gpupin's own options at the top and a command's under its section, [run], [pick], …"
expect_config_error '[pick]\nmem = ["20G", "40G"]\n' '2: mem takes one value, not an array'
expect_config_error '[pick]\nmax-used = "2G"\nmax_used = "3G"\n' \
  '3: max_used: given twice, also as max-used on line 2; give it once'
# A short name and a long one name one option too.
expect_config_error '[pick]\ncount = 3\nn = 2\n' '3: n: given twice, also as count on line 2; give it once'
expect_config_error 'quiet = true\nq = true\n' '2: q: given twice, also as quiet on line 1; give it once'
expect_config_error 'order = "3,2"\n' \
  '1: order is not an option of gpupin itself: give it under the section of a command that has it, [pick], [run], [env], [docker]'

# A value the command refuses only once it reads it is said at the line too.
printf '[pick]\npoll = "1ms"\n' >"$TEST_TMP/bad.toml"
run_status "$GPUPIN" --config "$TEST_TMP/bad.toml" --simulate "$EXAMPLES/server-4gpu.json" pick
expect_eq "$STATUS" 2 "exit status for a poll interval pick refuses"
expect_eq "$ERR" "gpupin: $TEST_TMP/bad.toml:2: poll: --poll: at least 10ms" "a refused poll interval names the line"
run_status "$GPUPIN" --config "$TEST_TMP/bad.toml" --simulate "$EXAMPLES/server-4gpu.json" pick --poll 50ms
expect_eq "$STATUS" 0 "a typed --poll wins over the file's refused one: $ERR"

# So is a value its option's own check refuses as the command line is read;
# only the command whose section it is reads it, so ls runs.
printf 'json = false
[pick]
count = 2.5
' >"$TEST_TMP/bad.toml"
run_status "$GPUPIN" --config "$TEST_TMP/bad.toml" --simulate "$EXAMPLES/server-4gpu.json" pick
expect_eq "$STATUS" 2 "exit status for a count pick refuses"
expect_eq "$ERR" "gpupin: $TEST_TMP/bad.toml:3: count: --count: '2.5': write a whole number from 1 to 4096" \
  "a refused count names the line"
run_status "$GPUPIN" --config "$TEST_TMP/bad.toml" --simulate "$EXAMPLES/server-4gpu.json" ls
expect_eq "$STATUS:$ERR" "0:" "ls with a value only pick refuses"
run_status "$GPUPIN" --config "$TEST_TMP/bad.toml" --simulate "$EXAMPLES/server-4gpu.json" pick -n 1
expect_eq "$STATUS" 0 "a typed -n wins over the file's refused count: $ERR"
printf 'state-dir = ""\n' >"$TEST_TMP/bad.toml"
run_status env -u GPUPIN_STATE_DIR "$GPUPIN" --config "$TEST_TMP/bad.toml" --simulate "$EXAMPLES/server-4gpu.json" ls
expect_eq "$STATUS" 2 "exit status for an empty state-dir in the file"
expect_eq "$ERR" "gpupin: $TEST_TMP/bad.toml:1: state-dir: --state-dir: give a directory" \
  "a refused global value names the line"

# Help and the version need no config file: a broken one hides neither.
printf 'x =\n' >"$TEST_TMP/broken.toml"
for words in "--version" "pick --help" "--config $TEST_TMP/broken.toml ls -h"; do
  read -ra args <<<"$words"
  run_status env GPUPIN_CONFIG="$TEST_TMP/broken.toml" "$GPUPIN" "${args[@]}"
  expect_eq "$STATUS:$ERR" "0:" "gpupin $words with a broken config file"
done
run_status env GPUPIN_CONFIG="$TEST_TMP/broken.toml" "$GPUPIN" --simulate "$EXAMPLES/server-4gpu.json" ls
expect_eq "$STATUS" 2 "ls with a broken GPUPIN_CONFIG"

# help, version and config are no settings: refused at their line, by any
# of their names.
printf 'json = false\nversion = true\n' >"$TEST_TMP/bad.toml"
run_status "$GPUPIN" --config "$TEST_TMP/bad.toml" --simulate "$EXAMPLES/server-4gpu.json" ls
expect_eq "$STATUS:$ERR" "2:gpupin: $TEST_TMP/bad.toml:2: version: given on the command line only, not in a file" \
  "version in a --config file"
printf '[pick]\nh = true\n' >"$TEST_TMP/bad.toml"
run_status "$GPUPIN" --config "$TEST_TMP/bad.toml" --simulate "$EXAMPLES/server-4gpu.json" pick
expect_eq "$STATUS:$ERR" "2:gpupin: $TEST_TMP/bad.toml:2: [pick] h: given on the command line only, not in a file" \
  "pick's help by its one-letter name in a --config file"
# -q and -v pull opposite ways: the one typed wins over a file's; both typed,
# or both from files, is a usage error of one line.
printf 'quiet = true\n' >"$TEST_TMP/quiet.toml"
run_status "$GPUPIN" --config "$TEST_TMP/quiet.toml" --simulate "$EXAMPLES/lab-8gpu.json" -v ls
expect_eq "$STATUS" 0 "a typed -v over a file's quiet: $ERR"
expect_contains "$ERR" "cuda:N follow" "a typed -v over a file's quiet explains"
printf 'verbose = true\n' >"$TEST_TMP/verbose.toml"
run_status "$GPUPIN" --config "$TEST_TMP/verbose.toml" --simulate "$EXAMPLES/lab-8gpu.json" -q ls
expect_eq "$STATUS:$ERR" "0:" "a typed -q over a file's verbose"
printf 'verbose = true\nquiet = true\n' >"$TEST_TMP/bad.toml"
run_status "$GPUPIN" --config "$TEST_TMP/bad.toml" --simulate "$EXAMPLES/server-4gpu.json" ls
expect_eq "$STATUS:$ERR" \
  "2:gpupin: quiet and verbose are both set by config files; keep one, or type -q or -v (gpupin -v config shows where each is set)" \
  "quiet and verbose in one file"
run_status "$GPUPIN" --config "$TEST_TMP/bad.toml" --simulate "$EXAMPLES/server-4gpu.json" -v config
expect_eq "$STATUS" 0 "-v config with quiet and verbose in one file: $ERR"
echo PASS
