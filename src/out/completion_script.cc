#include "out/completion_script.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <string_view>

namespace gpupin {
namespace {

std::string PathText(const CompletableCommand& command) {
  return fmt::format("{}", fmt::join(command.path, " "));
}

// The words of `text` in single quotes, for sh and fish alike.
std::string Quote(std::string_view text) {
  std::string quoted = "'";
  for (char c : text) {
    if (c == '\'') {
      quoted += "'\\''";
    } else {
      quoted += c;
    }
  }
  return quoted + "'";
}

// fish's quoting differs from sh's: a backslash escapes a quote inside one.
std::string FishQuote(std::string_view text) {
  std::string quoted = "'";
  for (char c : text) {
    if (c == '\'' || c == '\\') quoted += '\\';
    quoted += c;
  }
  return quoted + "'";
}

std::vector<const CompletableCommand*> Children(const std::vector<CompletableCommand>& commands,
                                                const CompletableCommand& parent) {
  std::vector<const CompletableCommand*> children;
  for (const CompletableCommand& command : commands) {
    if (command.path.size() == parent.path.size() + 1 &&
        std::equal(parent.path.begin(), parent.path.end(), command.path.begin())) {
      children.push_back(&command);
    }
  }
  return children;
}

bool TakesValueWord(const CompletableOption& option) {
  return option.value != CompletionValue::kNone && !option.value_optional;
}

// How the scripts' shared helpers name a kind of value.
std::string KindWord(CompletionValue value, const std::vector<std::string>& choices) {
  switch (value) {
    case CompletionValue::kNone:
      return "";
    case CompletionValue::kText:
      return "text";
    case CompletionValue::kChoices:
      return fmt::format("choices {}", fmt::join(choices, " "));
    case CompletionValue::kFile:
      return "file";
    case CompletionValue::kDirectory:
      return "directory";
    case CompletionValue::kGpuIds:
      return "gpus";
    case CompletionValue::kLeaseIds:
      return "leases";
  }
  return "";
}

// The global options whose values the scripts pass on when they ask gpupin
// for GPU or lease ids, so that `--simulate FILE` completes that server's.
std::vector<std::string> ForwardedOptions(const CompletableCommand& root) {
  std::vector<std::string> names;
  for (const CompletableOption& option : root.options) {
    if (!TakesValueWord(option)) continue;
    for (const std::string& name : option.names) {
      if (name.starts_with("--")) names.push_back(name);
    }
  }
  return names;
}

constexpr std::string_view kBashMain = R"sh(
# Completes a value of the kind _gpupin_option_value prints, for the word $2.
_gpupin_complete_value() {
  local kind=${1%% *} head='' word=$2
  case $kind in
    choices) mapfile -t COMPREPLY < <(compgen -W "${1#choices }" -- "$word") ;;
    file)
      compopt -o filenames 2>/dev/null
      mapfile -t COMPREPLY < <(compgen -f -- "$word")
      ;;
    directory)
      compopt -o filenames 2>/dev/null
      mapfile -t COMPREPLY < <(compgen -d -- "$word")
      ;;
    gpus)
      if [[ $word == *,* ]]; then
        head=${word%,*},
        word=${word##*,}
      fi
      mapfile -t COMPREPLY < <(compgen -P "$head" -W \
        "$("$gpupin" "${forwarded[@]}" completion --list gpus 2>/dev/null)" -- "$word")
      ;;
    leases)
      mapfile -t COMPREPLY < <(compgen -W \
        "$("$gpupin" "${forwarded[@]}" completion --list leases 2>/dev/null)" -- "$word")
      ;;
  esac
}

_gpupin() {
  local cur words cword
  if declare -F _init_completion >/dev/null; then
    _init_completion -n =: || return
  else
    words=("${COMP_WORDS[@]}")
    cword=$COMP_CWORD
    cur=${COMP_WORDS[COMP_CWORD]}
  fi
  local gpupin=${words[0]} command='' word kind nested all i
  local -a forwarded=()
  for ((i = 1; i < cword; i++)); do
    word=${words[i]}
    if [[ $word == -- ]]; then
      if _gpupin_runs_command "$command"; then
        if declare -F _command_offset >/dev/null; then
          _command_offset $((i + 1))
        elif ((cword == i + 1)); then
          # Without bash-completion: the command's name, then files.
          mapfile -t COMPREPLY < <(compgen -c -- "$cur" | awk '!seen[$0]++')
        else
          compopt -o default 2>/dev/null
          COMPREPLY=()
        fi
        return
      fi
      continue
    fi
    case $word in
      -*=*) _gpupin_forwarded "${word%%=*}" && forwarded+=("$word") ;;
      -*)
        kind=$(_gpupin_option_value "$command" "$word")
        if [[ -n $kind ]]; then
          _gpupin_forwarded "$word" && forwarded+=("$word" "${words[i + 1]}")
          ((i++))
        fi
        ;;
      *)
        nested=$(_gpupin_subcommands "$command")
        if [[ " $nested " == *" $word "* ]]; then command=${command:+$command }$word; fi
        ;;
    esac
  done
  if ((cword > 1)) && [[ ${words[cword - 1]} == -* ]]; then
    kind=$(_gpupin_option_value "$command" "${words[cword - 1]}")
    if [[ -n $kind ]]; then
      _gpupin_complete_value "$kind" "$cur"
      return
    fi
  fi
  if [[ $cur == -* ]]; then
    all=$(_gpupin_options "$command")
    if [[ -n $command ]]; then all+=" $(_gpupin_options '')"; fi
    # -h and --help are gpupin's and every command's: offered once.
    mapfile -t COMPREPLY < <(compgen -W "$all" -- "$cur" | awk '!seen[$0]++')
    return
  fi
  nested=$(_gpupin_subcommands "$command")
  if [[ -n $nested ]]; then
    mapfile -t COMPREPLY < <(compgen -W "$nested" -- "$cur")
    return
  fi
  kind=$(_gpupin_arguments "$command")
  if [[ -n $kind ]]; then _gpupin_complete_value "$kind" "$cur"; fi
}
complete -F _gpupin gpupin
)sh";

std::string ZshSpecHelp(std::string_view help) {
  std::string escaped;
  for (char c : help) {
    if (c == '[' || c == ']' || c == '\\') escaped += '\\';
    escaped += c;
  }
  return escaped;
}

std::string ZshAction(CompletionValue value, const std::vector<std::string>& choices) {
  switch (value) {
    case CompletionValue::kNone:
    case CompletionValue::kText:
      return " ";
    case CompletionValue::kChoices:
      return fmt::format("({})", fmt::join(choices, " "));
    case CompletionValue::kFile:
      return "_files";
    case CompletionValue::kDirectory:
      return "_files -/";
    case CompletionValue::kGpuIds:
      return "_gpupin_gpus";
    case CompletionValue::kLeaseIds:
      return "_gpupin_leases";
  }
  return " ";
}

// One _arguments spec per option name: `--prefer=[ranking]:value:(a b)`.
std::vector<std::string> ZshSpecs(const CompletableCommand& command) {
  std::vector<std::string> specs;
  for (const CompletableOption& option : command.options) {
    for (const std::string& name : option.names) {
      std::string spec = name;
      if (option.value != CompletionValue::kNone) {
        spec += option.value_optional ? "=-" : (name.starts_with("--") ? "=" : "+");
      }
      spec += fmt::format("[{}]", ZshSpecHelp(option.help));
      if (option.value != CompletionValue::kNone) {
        spec += fmt::format("{}:value:{}", option.value_optional ? ":" : "",
                            ZshAction(option.value, option.choices));
      }
      specs.push_back(Quote(spec));
    }
  }
  return specs;
}

std::string ZshFunctionName(const CompletableCommand& command) {
  return fmt::format("_gpupin_cmd{}{}", command.path.empty() ? "" : "_",
                     fmt::join(command.path, "_"));
}

constexpr std::string_view kZshHelpers = R"zsh(
# Asks gpupin for ids (`completion --list gpus|leases`), with the global
# options of the command line, such as --simulate FILE, passed on.
_gpupin_list() {
  local -a forwarded
  local i
  for ((i = 2; i < ${#_gpupin_words}; i++)); do
    if (( ${_gpupin_forwarded[(Ie)${_gpupin_words[i]}]} )); then
      forwarded+=(${_gpupin_words[i]} ${_gpupin_words[i+1]})
    elif (( ${_gpupin_forwarded[(Ie)${_gpupin_words[i]%%=*}]} )); then
      forwarded+=(${_gpupin_words[i]})
    fi
  done
  reply=(${(f)"$(${_gpupin_words[1]} $forwarded completion --list $1 2>/dev/null)"})
}

_gpupin_gpus() {
  local -a reply
  _gpupin_list gpus
  (( $#reply )) && _values -s , 'GPU id' $reply
}

_gpupin_leases() {
  local -a reply
  _gpupin_list leases
  (( $#reply )) && compadd -a reply
}
)zsh";

std::string FishValueFlags(const CompletableOption& option) {
  switch (option.value) {
    case CompletionValue::kNone:
      return "";
    case CompletionValue::kText:
      return " -x";
    case CompletionValue::kChoices:
      return fmt::format(" -x -a {}", FishQuote(fmt::format("{}", fmt::join(option.choices, " "))));
    case CompletionValue::kFile:
      return " -r -F";
    case CompletionValue::kDirectory:
      return " -x -a '(__fish_complete_directories)'";
    case CompletionValue::kGpuIds:
      return " -x -a '(__fish_complete_list , \"__gpupin_list gpus\")'";
    case CompletionValue::kLeaseIds:
      return " -x -a '(__gpupin_list leases)'";
  }
  return "";
}

}  // namespace

std::string BashCompletion(const std::vector<CompletableCommand>& commands) {
  std::string out =
      "# bash completion for gpupin, generated from its command table by "
      "`gpupin completion bash`.\n\n";
  out += "# The commands nested in command $1 (\"\" for gpupin itself).\n";
  out += "_gpupin_subcommands() {\n  case $1 in\n";
  for (const CompletableCommand& command : commands) {
    std::vector<std::string> names;
    for (const CompletableCommand* child : Children(commands, command)) {
      names.push_back(child->path.back());
    }
    if (names.empty()) continue;
    out += fmt::format("    {}) echo {} ;;\n", Quote(PathText(command)),
                       Quote(fmt::format("{}", fmt::join(names, " "))));
  }
  out += "  esac\n}\n\n";

  out += "# The options of command $1; gpupin's own (\"\") are valid after any command.\n";
  out += "_gpupin_options() {\n  case $1 in\n";
  for (const CompletableCommand& command : commands) {
    std::vector<std::string> names;
    for (const CompletableOption& option : command.options) {
      names.insert(names.end(), option.names.begin(), option.names.end());
    }
    out += fmt::format("    {}) echo {} ;;\n", Quote(PathText(command)),
                       Quote(fmt::format("{}", fmt::join(names, " "))));
  }
  out += "  esac\n}\n\n";

  out += "# What option $2 of command $1 takes as its next word: nothing for a flag.\n";
  out += "_gpupin_option_value() {\n  case \"$1|$2\" in\n";
  // gpupin's own options last: a command's option of the same name wins.
  for (size_t i = commands.size(); i-- > 0;) {
    const CompletableCommand& command = commands[i];
    for (const CompletableOption& option : command.options) {
      if (!TakesValueWord(option)) continue;
      for (const std::string& name : option.names) {
        // fmt rather than `"|" + name`: GCC 12 at -O3 reports a false
        // -Wrestrict on a string literal prepended to a std::string.
        const std::string pattern = command.path.empty()
                                        ? fmt::format("*{}", Quote(fmt::format("|{}", name)))
                                        : Quote(fmt::format("{}|{}", PathText(command), name));
        out += fmt::format("    {}) echo {} ;;\n", pattern,
                           Quote(KindWord(option.value, option.choices)));
      }
    }
  }
  out += "  esac\n}\n\n";

  out += "# What the words of command $1 that are not options are.\n";
  out += "_gpupin_arguments() {\n  case $1 in\n";
  for (const CompletableCommand& command : commands) {
    if (command.arguments == CompletionValue::kNone) continue;
    out += fmt::format("    {}) echo {} ;;\n", Quote(PathText(command)),
                       Quote(KindWord(command.arguments, command.argument_choices)));
  }
  out += "  esac\n}\n\n";

  std::vector<std::string> runners;
  for (const CompletableCommand& command : commands) {
    if (command.runs_command) runners.push_back(Quote(PathText(command)));
  }
  out += "# Whether command $1 takes a command line of the user's after \"--\".\n";
  out += fmt::format(
      "_gpupin_runs_command() {{\n  case $1 in\n    {}) return 0 ;;\n  esac\n  "
      "return 1\n}}\n\n",
      runners.empty() ? "''" : fmt::format("{}", fmt::join(runners, " | ")));

  const std::vector<std::string> forwarded = ForwardedOptions(commands.front());
  out += "# Whether option $1 is passed on when asking gpupin for ids.\n";
  out += fmt::format(
      "_gpupin_forwarded() {{\n  case $1 in\n    {}) return 0 ;;\n  esac\n  "
      "return 1\n}}\n",
      forwarded.empty() ? "''" : fmt::format("{}", fmt::join(forwarded, " | ")));
  out += kBashMain;
  return out;
}

std::string ZshCompletion(const std::vector<CompletableCommand>& commands) {
  std::string out =
      "#compdef gpupin\n# zsh completion for gpupin, generated from its command table by "
      "`gpupin completion zsh`.\n";
  out += kZshHelpers;
  // Commands are printed children first, so that each function exists
  // before the one that calls it is read (zsh does not need it; a reader does).
  for (size_t i = commands.size(); i-- > 0;) {
    const CompletableCommand& command = commands[i];
    const std::vector<const CompletableCommand*> children = Children(commands, command);
    std::vector<std::string> specs = ZshSpecs(command);
    out += fmt::format("\n{}() {{\n", ZshFunctionName(command));
    if (children.empty()) {
      switch (command.arguments) {
        case CompletionValue::kNone:
          break;
        case CompletionValue::kLeaseIds:
          specs.emplace_back("'*: :_gpupin_leases'");
          break;
        case CompletionValue::kFile:
          specs.emplace_back("'*: :_files'");
          break;
        case CompletionValue::kChoices:
          specs.push_back(
              Quote(fmt::format("*: :{}", ZshAction(command.arguments, command.argument_choices))));
          break;
        default:
          specs.emplace_back("'*: : '");
          break;
      }
      if (command.runs_command) specs.emplace_back("'*:: :_normal'");
      out += fmt::format("  _arguments -S $_gpupin_globals \\\n    {}\n}}\n",
                         fmt::join(specs, " \\\n    "));
      continue;
    }
    std::vector<std::string> described;
    std::vector<std::string> cases;
    for (const CompletableCommand* child : children) {
      described.push_back(Quote(
          fmt::format("{}:{}", child->path.back(), ZshSpecHelp(child->summary.substr(0, 200)))));
      cases.push_back(
          fmt::format("        ({}) {} ;;", child->path.back(), ZshFunctionName(*child)));
    }
    const std::string globals = command.path.empty() ? "" : "$_gpupin_globals ";
    out += "  local curcontext=$curcontext state state_descr line\n  typeset -A opt_args\n";
    out += fmt::format("  _arguments -C {}\\\n    {}{}': :->command' '*:: :->argument' && return\n",
                       globals, fmt::format("{}", fmt::join(specs, " \\\n    ")),
                       specs.empty() ? "" : " \\\n    ");
    out += fmt::format(
        "  case $state in\n    (command)\n      local -a commands=(\n        {}\n      )\n      "
        "_describe -t commands command commands\n      ;;\n    (argument)\n      case "
        "$words[1] in\n{}\n      esac\n      ;;\n  esac\n}}\n",
        fmt::join(described, "\n        "), fmt::join(cases, "\n"));
  }
  const std::vector<std::string> root_specs = ZshSpecs(commands.front());
  std::vector<std::string> forwarded;
  for (const std::string& name : ForwardedOptions(commands.front())) {
    forwarded.push_back(Quote(name));
  }
  out += fmt::format(
      "\n_gpupin() {{\n  local -a _gpupin_words _gpupin_globals _gpupin_forwarded\n"
      "  _gpupin_words=(\"${{words[@]}}\")\n"
      "  _gpupin_globals=(\n    {}\n  )\n"
      "  _gpupin_forwarded=({})\n  _gpupin_cmd\n}}\n\n",
      fmt::join(root_specs, "\n    "), fmt::join(forwarded, " "));
  out +=
      "if [[ $zsh_eval_context[-1] == loadautofunc ]]; then\n  _gpupin \"$@\"\nelse\n  "
      "compdef _gpupin gpupin\nfi\n";
  return out;
}

std::string FishCompletion(const std::vector<CompletableCommand>& commands) {
  std::vector<std::string> paths;
  std::vector<std::string> value_cases;
  std::vector<std::string> runners;
  for (const CompletableCommand& command : commands) {
    if (!command.path.empty()) paths.push_back(FishQuote(PathText(command)));
    if (command.runs_command) runners.push_back(FishQuote(PathText(command)));
    for (const CompletableOption& option : command.options) {
      if (!TakesValueWord(option)) continue;
      for (const std::string& name : option.names) {
        value_cases.push_back(command.path.empty() ? "'*|" + name + "'"
                                                   : FishQuote(PathText(command) + "|" + name));
      }
    }
  }
  std::vector<std::string> forwarded;
  for (const std::string& name : ForwardedOptions(commands.front())) {
    forwarded.push_back(FishQuote(name));
  }
  std::string out = fmt::format(
      R"fish(# fish completion for gpupin, generated from its command table by `gpupin completion fish`.

# The command typed so far ("slurm gres"; empty for gpupin itself), or
# nothing and failure past the "--" of a command that runs one.
function __gpupin_path
    set -l tokens (commandline -opc)
    set -l path
    set -l skip 0
    for token in $tokens[2..-1]
        if test $skip = 1
            set skip 0
            continue
        end
        switch $token
            case --
                contains -- (string join ' ' $path) {}; and return 1
            case '-*=*'
            case '-*'
                switch (string join ' ' $path)"|$token"
                    case {}
                        set skip 1
                end
            case '*'
                if contains -- (string join ' ' $path $token) {}
                    set path $path $token
                end
        end
    end
    string join ' ' $path
    return 0
end

function __gpupin_is
    set -l path (__gpupin_path); or return 1
    test "$path" = "$argv"
end

function __gpupin_after_separator
    not __gpupin_path >/dev/null
end

# Asks gpupin for ids (`completion --list gpus|leases`), with the global
# options of the command line, such as --simulate FILE, passed on.
function __gpupin_list
    set -l tokens (commandline -opc)
    set -l forwarded
    for i in (seq 2 (count $tokens))
        if contains -- $tokens[$i] {}
            set forwarded $forwarded $tokens[$i] $tokens[(math $i + 1)]
        else if contains -- (string split -m 1 = -- $tokens[$i])[1] {}
            set forwarded $forwarded $tokens[$i]
        end
    end
    $tokens[1] $forwarded completion --list $argv 2>/dev/null
end

complete -c gpupin -f
complete -c gpupin -n __gpupin_after_separator -F
)fish",
      runners.empty() ? "''" : fmt::format("{}", fmt::join(runners, " ")),
      value_cases.empty() ? "''" : fmt::format("{}", fmt::join(value_cases, " ")),
      fmt::join(paths, " "), fmt::join(forwarded, " "), fmt::join(forwarded, " "));

  for (const CompletableCommand& command : commands) {
    const std::string condition =
        command.path.empty() ? ""
                             : fmt::format(" -n {}", FishQuote("__gpupin_is " + PathText(command)));
    for (const CompletableCommand* child : Children(commands, command)) {
      out += fmt::format("complete -c gpupin -n {} -a {} -d {}\n",
                         FishQuote("__gpupin_is " + PathText(command)),
                         FishQuote(child->path.back()), FishQuote(child->summary));
    }
    for (const CompletableOption& option : command.options) {
      std::string names;
      for (const std::string& name : option.names) {
        names += name.starts_with("--") ? " -l " + name.substr(2) : " -s " + name.substr(1);
      }
      // gpupin's own options complete after any command, not past "--".
      const std::string where =
          command.path.empty() ? " -n 'not __gpupin_after_separator'" : condition;
      out += fmt::format("complete -c gpupin{}{}{} -d {}\n", where, names, FishValueFlags(option),
                         FishQuote(option.help));
    }
    if (command.arguments == CompletionValue::kLeaseIds) {
      out += fmt::format("complete -c gpupin{} -a '(__gpupin_list leases)'\n", condition);
    } else if (command.arguments == CompletionValue::kFile) {
      out += fmt::format("complete -c gpupin{} -F\n", condition);
    } else if (command.arguments == CompletionValue::kChoices) {
      out += fmt::format("complete -c gpupin{} -x -a {}\n", condition,
                         FishQuote(fmt::format("{}", fmt::join(command.argument_choices, " "))));
    }
  }
  return out;
}

}  // namespace gpupin
