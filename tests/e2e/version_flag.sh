# `gpupin --version` prints one line and succeeds, whatever command-section
# defaults a config file holds (no command is built for it); a --version
# that is another option's value is not taken for one.
source "$(dirname "$0")/lib.sh"
run_status "$GPUPIN" --version
expect_eq "$STATUS" 0 "gpupin --version"
[[ $OUT =~ ^gpupin\ [0-9]+\.[0-9]+\.[0-9]+( \(.+\))?$ ]] || fail "gpupin --version printed: $OUT"
expect_eq "$(wc -l <<<"$OUT")" 1 "one line"
expect_eq "$ERR" "" "nothing on stderr"
version=$OUT

# Defaults for commands (doc/config.md) are read without those commands built.
printf '[run]\nwait = true\n[ls]\nwatch = 0.5\n' >"$TEST_TMP/defaults.toml"
GPUPIN_CONFIG="$TEST_TMP/defaults.toml" run_status "$GPUPIN" --version
expect_eq "$STATUS" 0 "--version with command sections in GPUPIN_CONFIG"
expect_eq "$OUT" "$version" "the same line"
# A config file naming an option no command has is still an error the user
# hears about, as for any command.
printf '[ls]\nno-such-option = 1\n' >"$TEST_TMP/wrong.toml"
GPUPIN_CONFIG="$TEST_TMP/wrong.toml" run_status "$GPUPIN" --version
expect_eq "$STATUS" 2 "--version with an unknown option in GPUPIN_CONFIG"
expect_contains "$ERR" "gpupin ls has no option --no-such-option" "the config's mistake named"

# A --version that is another option's value asks for no version: what
# CLI11 answers then (the help, with every command) is what it was before.
run_status "$GPUPIN" --state-dir --version
expect_contains "$OUT" "Subcommands:" "the help lists the commands"

# After a command, --version is the program's version as well.
run_status "$GPUPIN" ls --version
expect_eq "$STATUS" 0 "gpupin ls --version"
expect_eq "$OUT" "$version" "the same line after a command"
echo PASS
