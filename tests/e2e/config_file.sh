# --config (or GPUPIN_CONFIG) gives defaults for global and per-command
# options; the command line wins; a missing file is a usage error.
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
echo PASS
