#include "sim/report/html_svg.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>

#include <fmt/format.h>

namespace hcsim::html {
namespace {

constexpr double kWidth = 960, kLabel = 210, kRight = 20, kBar = 18, kGap = 6, kTop = 30;
constexpr double kPlot = kWidth - kLabel - kRight;

// Fixed two decimals: coordinates; locale-free and the same on every machine.
std::string px(double v) { return fmt::format("{:.2f}", v); }

// A round axis maximum at or above `v`: 1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6 or 8 times a
// power of ten (bars fill at least 80 % of the axis).
double nice_max(double v) {
  if (!(v > 0)) return 1;
  const double p = std::pow(10.0, std::floor(std::log10(v)));
  for (double m : {1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0})
    if (m * p >= v * (1 - 1e-12)) return m * p;
  return 10 * p;
}

std::string axis(double y0, double y1, double max, std::string_view unit) {
  std::string out;
  for (int i = 0; i <= 5; ++i) {
    const double x = kLabel + kPlot * i / 5.0;
    out += fmt::format(R"(<line x1="{0}" y1="{1}" x2="{0}" y2="{2}" class="grid"/>)", px(x), px(y0), px(y1));
    out += fmt::format(R"(<text x="{}" y="{}" class="tick">{:.4g}</text>)", px(x), px(y1 + 14), max * i / 5.0);
  }
  out += fmt::format(R"(<text x="{}" y="{}" class="unit">{}</text>)", px(kLabel + kPlot), px(y1 + 28), escape(unit));
  return out;
}

std::string legend(const std::vector<std::string>& series, double y) {
  std::string out;
  double x = kLabel;
  for (const std::string& s : series) {
    out += fmt::format(R"(<rect x="{}" y="{}" width="10" height="10" fill="{}"/>)", px(x), px(y), colour(s));
    out += fmt::format(R"(<text x="{}" y="{}" class="legend">{}</text>)", px(x + 14), px(y + 9), escape(s));
    x += 24 + 7.0 * static_cast<double>(s.size());
    if (x > kWidth - 120) {
      x = kLabel;
      y += 16;
    }
  }
  return out;
}

std::string open_svg(std::string_view id, std::string_view title, double height) {
  return fmt::format(R"(<svg id="{}" class="chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {} {}" )"
                     R"(width="{}" height="{}" role="img"><title>{}</title>)"
                     R"(<text x="0" y="16" class="title">{}</text>)",
                     escape(id), px(kWidth), px(height), px(kWidth), px(height), escape(title), escape(title));
}

std::string row_label(double y, std::string_view label) {
  return fmt::format(R"(<text x="{}" y="{}" class="label">{}</text>)", px(kLabel - 6), px(y + kBar * 0.7),
                     escape(label));
}

}  // namespace

std::string escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string_view colour(std::string_view category) {
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 24> kColours{{
      {"forward", "#4C72B0"},   {"compute", "#4C72B0"},     {"backward", "#DD8452"},   {"recompute", "#8172B3"},
      {"optimizer", "#937860"}, {"other", "#A0A0A0"},       {"tp", "#55A868"},         {"sp", "#64B5CD"},
      {"cp", "#2F4F4F"},        {"pp", "#C44E52"},          {"zero", "#CCB974"},       {"dp", "#DA8BC3"},
      {"offload", "#8C8C8C"},   {"bubble", "#E8E8E8"},      {"idle", "#F5F0C8"},       {"weights", "#4C72B0"},
      {"gradients", "#DD8452"}, {"activations", "#55A868"}, {"buffers", "#8C8C8C"},    {"A", "#4C72B0"},
      {"waiting", "#E8E8E8"},   {"contended", "#C44E52"},   {"restarting", "#937860"}, {"running", "#4C72B0"},
  }};
  for (const auto& [k, v] : kColours)
    if (k == category) return v;
  if (category == "B") return "#DD8452";
  if (category.starts_with("exposed ")) return colour(category.substr(8));
  return "#999999";
}

std::string stacked_bars(const BarChart& c) {
  double max = 0;
  for (std::size_t r = 0; r < c.rows.size(); ++r) {
    double sum = 0;
    for (double v : c.values[r]) sum += std::max(0.0, v);
    max = std::max({max, sum, r < c.marks.size() ? c.marks[r] : 0.0});
  }
  max = nice_max(max);
  const double plot_h = static_cast<double>(c.rows.size()) * (kBar + kGap);
  const double height = kTop + plot_h + 40 + 16 * (1 + static_cast<double>(c.series.size()) / 8);
  std::string out = open_svg(c.id, c.title, height);
  out += axis(kTop - 4, kTop + plot_h, max, c.unit);
  for (std::size_t r = 0; r < c.rows.size(); ++r) {
    const double y = kTop + static_cast<double>(r) * (kBar + kGap);
    out += row_label(y, c.rows[r]);
    double x = kLabel;
    for (std::size_t k = 0; k < c.series.size() && k < c.values[r].size(); ++k) {
      const double w = std::max(0.0, c.values[r][k]) / max * kPlot;
      if (w <= 0) continue;
      out += fmt::format(R"(<rect x="{}" y="{}" width="{}" height="{}" fill="{}"><title>{}: {:.4g} {}</title></rect>)",
                         px(x), px(y), px(w), px(kBar), colour(c.series[k]), escape(c.series[k]), c.values[r][k],
                         escape(c.unit));
      x += w;
    }
    if (r < c.marks.size() && c.marks[r] > 0) {
      const double mx = kLabel + c.marks[r] / max * kPlot;
      out += fmt::format(R"(<line x1="{0}" y1="{1}" x2="{0}" y2="{2}" class="mark"><title>{3}: {4:.4g} {5}</title></line>)",
                         px(mx), px(y - 2), px(y + kBar + 2), escape(c.mark_label), c.marks[r], escape(c.unit));
    }
  }
  out += legend(c.series, kTop + plot_h + 34);
  return out + "</svg>";
}

std::string grouped_bars(const BarChart& c) {
  // Each row a group of one bar per series.
  double max = 0;
  for (const auto& v : c.values)
    for (double x : v) max = std::max(max, x);
  max = nice_max(max);
  const double n = static_cast<double>(c.series.size());
  const double group_h = n * kBar * 0.8 + kGap;
  const double plot_h = static_cast<double>(c.rows.size()) * group_h;
  std::string out = open_svg(c.id, c.title, kTop + plot_h + 60);
  out += axis(kTop - 4, kTop + plot_h, max, c.unit);
  for (std::size_t r = 0; r < c.rows.size(); ++r) {
    const double y = kTop + static_cast<double>(r) * group_h;
    out += row_label(y + (n - 1) * kBar * 0.4, c.rows[r]);
    for (std::size_t k = 0; k < c.series.size() && k < c.values[r].size(); ++k) {
      const double w = std::max(0.0, c.values[r][k]) / max * kPlot;
      out += fmt::format(R"(<rect x="{}" y="{}" width="{}" height="{}" fill="{}"><title>{} {}: {:.4g} {}</title></rect>)",
                         px(kLabel), px(y + static_cast<double>(k) * kBar * 0.8), px(w), px(kBar * 0.75),
                         colour(c.series[k]), escape(c.rows[r]), escape(c.series[k]), c.values[r][k], escape(c.unit));
    }
  }
  out += legend(c.series, kTop + plot_h + 34);
  return out + "</svg>";
}

std::string timeline(std::string_view id, std::string_view title, double step_s, const std::vector<TimelineRow>& rows,
                     const TimeAxis& time) {
  const double row_h = time.row_height, plot_h = static_cast<double>(rows.size()) * row_h;
  std::vector<std::string> used;
  for (const TimelineRow& r : rows)
    for (const Span& s : r.spans)
      if (std::find(used.begin(), used.end(), s.category) == used.end()) used.emplace_back(s.category);
  std::sort(used.begin(), used.end());
  std::string out = open_svg(id, title, kTop + plot_h + 70);
  const double scale = step_s > 0 ? kPlot / step_s : 0;
  out += axis(kTop - 4, kTop + plot_h, step_s * time.scale, time.unit);
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const double y = kTop + static_cast<double>(r) * row_h;
    if (row_h >= 10)
      out += fmt::format(R"(<text x="{}" y="{}" class="label small">{}</text>)", px(kLabel - 6), px(y + row_h * 0.75),
                         escape(rows[r].label));
    for (const Span& s : rows[r].spans)
      out +=
          fmt::format(R"(<rect x="{}" y="{}" width="{}" height="{}" fill="{}" fill-opacity="{:.1f}"/>)",
                      px(kLabel + s.a * scale), px(y + (row_h >= 10 ? 1 : 0)), px(std::max(0.3, (s.b - s.a) * scale)),
                      px(row_h >= 10 ? row_h - 2 : row_h), colour(s.category), s.opacity);
  }
  out += legend(used, kTop + plot_h + 34);
  return out + "</svg>";
}

std::string step_curve(std::string_view id, std::string_view title, std::string_view unit, double step_s,
                       const std::vector<double>& samples, const TimeAxis& time) {
  const double plot_h = 160;
  double max = 0;
  for (double v : samples) max = std::max(max, v);
  max = nice_max(max);
  std::string out = open_svg(id, title, kTop + plot_h + 40);
  out += axis(kTop, kTop + plot_h, step_s * time.scale, time.unit);
  std::string path = fmt::format("M{} {}", px(kLabel), px(kTop + plot_h));
  const double w = samples.empty() ? 0 : kPlot / static_cast<double>(samples.size());
  for (std::size_t i = 0; i < samples.size(); ++i) {
    const double y = kTop + plot_h - samples[i] / max * plot_h;
    path += fmt::format(" L{} {} L{} {}", px(kLabel + w * static_cast<double>(i)), px(y),
                        px(kLabel + w * static_cast<double>(i + 1)), px(y));
  }
  path += fmt::format(" L{} {} Z", px(kLabel + kPlot), px(kTop + plot_h));
  out += fmt::format(R"(<path d="{}" class="curve"/>)", path);
  out += fmt::format(R"(<text x="{}" y="{}" class="label">{:.4g} {}</text>)", px(kLabel - 6), px(kTop + 10), max,
                     escape(unit));
  out += fmt::format(R"(<text x="{}" y="{}" class="label">0</text>)", px(kLabel - 6), px(kTop + plot_h));
  return out + "</svg>";
}

std::string note(std::string_view id, std::string_view text) {
  return fmt::format(R"(<p id="{}" class="note">{}</p>)", escape(id), escape(text));
}

}  // namespace hcsim::html
