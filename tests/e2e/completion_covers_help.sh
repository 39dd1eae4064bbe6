# `gpupin completion bash|zsh|fish`: every command and every option that
# --help lists completes in bash and fish (zsh: the script parses and names
# them all); fixed values, GPU ids of the simulated server given on the
# command line, and the user's lease ids complete too.
source "$(dirname "$0")/lib.sh"
for shell in zsh fish; do
  command -v "$shell" >/dev/null || fail "$shell is not installed (scripts/setup test installs it)"
done
server="$EXAMPLES/lab-8gpu.json"
"$GPUPIN" completion bash >"$TEST_TMP/gpupin.bash"
"$GPUPIN" completion zsh >"$TEST_TMP/gpupin.zsh"
"$GPUPIN" completion fish >"$TEST_TMP/gpupin.fish"

# A lease of ours, for `release`.
"$GPUPIN" --simulate "$server" run -- "$WORKLOAD" --seconds 60 >/dev/null 2>"$TEST_TMP/run.err" &
for _ in $(seq 100); do
  lease=$("$GPUPIN" --simulate "$server" --json leases | jq -r '.leases[0].lease_id // empty')
  [[ -n $lease ]] && break
  sleep 0.1
done
[[ -n $lease ]] || fail "the job's lease did not appear"

# Each query is a command line whose last word is being completed; the
# answer is the candidates, space-separated, one line per query.
queries=()
expected=()
ask() { # EXPECTED-WORD LINE...
  expected+=("$1")
  shift
  queries+=("$*")
}
commands=$(help_commands)
while IFS= read -r -u 3 command; do
  [[ -z $command ]] || ask "${command##* }" "gpupin $command"
  for option in $(help_options "$command"); do
    ask "$option" "gpupin${command:+ $command} $option"
  done
done 3< <(printf '%s\n' "" "$commands")
pick_query=${#queries[@]}
ask pick "gpupin pi"
prefer_query=${#queries[@]}
ask util "gpupin pick --prefer "
ask fish "gpupin env --shell "
ask zsh "gpupin completion "
ask 7 "gpupin --simulate $server pick --only "
ask 3,5 "gpupin --simulate $server run --exclude 3,"
ask "$lease" "gpupin --simulate $server release "

all_queries=("${queries[@]}")

# bash, with bash-completion as installed systems have it, and without.
bash_answers() { # BASH_COMPLETION_FILE or ""
  PATH="$GPUPIN_BIN_DIR:$PATH" bash --norc --noprofile -c '
    [[ -z $1 ]] || source "$1"
    source "$2"
    while IFS= read -r -u 3 line; do
      read -ra COMP_WORDS <<<"$line"
      [[ $line != *" " ]] || COMP_WORDS+=("")
      COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
      COMP_LINE=$line
      COMP_POINT=${#line}
      COMPREPLY=()
      _gpupin
      printf "%s\n" "${COMPREPLY[*]}"
    done
    echo END' bash "$1" "$TEST_TMP/gpupin.bash" 3< <(printf '%s\n' "${queries[@]}") </dev/null
}
check_answers() { # SHELL ANSWERS
  local -a answers
  mapfile -t answers <<<"$2"
  expect_eq "${answers[-1]}" END "$1: the end of the answers"
  unset 'answers[-1]'
  expect_eq "${#answers[@]}" "${#queries[@]}" "$1: one answer per query"
  for i in "${!queries[@]}"; do
    [[ " ${answers[i]} " == *" ${expected[i]} "* ]] ||
      fail "$1: '${queries[i]}' completes to '${answers[i]}', without '${expected[i]}'"
  done
}
bash_completion=/usr/share/bash-completion/bash_completion
[[ -f $bash_completion ]] || fail "bash-completion is not installed (scripts/setup test installs it)"
answers=$(bash_answers "$bash_completion")
check_answers "bash" "$answers"
check_answers "bash without bash-completion" "$(bash_answers "")"
expect_eq "$(sed -n "$((pick_query + 1))p" <<<"$answers")" "pick" "bash: 'gpupin pi' completes to pick alone"
expect_eq "$(sed -n "$((prefer_query + 1))p" <<<"$answers")" "free util index" "bash: --prefer values"

# After the "--" of a command that runs one: the command's name, with
# bash-completion or without.
queries=("gpupin run -- gpupin-sim-work")
expect_contains "$(bash_answers "$bash_completion")" gpupin-sim-workload "bash: a command after run --"
expect_contains "$(bash_answers "")" gpupin-sim-workload "bash without bash-completion: a command after run --"
queries=("${all_queries[@]}")

# fish: `complete -C` prints a candidate and its description per line. A
# short option typed whole completes to nothing more: ask for it after "-".
fish_answers=$(printf '%s\n' "${queries[@]}" | sed -E 's/ -[a-zA-Z]$/ -/' | PATH="$GPUPIN_BIN_DIR:$PATH" fish --no-config -c "
  source $TEST_TMP/gpupin.fish
  while read -l line
    set -l candidates (complete -C \"\$line\" | string replace -r '\t.*' '')
    printf '%s\\n' \"\$candidates\"
  end
  echo END")
check_answers "fish" "$fish_answers"

# zsh: no terminal to complete in; the script must parse, and name every
# command and option.
zsh -n "$TEST_TMP/gpupin.zsh" || fail "the zsh completion does not parse"
while IFS= read -r -u 3 command; do
  grep -qF "'${command##* }:" "$TEST_TMP/gpupin.zsh" || fail "zsh: no command ${command##* }"
done 3<<<"$commands"
while IFS= read -r -u 3 command; do
  for option in $(help_options "$command"); do
    grep -qE "'$option[=+[]" "$TEST_TMP/gpupin.zsh" || fail "zsh: no option $option of '$command'"
  done
done 3< <(printf '%s\n' "" "$commands")
echo PASS
