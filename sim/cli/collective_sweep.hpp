#pragma once
// One nccl-tests-like sweep of a collective on a scenario's cluster, shared by `hcsim
// collective` and the collective cases of `hcsim validate-suite`: sizes grow by a factor
// from the smallest to the largest; each size is one collective task of a task graph in
// which each waits for the previous one, replayed once by the engine. Per size: the
// simulated time, nccl-tests' algbw = S / t and busbw = algbw x factor (all-reduce
// 2(n-1)/n; reduce-scatter, all-gather, all-to-all (n-1)/n; broadcast, reduce, send/recv 1;
// nccl-tests doc/PERFORMANCE.md, formulas.md §6), the collective cost model's estimate
// beside it, and the dynamic network energy of the bytes the collective moves.
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "scenarios/scenario.hpp"
#include "sim/engine/engine.hpp"

namespace hcsim {

struct CollectiveRequest {
  std::string op = "all_reduce", algorithm = "auto", group = "all", min = "8 B", max = "8 GiB", mode = "event",
              flow_schedule;  // flow mode: steps or phases; empty: the scenario's simulation.flow_schedule
  double step_factor = 2;
  // Where a request field came from, for the bad-input message: `hcsim collective` names its
  // options (--op), a suite case its JSON path.
  std::function<std::string(std::string_view field)> where = [](std::string_view f) { return "--" + std::string(f); };
};

struct CollectiveRow {
  double size = 0, time = 0, algbw = 0, busbw = 0, model_time = 0, model_busbw = 0, energy = 0;
  std::string algorithm, protocol;
  int chunks = 1, channels = 1;
};

struct CollectiveSweep {
  std::vector<CollectiveRow> rows;
  EngineResult result;
  bool phases = false;  // flow mode by phases
  std::size_t ranks = 0;
};

// nccl-tests counts elements of the benchmarked type; hcsim's buffers are float32.
constexpr double kCollectiveElementBytes = 4;

// Sizes as hcsim quantities ("8 B", "1 GiB") or as nccl-tests writes them: a byte count
// with an optional binary suffix K, M or G ("8", "128M", "8G"). InputError at `where`.
double parse_collective_size(const std::string& text, const std::string& where);

// InputError (at the request's `where`) for an unknown operation, algorithm, group or size.
CollectiveSweep run_collective_sweep(const Scenario& sc, const CollectiveRequest& req);

// One row as `hcsim collective --format json` writes it (sizes in B, times in s, B/s, J).
nlohmann::json collective_row_json(const CollectiveRow& w);

}  // namespace hcsim
