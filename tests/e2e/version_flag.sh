# `gpupin --version` prints one line and succeeds, whatever a config file
# holds (it reads none, and no command is built for it); a --version
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
# --version reads no config file: one naming an option no command has is
# an error for the commands that read it, not for the version.
printf '[ls]\nno-such-option = 1\n' >"$TEST_TMP/wrong.toml"
GPUPIN_CONFIG="$TEST_TMP/wrong.toml" run_status "$GPUPIN" --version
expect_eq "$STATUS:$OUT" "0:$version" "--version with an unknown option in GPUPIN_CONFIG"
GPUPIN_CONFIG="$TEST_TMP/wrong.toml" run_status "$GPUPIN" --simulate "$EXAMPLES/server-4gpu.json" ls
expect_eq "$STATUS" 2 "ls with an unknown option in GPUPIN_CONFIG"
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
