# The man page gpupin(1) documents every command and every option that
# --help lists, where a reader of that command looks: a command has an entry
# of its own under COMMANDS (a line of doc/gpupin.1.scd starting `*ls*`,
# its text indented below), and each of its options is in bold (`*--watch*`)
# in that entry; gpupin's own options, and -h/--help of every command, under
# GLOBAL OPTIONS; the policy options of the commands whose entry names
# _POLICY OPTIONS_, under POLICY OPTIONS.
source "$(dirname "$0")/lib.sh"
page="$GPUPIN_SOURCE_DIR/doc/gpupin.1.scd"
# section NAME: the text under "# NAME", up to the next heading.
section() {
  awk -v heading="# $1" '$0 == heading { inside = 1; next } /^# / { inside = 0 } inside' "$page"
}
# entry COMMAND: the entry of COMMAND under COMMANDS: its first line and the
# indented lines below it.
entry() {
  section COMMANDS | awk -v command="$1" '
    /^[^\t]/ { inside = (index($0, "*" command "*") == 1 || index($0, "*" command " ") == 1) }
    inside'
}
global=$(section "GLOBAL OPTIONS")
policy=$(section "POLICY OPTIONS")
[[ -n $global && -n $policy ]] || fail "doc/gpupin.1.scd lacks GLOBAL OPTIONS or POLICY OPTIONS"

missing=()
commands=$(help_commands)
[[ $(wc -l <<<"$commands") -ge 12 ]] || fail "help_commands found too few commands: $commands"
checked=0
while IFS= read -r -u 3 command; do
  if [[ -z $command ]]; then
    text=$global
    where="GLOBAL OPTIONS"
  else
    text=$(entry "$command")
    if [[ -z $text ]]; then
      missing+=("command 'gpupin $command': add an entry starting *$command* under COMMANDS")
      continue
    fi
    where="the entry of $command"
  fi
  options=$(help_options "$command")
  [[ -n $options ]] || fail "no options found in 'gpupin${command:+ $command} --help'"
  for option in $options; do
    checked=$((checked + 1))
    [[ $text != *"*$option*"* ]] || continue
    [[ $option != -h && $option != --help ]] || [[ $global != *"*$option*"* ]] || continue
    [[ $text != *"_POLICY OPTIONS_"* || $policy != *"*$option*"* ]] || continue
    missing+=("option $option of 'gpupin${command:+ $command}': write it as *$option* with its meaning in $where")
  done
done 3< <(printf '%s\n' "" "$commands")
if ((${#missing[@]} > 0)); then
  printf 'doc/gpupin.1.scd does not document %s\n' "${missing[@]}" >&2
  fail "the man page misses ${#missing[@]} of what --help lists"
fi
echo "PASS: $checked options of $(($(wc -l <<<"$commands") + 1)) commands"
