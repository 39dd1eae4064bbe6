# Every command's --help shows its own usage and options and reminds of the
# global options (which work after the command too), not the list of
# commands, which only the top-level help shows; its options in words.
source "$(dirname "$0")/lib.sh"
run_status "$GPUPIN" --help
expect_eq "$STATUS" 0 "gpupin --help"
expect_contains "$OUT" "Subcommands:" "the top-level help lists the commands"
commands=$(sed -n '/^Subcommands:/,/^$/p' <<<"$OUT" | awk 'NR > 1 && NF { print $1 }')
expect_eq "$(wc -l <<<"$commands")" 13 "13 commands listed"
expect_eq "$(grep -c '^  release ' <<<"$OUT")" 1 "each command listed once"
for command in $commands; do
  run_status "$GPUPIN" "$command" --help
  expect_eq "$STATUS" 0 "gpupin $command --help"
  expect_contains "$OUT" "Usage: gpupin $command " "usage of $command"
  expect_contains "$OUT" "Global options, before or after the command: --json, --simulate FILE" \
    "global options reminder in $command --help"
  [[ "$OUT" != *"  release "* ]] || fail "gpupin $command --help lists the commands"
  # Each option shows its own word (N, SIZE, bash|zsh), not the parser's
  # types and ranges or its Needs: notes.
  ! grep -E '^ +-.*(INT|TEXT|FLOAT|Needs:|Excludes:)' <<<"$OUT" ||
    fail "gpupin $command --help shows the parser's notation"
done
run_status "$GPUPIN" slurm gres --help
expect_contains "$OUT" "Global options, before or after the command" "a nested command too"
# What the reminder promises: a global option after the command.
run_status "$GPUPIN" ls --json --simulate "$EXAMPLES/workstation-2gpu.json"
expect_eq "$STATUS" 0 "ls --json --simulate"
expect_eq "$(jq '.gpus | length' <<<"$OUT")" 2 "global options after the command"
echo PASS
