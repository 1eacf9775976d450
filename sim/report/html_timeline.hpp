#pragma once
// The HTML report's timeline, aggregated so that its size does not grow with the cluster:
// up to `max_units` simulated devices, a compute row and a communication row per device;
// beyond, the same two rows per pipeline stage, over the stage's simulated devices. Each
// row is cut into `bins` equal intervals of the step; an interval takes the category
// (compute phase or communication kind) that kept the row's devices busiest in it, drawn
// at the share of device time busy (rounded to tenths), and equal neighbours merge.

#include "sim/report/html_svg.hpp"
#include "sim/report/run_output.hpp"

namespace hcsim {

struct TimelineOptions {
  int max_units = 16;
  int bins = 600;
};

struct AggregatedTimeline {
  bool per_stage = false;  // rows per stage (more simulated devices than max_units)
  std::vector<html::TimelineRow> rows;
};

AggregatedTimeline aggregate_timeline(const TaskGraph& g, const EngineResult& r, const Metrics& m,
                                      const TimelineOptions& opt = {});

}  // namespace hcsim
