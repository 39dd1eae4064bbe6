# ls lists every GPU of every example; JSON matches the goldens; no NVML
# library at all is exit 4 with one line that says what to check.
source "$(dirname "$0")/lib.sh"
for example in "$EXAMPLES"/*.json; do
  name=$(basename "$example" .json)
  run_status "$GPUPIN" --simulate "$example" ls
  expect_eq "$STATUS" 0 "ls on $name"
  gpus=$(jq '.gpus | length' "$example")
  rows=$(grep -cE '^ *[0-9]+  ' <<<"$OUT")
  expect_eq "$rows" "$gpus" "one row per GPU in $name"
  run_status "$GPUPIN" --simulate "$example" --json ls
  expect_eq "$STATUS" 0 "--json ls on $name"
  golden="$GPUPIN_SOURCE_DIR/tests/e2e/golden/ls-$name.json"
  if [[ -n "${GPUPIN_UPDATE_GOLDEN:-}" ]]; then echo "$OUT" >"$golden"; fi
  diff -u "$golden" <(echo "$OUT") || fail "--json ls on $name differs from $golden (GPUPIN_UPDATE_GOLDEN=1 rewrites it)"
done
run_status "$GPUPIN" ls --nvml /nonexistent
expect_eq "$STATUS" 4 "missing library"
expect_eq "$(wc -l <<<"$ERR")" 1 "one line"
expect_contains "$ERR" "/nonexistent" "names the path"
GPUPIN_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1 run_status "$GPUPIN" ls
expect_eq "$STATUS" 4 "missing library from the environment"
run_status "$GPUPIN" lss
expect_eq "$STATUS" 2 "typo"
expect_contains "$ERR" "did you mean 'ls'" "suggestion"
# An error quoting what it was given stays one line: no newline or escape
# sequence of the input reaches the terminal.
run_status "$GPUPIN" leases $'x\n\e[2Jy'
expect_eq "$STATUS" 2 "an unexpected argument"
expect_eq "$ERR" "gpupin: unexpected 'x??[2Jy'; see gpupin leases --help" \
  "the error for an argument holding a newline and an escape"
echo PASS
