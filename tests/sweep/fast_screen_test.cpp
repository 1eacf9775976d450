// The fast analytical screen of `hcsim search` (sim/sweep/fast_screen.cpp) against the full
// path (the candidate's scenario parsed and run in analytical mode, sim/sweep/
// scenario_source.cpp): for every candidate it decides, the same status and reason, and the
// same metrics to 1e-9 relative (they differ only in summation order), and for a layout the
// parser rejects the parser's own messages (workloads/layout.hpp: one copy of the rules)
// or the topology's. The spaces mix valid layouts, layouts the parser rejects (heads,
// batch, layers, a device count the nodes cannot hold) and layouts that do not fit.
#include "sim/sweep/fast_screen.hpp"

#include <map>
#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "scenarios/scenario.hpp"
#include "sim/sweep/record.hpp"
#include "sim/sweep/scenario_source.hpp"

namespace hcsim::sweep {
namespace {

std::vector<SearchRow> rows_of(const SearchSpec& spec) {
  std::vector<SearchRow> rows;
  for (auto& c : enumerate_candidates(spec)) {
    SearchRow r;
    r.candidate = std::move(c);
    rows.push_back(std::move(r));
  }
  return rows;
}

// Returns how many rows the fast path decided, and how many of them were ok / infeasible.
struct Counts {
  std::size_t fast = 0, ok = 0, infeasible = 0, rest = 0;
  std::string reasons;  // of the infeasible ones, one per line
};

Counts expect_same_as_full_path(const SearchSpec& spec) {
  const std::vector<SearchRow> rows = rows_of(spec);
  std::vector<std::size_t> all(rows.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  const auto metrics = default_metrics();
  const FastScreen fast = fast_screen(spec, rows, all, metrics);
  Counts n;
  n.fast = fast.records.size();
  n.rest = fast.rest.size();
  EXPECT_EQ(fast.records.size() + fast.rest.size(), rows.size());
  for (const auto& [i, line] : fast.records) {
    const auto got = nlohmann::json::parse(line);
    const Evaluation ev =
        evaluate_scenario(candidate_document(spec, rows[i].candidate, "analytical"), spec.base.file, false);
    const auto want = nlohmann::json::parse(make_record(i, rows[i].candidate.params(), ev, metrics));
    SCOPED_TRACE(describe_layout(rows[i].candidate));
    EXPECT_EQ(got["status"], want["status"]) << want.value("reason", "");
    if (got["status"] != want["status"]) continue;
    EXPECT_EQ(got["params"], want["params"]);
    if (want["status"] == "ok") {
      ++n.ok;
      for (const auto& c : metrics) {
        const double a = got["metrics"][c.name].get<double>(), b = want["metrics"][c.name].get<double>();
        EXPECT_NEAR(a, b, 1e-9 * std::abs(b)) << c.name;
      }
    } else {
      ++n.infeasible;
      EXPECT_EQ(got["reason"], want["reason"]);
      n.reasons += got["reason"].get<std::string>() + "\n";
    }
  }
  // What it leaves aside, the parser rejects (these spaces have no other reason to).
  for (std::size_t i : fast.rest) {
    const Evaluation ev =
        evaluate_scenario(candidate_document(spec, rows[i].candidate, "analytical"), spec.base.file, false);
    EXPECT_EQ(ev.status, "infeasible") << describe_layout(rows[i].candidate);
  }
  return n;
}

const std::string kSweeps = std::string(HCSIM_SOURCE_DIR) + "/scenarios/sweeps/";

TEST(FastScreen, MatchesTheFullPathOnTheQuickstartSearch) {
  register_builtins();
  const Counts n = expect_same_as_full_path(load_search(kSweeps + "quickstart-search.json"));
  EXPECT_GT(n.ok, 100u);
}

TEST(FastScreen, MatchesTheFullPathWhereLayoutsAreRejectedOrDoNotFit) {
  register_builtins();
  // GPT-3 6.7B (32 heads, 32 layers) on up to 64 A100 40 GB: tp 3 and 6 break the heads,
  // pp 3 and 5 the layers, micro-batch 3 the batch; small tp * pp do not fit in 40 GB.
  const nlohmann::json doc = {
      {"base",
       {{"cluster",
         {{"pools", {{{"preset", "nvidia-a100-40gb-sxm"}, {"count", 64}}}},
          {"topology", {{"type", "nvswitch-cluster"}, {"gpus_per_node", 8}}}}},
        {"workload", {{"model", {{"preset", "gpt3-6.7b"}}}, {"global_batch", 96}, {"micro_batch", 1}}},
        {"strategy", {{"tp", 8}, {"pp", 1}, {"dp", 8}}}}},
      {"max_devices", 64},
      {"space",
       {{"tp", {1, 2, 3, 4, 6, 8}},
        {"pp", {1, 2, 3, 4, 5}},
        {"micro_batch", {1, 2, 3}},
        {"schedule", {"gpipe", "1f1b", "interleaved-1f1b"}},
        {"interleave", {2}},
        {"recompute", {"none", "full"}},
        {"zero", {0, 1, 3}},
        {"sequence_parallel", {false, true}}}}};
  const Counts n = expect_same_as_full_path(parse_search(doc, "search.json"));
  EXPECT_GT(n.ok, 50u);
  EXPECT_GT(n.infeasible, 100u);  // out of memory, or rejected by the parser, with their reasons
  EXPECT_EQ(n.rest, 0u);          // every candidate decided by the fast path
}

TEST(FastScreen, MatchesTheFullPathWithANamedAlgorithmAndContextParallelism) {
  register_builtins();
  // A collective algorithm named in the base is resolved as the engine resolves it, and
  // the base's context parallelism is every candidate's: a candidate holds tp*pp*dp*cp
  // devices.
  SearchSpec spec = load_search(kSweeps + "quickstart-search.json");
  spec.base.doc["simulation"]["collective_algorithm"] = "ring";
  const Counts named = expect_same_as_full_path(spec);
  EXPECT_GT(named.ok, 100u);
  EXPECT_EQ(named.rest, 0u);
  spec.base.doc["strategy"] = {{"dp", 1}, {"tp", 4}, {"pp", 2}, {"cp", 2}};
  spec = parse_search({{"base", spec.base.doc}, {"max_devices", 16}, {"space", {{"tp", {1, 2, 4}}, {"pp", {1, 2}}}}},
                      spec.file);
  EXPECT_EQ(spec.base_cp, 2);
  const Counts cp = expect_same_as_full_path(spec);
  EXPECT_EQ(cp.rest, 0u);
  EXPECT_GT(cp.ok, 20u);
}

// A base with two pools of different GPUs: the pools keep their counts, stages are placed
// by device order (layers split by device speed across the two), a stage that straddles
// the pools gets the parser's message.
TEST(FastScreen, MatchesTheFullPathOnSeveralPools) {
  register_builtins();
  nlohmann::json base = read_json_file(std::string(HCSIM_SOURCE_DIR) + "/scenarios/mixed-h100-a100-pipeline.json");
  base["strategy"].erase("stage_pools");
  const SearchSpec spec = parse_search(
      {{"base", base},
       {"space", {{"tp", {1, 2, 4, 8}}, {"pp", {1, 2, 4, 8}}, {"micro_batch", {1, 2}}, {"zero", {0, 1}}}}},
      std::string(HCSIM_SOURCE_DIR) + "/scenarios/search.json");
  EXPECT_TRUE(spec.fixed_pools);
  EXPECT_EQ(spec.max_devices, 16);
  const Counts n = expect_same_as_full_path(spec);
  EXPECT_EQ(n.rest, 0u);
  EXPECT_GT(n.ok, 40u);
  EXPECT_GT(n.infeasible, 10u);  // pp 1 and tp*dp over 8 straddle the pools
  EXPECT_THAT(n.reasons, ::testing::HasSubstr("/strategy/pp: pipeline stage 0 (devices 0..15) straddles pools \"h100\" "
                                              "and \"a100\""));
  // A base that names its stages' pools is refused: the search places them itself.
  base["strategy"]["stage_pools"] = {"h100", "a100"};
  try {
    parse_search({{"base", base}}, "s.json");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_THAT(e.render(), ::testing::HasSubstr("s.json:/base/strategy/stage_pools: a search over several pools"));
  }
}

// Optimizer state offloaded to a CXL pool: the streams' closed form and the pool's
// capacity check, as run_scenario.
TEST(FastScreen, MatchesTheFullPathWithOffloadToAPool) {
  register_builtins();
  const std::string dir = std::string(HCSIM_SOURCE_DIR) + "/scenarios/";
  nlohmann::json base = read_json_file(dir + "cxl-pool-offload.json");
  base["cluster"]["topology"]["capacity"] = "100 GiB";  // 400 GiB: ZeRO 0 at dp 8 (~600 GB) does not fit
  const SearchSpec spec = parse_search(
      {{"base", base},
       {"space", {{"tp", {1, 2, 4}}, {"pp", {1, 2}}, {"micro_batch", {1, 4}}, {"zero", {0, 1}},
                  {"recompute", {"full"}}}}},
      dir + "search.json");
  const Counts n = expect_same_as_full_path(spec);
  EXPECT_EQ(n.rest, 0u);
  EXPECT_GT(n.ok, 10u);
  EXPECT_THAT(n.reasons, ::testing::HasSubstr("does not fit in the pool's 400 GiB"));
}

// The servers' power beside their accelerators (cluster.node_power) is in the energy the
// fast path reports, as in the full path's.
TEST(FastScreen, MatchesTheFullPathWithNodePower) {
  register_builtins();
  SearchSpec spec = load_search(kSweeps + "quickstart-search.json");
  spec.base.doc["cluster"]["node_power"] = {{"preset", "dgx-a100"}};
  const Counts n = expect_same_as_full_path(spec);
  EXPECT_EQ(n.rest, 0u);
  EXPECT_GT(n.ok, 100u);
}

// An MoE base: every candidate's own expert parallelism (the default ep axis, and a listed
// ep the layout rules refuse: 3 does not divide the 8 experts), with ZeRO 0-3 (ZeRO-3 of
// experts refused) and sequence parallelism off and on (tp > 1 needs it with experts).
TEST(FastScreen, MatchesTheFullPathOnAnMoeSearch) {
  register_builtins();
  const SearchSpec spec = load_search(kSweeps + "tiny-moe-search.json");
  const Counts n = expect_same_as_full_path(spec);
  EXPECT_EQ(n.rest, 0u);
  EXPECT_GT(n.ok, 40u);
  nlohmann::json doc = read_json_file(kSweeps + "tiny-moe-search.json");
  doc["base"] = kSweeps + "tiny-moe.json";
  doc["max_devices"] = 8;
  doc["space"]["ep"] = {2, 3};
  doc["space"]["zero"] = {1, 3};
  doc["space"]["recompute"] = {"none", "full"};
  const Counts listed = expect_same_as_full_path(parse_search(doc, kSweeps + "search.json"));
  EXPECT_EQ(listed.rest, 0u);
  EXPECT_GT(listed.ok, 10u);
  EXPECT_THAT(listed.reasons, ::testing::HasSubstr("/strategy/ep: the model's 8 experts are not divisible by ep = 3"));
  EXPECT_THAT(listed.reasons, ::testing::HasSubstr("/strategy/zero: ZeRO-3 / FSDP of an MoE model is not modelled"));
  EXPECT_THAT(listed.reasons, ::testing::HasSubstr("/strategy/sequence_parallel: an MoE model with tp > 1 needs"));
}

// A base with expert tensor parallelism 2 and no "etp" in the space: every candidate keeps
// it, its default ep axis only the ep with ep * 2 dividing the stage, and the closed forms
// match the parsed candidates' to 1e-9.
TEST(FastScreen, MatchesTheFullPathWithTheBasesExpertTensorParallelism) {
  register_builtins();
  nlohmann::json doc = read_json_file(kSweeps + "tiny-moe-search.json");
  nlohmann::json base = read_json_file(kSweeps + "tiny-moe.json");
  base["strategy"]["ep"] = 4;  // ep * etp divides the base's stage of 8 devices
  base["strategy"]["etp"] = 2;
  doc["base"] = base;
  const SearchSpec spec = parse_search(doc, kSweeps + "search.json");
  EXPECT_EQ(spec.base_etp, 2);
  for (const SearchRow& r : rows_of(spec)) {
    const auto p = r.candidate.params();
    const int stage = p["/strategy/tp"].get<int>() * p["/strategy/dp"].get<int>();
    EXPECT_EQ(stage % (2 * p["/strategy/ep"].get<int>()), 0) << describe_layout(r.candidate);
  }
  const Counts n = expect_same_as_full_path(spec);
  EXPECT_EQ(n.rest, 0u);
  EXPECT_GT(n.ok, 20u);
}

// An etp axis (1, 2, 4 on the tiny MoE, up to 16 GPUs): each candidate is screened at its own
// etp, and every one the fast path decides gets the record of its scenario parsed and run
// in analytical mode (`hcsim run` with "mode": "analytical"): the same status and metrics to
// 1e-9, the step time included.
TEST(FastScreen, MatchesTheFullPathOverAnEtpAxis) {
  register_builtins();
  nlohmann::json doc = read_json_file(kSweeps + "tiny-moe-search.json");
  doc["base"] = kSweeps + "tiny-moe.json";
  doc["space"]["etp"] = {1, 2, 4};
  const SearchSpec spec = parse_search(doc, kSweeps + "search.json");
  std::map<int, std::size_t> candidates;
  for (const SearchRow& r : rows_of(spec)) ++candidates[r.candidate.params()["/strategy/etp"].get<int>()];
  EXPECT_EQ(candidates.size(), 3u);
  const Counts n = expect_same_as_full_path(spec);
  EXPECT_EQ(n.rest, 0u);
  EXPECT_EQ(n.fast, candidates[1] + candidates[2] + candidates[4]);
  // Feasible layouts at every etp.
  const std::vector<SearchRow> rows = rows_of(spec);
  std::vector<std::size_t> all(rows.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  std::map<int, std::set<double>> steps;
  for (const auto& [i, line] : fast_screen(spec, rows, all, default_metrics()).records) {
    const auto rec = nlohmann::json::parse(line);
    if (rec["status"] == "ok")
      steps[rows[i].candidate.params()["/strategy/etp"].get<int>()].insert(rec["metrics"]["step_time_s"].get<double>());
  }
  for (int etp : {1, 2, 4}) EXPECT_FALSE(steps[etp].empty()) << "etp " << etp;
}

TEST(FastScreen, LeavesEverythingToTheFullPathWhereItDoesNotApply) {
  register_builtins();
  SearchSpec spec = load_search(kSweeps + "quickstart-search.json");
  const std::vector<SearchRow> rows = rows_of(spec);
  // Metrics the fast path does not fill.
  EXPECT_TRUE(fast_screen(spec, rows, {0, 1}, {{"mem", "/memory/peak_bytes"}}).records.empty());
  // A base the analytical mode refuses.
  spec.base.doc["strategy"]["tp"] = 3;
  const FastScreen fast = fast_screen(spec, rows, {0, 1, 2}, default_metrics());
  EXPECT_TRUE(fast.records.empty());
  EXPECT_EQ(fast.rest, (std::vector<std::size_t>{0, 1, 2}));
}

}  // namespace
}  // namespace hcsim::sweep
