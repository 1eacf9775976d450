#pragma once
// Inline SVG charts for the HTML reports (report_html.cpp, report_diff_html.cpp): pure
// functions from numbers to markup, no scripts, no external resources. Coordinates and
// values are written with fixed decimals, so the same numbers give the same bytes.

#include <string>
#include <string_view>
#include <vector>

namespace hcsim::html {

// Text escaped for HTML element content and attribute values.
std::string escape(std::string_view s);

// The categories of the report's charts, with a fixed colour each: compute phases
// (forward, backward, recompute, optimizer, other), communication kinds (tp, sp, cp, pp,
// zero, dp, offload), the time buckets (compute, bubble, idle) and memory components
// (weights, gradients, optimizer, activations, buffers). Unknown names are grey.
std::string_view colour(std::string_view category);

// Bars side by side or stacked: one bar per row, `values[row][series]` in the chart's unit.
// `marks` (empty or one per row): a tick across each bar at that value (capacity).
struct BarChart {
  std::string id, title, unit;
  std::vector<std::string> series;  // colour(series[k]) fills the k-th part of every bar
  std::vector<std::string> rows;
  std::vector<std::vector<double>> values;
  std::vector<double> marks;
  std::string mark_label;
};
// Horizontal stacked bars, a legend below.
std::string stacked_bars(const BarChart& c);
// Horizontal bars grouped per series: rows[r] are the groups' members (e.g. runs A and B).
std::string grouped_bars(const BarChart& c);

// A Gantt-like timeline whose rows are already aggregated into spans: each span covers
// [a, b] of the step, is coloured by its category and drawn at `opacity` (the share of the
// row's devices busy with it).
struct Span {
  double a = 0, b = 0;
  std::string_view category;
  double opacity = 1;
};
struct TimelineRow {
  std::string label;
  std::vector<Span> spans;
};
// The time axis of a timeline or curve: its ticks are seconds x `scale` in `unit` (ms for a
// step, days for a cluster's month); rows of `row_height` (labels drawn from 10 up).
struct TimeAxis {
  std::string_view unit = "ms";
  double scale = 1e3;
  double row_height = 14;
};
std::string timeline(std::string_view id, std::string_view title, double step_s, const std::vector<TimelineRow>& rows,
                     const TimeAxis& axis = {});

// A step curve of equal-width samples (power over the step).
std::string step_curve(std::string_view id, std::string_view title, std::string_view unit, double step_s,
                       const std::vector<double>& samples, const TimeAxis& axis = {});

// A framed note in place of a chart ("analytical mode: no timeline ...").
std::string note(std::string_view id, std::string_view text);

}  // namespace hcsim::html
