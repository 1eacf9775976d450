// The HTML page of `hcsim diff A.json B.json --html FILE`: the diff's rows as a table, and
// the two runs' time breakdowns and memory side by side as inline SVG bars.
#include <fmt/format.h>

#include "sim/report/html_page.hpp"
#include "sim/report/html_svg.hpp"
#include "sim/report/report_diff.hpp"

namespace hcsim {
namespace {

using nlohmann::json;

double at(const json& j, const std::string& pointer) {
  const json::json_pointer p(pointer);
  return j.contains(p) && j.at(p).is_number() ? j.at(p).get<double>() : 0.0;
}

}  // namespace

std::string report_diff_html(const json& a, const json& b, const std::string& name_a, const std::string& name_b) {
  const std::vector<DiffRow> rows = report_diff_rows(a, b);
  std::vector<std::vector<std::string>> cells;
  for (const DiffRow& r : rows) cells.push_back({r.label, diff_value(r, r.a), diff_value(r, r.b), diff_change(r)});
  const std::string table = html::table({"metric", "A: " + name_a, "B: " + name_b, "change (B − A) / A"}, cells);

  // Breakdown: the time rows of the diff (compute, exposed kinds, bubble, idle), in ms.
  html::BarChart t{"diff-breakdown", "time breakdown, mean over devices", "ms", {"A", "B"}, {}, {}, {}, {}};
  for (const DiffRow& r : rows) {
    if (r.pointer.rfind("/breakdown/", 0) != 0) continue;
    t.rows.push_back(r.label);
    t.values.push_back({r.a.value_or(0) * 1e3, r.b.value_or(0) * 1e3});
  }
  html::BarChart m{"diff-memory", "memory per device (the device with the least headroom)", "GiB", {"A", "B"},
                   {}, {}, {}, {}};
  for (const char* k : {"peak", "capacity"}) {
    const std::string ptr = std::string("/memory/") + k + "_bytes";
    m.rows.emplace_back(k);
    m.values.push_back({at(a, ptr) / 1073741824.0, at(b, ptr) / 1073741824.0});
  }
  const std::string legend = fmt::format("<p>A = {}, B = {}.</p>\n", html::escape(name_a), html::escape(name_b));
  const std::vector<std::string> sections{
      html::section("summary", "Compared figures", legend + table),
      html::section("plots", "Side by side", html::grouped_bars(t) + html::grouped_bars(m)),
  };
  const std::string title = fmt::format("hcsim diff: {} vs {}", a.value("scenario", std::string("?")),
                                        b.value("scenario", std::string("?")));
  return html::page(title, name_a + " → " + name_b, sections, "hcsim-report-diff/1");
}

}  // namespace hcsim
