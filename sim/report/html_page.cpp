#include "sim/report/html_page.hpp"

#include <fmt/format.h>

#include "sim/report/html_svg.hpp"

namespace hcsim::html {
namespace {

constexpr std::string_view kStyle = R"(
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:24px auto;max-width:1000px;color:#222;}
h1{font-size:22px;margin:0 0 4px 0;}
h2{font-size:17px;border-bottom:1px solid #ddd;padding-bottom:4px;margin-top:28px;}
.subtitle{color:#555;margin:0 0 12px 0;}
.figures{display:flex;flex-wrap:wrap;gap:10px;}
.figure{border:1px solid #ddd;border-radius:6px;padding:8px 12px;min-width:120px;}
.figure .k{font-size:12px;color:#666;}
.figure .v{font-size:20px;font-weight:600;}
table{border-collapse:collapse;font-size:13px;margin:8px 0;}
th,td{padding:3px 10px;border-bottom:1px solid #eee;}
th{text-align:left;background:#f6f6f6;}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums;}
svg.chart{display:block;margin:10px 0;max-width:100%;height:auto;}
svg .title{font-size:13px;font-weight:600;}
svg .label{font-size:11px;text-anchor:end;}
svg .small{font-size:9px;}
svg .tick{font-size:10px;text-anchor:middle;fill:#555;}
svg .unit{font-size:10px;text-anchor:end;fill:#555;}
svg .legend{font-size:10px;}
svg .grid{stroke:#e4e4e4;stroke-width:1;}
svg .mark{stroke:#000;stroke-width:2;}
svg .curve{fill:#4C72B0;fill-opacity:0.35;stroke:#4C72B0;stroke-width:1;}
.note{border:1px dashed #bbb;padding:10px;color:#555;background:#fafafa;}
footer{margin-top:30px;font-size:12px;color:#777;}
)";

// Errors go to data-errors; data-ready says the script ran to its end. The legend entries
// of a chart toggle its categories (a click dims the others).
constexpr std::string_view kScript = R"(
window.onerror=function(m){var b=document.body;b.dataset.errors=(b.dataset.errors||'')+m+';';};
(function(){
  var charts=document.querySelectorAll('svg.chart');
  document.body.dataset.charts=String(charts.length);
  document.body.dataset.sections=String(document.querySelectorAll('section').length);
  charts.forEach(function(svg){
    svg.querySelectorAll('text.legend').forEach(function(t){
      t.style.cursor='pointer';
      t.addEventListener('click',function(){
        var on=svg.dataset.only===t.textContent?'':t.textContent;svg.dataset.only=on;
        svg.querySelectorAll('rect[fill]').forEach(function(r){
          var tip=r.querySelector('title');
          r.style.opacity=(!on||(tip&&tip.textContent.indexOf(on)>=0))?'':'0.15';
        });
      });
    });
  });
  document.body.dataset.ready='1';
})();
)";

}  // namespace

std::string section(std::string_view id, std::string_view heading, std::string_view body) {
  return fmt::format("<section id=\"{}\">\n<h2>{}</h2>\n{}\n</section>\n", escape(id), escape(heading), body);
}

std::string table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows) {
  std::string out = "<table><thead><tr>";
  for (std::size_t i = 0; i < header.size(); ++i)
    out += fmt::format("<th{}>{}</th>", i ? " class=\"n\"" : "", escape(header[i]));
  out += "</tr></thead><tbody>\n";
  for (const auto& r : rows) {
    out += "<tr>";
    for (std::size_t i = 0; i < r.size(); ++i) out += fmt::format("<td{}>{}</td>", i ? " class=\"n\"" : "", escape(r[i]));
    out += "</tr>\n";
  }
  return out + "</tbody></table>";
}

std::string figures(const std::vector<std::pair<std::string, std::string>>& items) {
  std::string out = "<div class=\"figures\">";
  for (const auto& [k, v] : items)
    out += fmt::format(R"(<div class="figure"><div class="k">{}</div><div class="v">{}</div></div>)", escape(k), escape(v));
  return out + "</div>";
}

std::string page(std::string_view title, std::string_view subtitle, const std::vector<std::string>& sections,
                 std::string_view footer) {
  std::string out = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>{}</title>\n"
      "<style>{}</style>\n</head>\n<body>\n<h1>{}</h1>\n<p class=\"subtitle\">{}</p>\n",
      escape(title), kStyle, escape(title), escape(subtitle));
  for (const std::string& s : sections) out += s;
  out += fmt::format("<footer>{}</footer>\n<script>{}</script>\n</body>\n</html>\n", escape(footer), kScript);
  return out;
}

}  // namespace hcsim::html
