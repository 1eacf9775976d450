#pragma once
// The frame shared by the HTML reports: one self-contained page (inline style and script,
// no network), its sections, and small table helpers. The inline script records any error
// in `data-errors` on <body> and sets `data-ready="1"` once it has run, so a headless
// browser can tell a page that worked from one that did not.

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace hcsim::html {

// <section id="ID"><h2>HEADING</h2>BODY</section>
std::string section(std::string_view id, std::string_view heading, std::string_view body);

// A table; `header` and each row's cells are text (escaped here). Cells after the first are
// right-aligned (numbers).
std::string table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows);

// A row of headline figures: (label, value) pairs.
std::string figures(const std::vector<std::pair<std::string, std::string>>& items);

// The whole page: <!DOCTYPE html> ... with `title`, a subtitle line, the sections in order.
std::string page(std::string_view title, std::string_view subtitle, const std::vector<std::string>& sections,
                 std::string_view footer);

}  // namespace hcsim::html
