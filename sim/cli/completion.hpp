#pragma once
// `hcsim completion bash`: a bash completion script written from the CLI11 command tree,
// so a new subcommand or option is offered as soon as it is declared.

#include <map>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace hcsim {

// `words`: per subcommand, the words its positional argument takes (`list`'s families);
// every other positional completes .json files and directories, every option's value files,
// or its choices where a CLI::IsMember check declares them ("TEXT:{table,json}").
std::string bash_completion(const CLI::App& app, const std::map<std::string, std::vector<std::string>>& words);

}  // namespace hcsim
