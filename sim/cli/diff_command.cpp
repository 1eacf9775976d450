// `hcsim diff A.json B.json`: two reports side by side with relative changes.
#include <iostream>
#include <memory>

#include "scenarios/scenario.hpp"
#include "output.hpp"
#include "sim/cli/command.hpp"
#include "sim/report/report_diff.hpp"

namespace hcsim {
namespace {

struct DiffArgs {
  std::string a, b;
  std::string format = "table";
  std::string html;  // also write the diff as an HTML page to this file
};

int diff(const DiffArgs& args) {
  const nlohmann::json a = read_json_file(args.a);
  const nlohmann::json b = read_json_file(args.b);
  check_report(a, args.a);
  check_report(b, args.b);
  if (!args.html.empty()) write_file_atomic(args.html, report_diff_html(a, b, args.a, args.b));
  if (args.format == "json") std::cout << report_diff_json(a, b, args.a, args.b).dump(2) << "\n";
  else std::cout << report_diff_table(a, b, args.a, args.b);
  return 0;
}

}  // namespace

void add_diff_command(CLI::App& app, Commands& cmds) {
  auto args = std::make_shared<DiffArgs>();
  auto* cmd = app.add_subcommand("diff", "compare two JSON reports side by side, with relative changes");
  cmd->add_option("a", args->a, "baseline report (hcsim run --format json)")->required();
  cmd->add_option("b", args->b, "report to compare with it")->required();
  cmd->add_option("--format", args->format, "table or json")->check(CLI::IsMember({"table", "json"}));
  cmd->add_option("--html", args->html, "also write the comparison as a self-contained HTML page to FILE");
  cmds.push_back({cmd, [args] { return diff(*args); }});
}

}  // namespace hcsim
