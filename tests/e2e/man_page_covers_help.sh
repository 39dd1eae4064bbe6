# The man page gpupin(1) documents every command and every option that
# --help lists: a command as a paragraph of its own (`*ls*` at the start of
# a line of doc/gpupin.1.scd), an option in bold (`*--watch*`).
source "$(dirname "$0")/lib.sh"
page="$GPUPIN_SOURCE_DIR/doc/gpupin.1.scd"
missing=()
commands=$(help_commands)
[[ $(wc -l <<<"$commands") -ge 12 ]] || fail "help_commands found too few commands: $commands"
while IFS= read -r -u 3 command; do
  if [[ -n $command ]] && ! grep -qE "^\*$command[* ]" "$page"; then
    missing+=("command 'gpupin $command': add a paragraph starting *$command* under COMMANDS")
  fi
  options=$(help_options "$command")
  [[ -n $options ]] || fail "no options found in 'gpupin $command --help'"
  for option in $options; do
    if ! grep -qF -- "*$option*" "$page"; then
      missing+=("option $option of 'gpupin${command:+ $command}': write it as *$option* with its meaning")
    fi
  done
done 3< <(printf '%s\n' "" "$commands")
if ((${#missing[@]} > 0)); then
  printf 'doc/gpupin.1.scd does not document %s\n' "${missing[@]}" >&2
  fail "the man page misses ${#missing[@]} of what --help lists"
fi
echo PASS
