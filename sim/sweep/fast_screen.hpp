#pragma once
// The analytical screen of `hcsim search` without a scenario per candidate: the base is
// parsed once and, per device count, resized and handed to FastAnalytical
// (sim/driver/fast_analytical.hpp), which evaluates a layout in microseconds instead of the
// milliseconds of parsing and running its scenario. The rows are taken by device count (in
// their order within one), so one cluster is held at a time; their clusters share the times
// of collectives inside one node (StarTimes, sim/driver/collective_times.hpp); under the
// memory check a layout that does not fit is refused untimed. A row it decides gets the record (or its outcome) the
// full path would write (sim/sweep/record.hpp): the same status, the same memory-check
// reason, the same metrics up to summation order (tests/sweep/fast_screen_test.cpp), and a
// layout the parser refuses gets the parser's messages (workloads/layout.hpp: the one copy of
// the layout rules) and the analytical task bound's message where it applies. It leaves to
// the full path
//  - every row, when the base or the metrics are outside what it reproduces: more than one
//    device pool, optimizer-state offload, metrics other than the defaults, a base that
//    does not parse;
//  - the rows of a device count whose cluster fails to build for a reason other than bad
//    input (a topology that cannot hold the count gets the topology's messages).

#include <cstddef>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "sim/sweep/search_runner.hpp"
#include "sim/sweep/sweep_spec.hpp"

namespace hcsim::sweep {

struct FastScreen {
  std::vector<std::pair<std::size_t, std::string>> records;  // (row, record line) decided here
  std::vector<std::size_t> rest;                              // rows left to the full path
};

// Screens rows `which` of `rows` at the analytical fidelity with the report `metrics`.
// With `on_record`, each row's outcome goes to it as it is made (after the last read of that
// row), instead of into FastScreen::records as a record line: a search of many candidates
// need not hold them all, nor make a record of each.
using RecordFn = std::function<void(std::size_t row, RowOutcome outcome)>;
FastScreen fast_screen(const SearchSpec& spec, const std::vector<SearchRow>& rows,
                       const std::vector<std::size_t>& which, const std::vector<MetricColumn>& metrics,
                       const RecordFn& on_record = {});

}  // namespace hcsim::sweep
