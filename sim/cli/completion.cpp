#include "completion.hpp"

#include <fmt/format.h>

namespace hcsim {
namespace {

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : " ") + s;
  return out;
}

// The choices of an option whose check is a CLI::IsMember ("TEXT:{table,json}"), else none.
std::vector<std::string> choices(const CLI::Option& opt) {
  const std::string t = opt.get_type_name();
  const auto open = t.find('{'), close = t.rfind('}');
  std::vector<std::string> out;
  if (open == std::string::npos || close == std::string::npos || close < open) return out;
  const std::string list = t.substr(open + 1, close - open - 1);
  for (std::size_t at = 0; at <= list.size();) {
    const auto comma = std::min(list.find(',', at), list.size());
    if (comma > at) out.push_back(list.substr(at, comma - at));
    at = comma + 1;
  }
  return out;
}

// One `case` arm of the script: the options of `cmd`, the completion of their values and
// of its positional argument.
std::string command_arm(const CLI::App& cmd, const std::vector<std::string>& words) {
  std::vector<std::string> names;
  std::string values;  // case "$prev" arms
  std::vector<std::string> file_valued;
  for (const CLI::Option* opt : cmd.get_options()) {
    if (opt->get_positional()) continue;
    std::vector<std::string> spellings;
    for (const auto& l : opt->get_lnames()) spellings.push_back("--" + l);
    for (const auto& s : opt->get_snames()) spellings.push_back("-" + s);
    names.insert(names.end(), spellings.begin(), spellings.end());
    if (opt->get_expected_max() == 0) continue;  // a flag: no value follows
    std::string pattern;
    for (const auto& s : spellings) pattern += (pattern.empty() ? "" : "|") + s;
    const auto c = choices(*opt);
    if (c.empty()) file_valued.push_back(pattern);
    else values += fmt::format("        {}) COMPREPLY=($(compgen -W \"{}\" -- \"$cur\")); return ;;\n", pattern, join(c));
  }
  if (!file_valued.empty()) {
    std::string pattern;
    for (const auto& p : file_valued) pattern += (pattern.empty() ? "" : "|") + p;
    values += fmt::format("        {}) COMPREPLY=($(compgen -f -- \"$cur\")); return ;;\n", pattern);
  }
  std::string arm = fmt::format("    {})\n      opts=\"{}\"\n", cmd.get_name(), join(names));
  if (!words.empty()) arm += fmt::format("      words=\"{}\"\n", join(words));
  if (!values.empty()) arm += "      case \"$prev\" in\n" + values + "      esac\n";
  return arm + "      ;;\n";
}

}  // namespace

std::string bash_completion(const CLI::App& app, const std::map<std::string, std::vector<std::string>>& words) {
  std::vector<std::string> commands;
  std::string arms;
  for (const CLI::App* cmd : app.get_subcommands({})) {
    commands.push_back(cmd->get_name());
    const auto w = words.find(cmd->get_name());
    arms += command_arm(*cmd, w == words.end() ? std::vector<std::string>{} : w->second);
  }
  std::vector<std::string> top;
  for (const CLI::Option* opt : app.get_options())
    for (const auto& l : opt->get_lnames()) top.push_back("--" + l);
  return fmt::format(R"(# bash completion for hcsim, written by `hcsim completion bash` from its command tree.
# Use: source <(hcsim completion bash)
_hcsim() {{
  local cur="${{COMP_WORDS[COMP_CWORD]}}" prev="${{COMP_WORDS[COMP_CWORD-1]}}" opts="" words=""
  COMPREPLY=()
  if (( COMP_CWORD == 1 )); then
    COMPREPLY=($(compgen -W "{} {}" -- "$cur"))
    return
  fi
  case "${{COMP_WORDS[1]}}" in
{}  esac
  if [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "$opts" -- "$cur"))
  elif [[ -n "$words" ]]; then
    COMPREPLY=($(compgen -W "$words" -- "$cur"))
  else
    COMPREPLY=($(compgen -f -X '!*.json' -- "$cur") $(compgen -d -- "$cur"))
  fi
}}
complete -o filenames -F _hcsim hcsim
)",
                     join(commands), join(top), arms);
}

}  // namespace hcsim
