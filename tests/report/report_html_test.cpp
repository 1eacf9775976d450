// The HTML report (report_html) and its aggregated timeline: every section present, no
// external resource, the same bytes each run, a note instead of a timeline in analytical
// mode, and a timeline whose rows stay per stage once a run has many devices.
#include <gtest/gtest.h>

#include "report_fixture.hpp"
#include "sim/report/html_timeline.hpp"
#include "sim/report/report_diff.hpp"

namespace hcsim {
namespace {

using testing::quickstart;
using testing::run_doc;
using testing::small_doc;

bool has(const std::string& s, const std::string& what) { return s.find(what) != std::string::npos; }

TEST(ReportHtml, QuickstartHasEverySectionAndNothingExternal) {
  const auto q = quickstart();
  const std::string page = report_html(q->sc, q->out, q->report);
  ASSERT_TRUE(page.starts_with("<!DOCTYPE html>"));
  for (const char* id : {"summary", "breakdown", "memory", "energy", "plots", "timeline", "breakdown-bars",
                         "memory-bars", "power-curve"})
    EXPECT_TRUE(has(page, std::string("id=\"") + id + "\"")) << id;
  // Self-contained: no linked stylesheet, script, image or frame; the only URL is the SVG
  // namespace name, which is never fetched.
  for (const char* bad : {"<link", " src=", " href=", "@import", "url(", "https://"}) EXPECT_FALSE(has(page, bad)) << bad;
  std::string rest = page;
  for (std::size_t p; (p = rest.find("http://")) != std::string::npos; rest = rest.substr(p + 7))
    EXPECT_TRUE(rest.compare(p, 26, "http://www.w3.org/2000/svg") == 0) << rest.substr(p, 60);
  EXPECT_TRUE(has(page, "<svg id=\"timeline\""));
  EXPECT_TRUE(has(page, "one row per simulated device"));  // 2 simulated devices: per device
}

TEST(ReportHtml, SameRunSameBytes) {
  const auto q = quickstart();
  EXPECT_EQ(report_html(q->sc, q->out, q->report), report_html(q->sc, q->out, report_json(q->sc, q->out)));
}

// The run command hands the page a report without "per_device" (it streams that list into
// report.json): the page is the same, its per-device table taken from the run; past 64
// devices, a note in its place.
TEST(ReportHtml, PerDeviceTableWithoutThePerDeviceList) {
  const auto q = quickstart();
  const std::string page = report_html(q->sc, q->out, report_json(q->sc, q->out, false));
  EXPECT_EQ(page, report_html(q->sc, q->out, q->report));
  EXPECT_TRUE(has(page, "<summary>per device (16)</summary>"));
  nlohmann::json doc = small_doc(65, 1, 1, testing::nvlink3(), 65);
  doc["simulation"]["mode"] = "analytical";
  const auto r = run_doc(doc);
  const std::string big = report_html(r->sc, r->out, report_json(r->sc, r->out, false));
  EXPECT_EQ(big, report_html(r->sc, r->out, r->report));
  EXPECT_TRUE(has(big, "<p>65 devices: the per-device table is left out (report.json has it).</p>"));
  EXPECT_FALSE(has(big, "<summary>per device"));
}

TEST(ReportHtml, AnalyticalModeSaysThereIsNoTimeline) {
  nlohmann::json doc = small_doc(1, 2, 2, testing::nvlink3());
  doc["simulation"]["mode"] = "analytical";
  const auto r = run_doc(doc);
  const std::string page = report_html(r->sc, r->out, r->report);
  EXPECT_TRUE(has(page, "<p id=\"timeline\" class=\"note\">analytical mode: no timeline; run with fidelity event</p>"));
  EXPECT_FALSE(has(page, "<svg id=\"timeline\""));
}

TEST(ReportHtml, TimelineRowsPerDeviceThenPerStage) {
  // 8 simulated devices over 2 stages: two rows (compute, comm) per device up to
  // max_units devices, two per stage beyond; the rows' shares are tenths in (0, 1].
  const auto r = run_doc(small_doc(2, 2, 2, testing::nvlink3()));
  const AggregatedTimeline per_device = aggregate_timeline(r->out.graph, r->out.engine, r->out.metrics, {8, 100});
  EXPECT_FALSE(per_device.per_stage);
  EXPECT_EQ(per_device.rows.size(), 16u);
  const AggregatedTimeline per_stage = aggregate_timeline(r->out.graph, r->out.engine, r->out.metrics, {4, 100});
  EXPECT_TRUE(per_stage.per_stage);
  ASSERT_EQ(per_stage.rows.size(), 4u);
  EXPECT_EQ(per_stage.rows[0].label, "stage 0 · compute");
  EXPECT_EQ(per_stage.rows[3].label, "stage 1 · comm");
  for (const auto& row : per_stage.rows)
    for (const auto& s : row.spans) {
      EXPECT_GT(s.opacity, 0.0);
      EXPECT_LE(s.opacity, 1.0);
      EXPECT_LT(s.a, s.b);
      EXPECT_LE(s.b, r->out.metrics.step_time.value() * (1 + 1e-9));
    }
  EXPECT_FALSE(per_stage.rows[0].spans.empty());
}

TEST(ReportHtml, DiffPageHasTheTableAndTheBars) {
  const auto a = run_doc(small_doc(1, 2, 2, testing::nvlink3()));
  const auto b = run_doc(small_doc(2, 1, 2, testing::nvlink3()));
  const std::string page = report_diff_html(a->report, b->report, "a.json", "b.json");
  for (const char* id : {"summary", "plots", "diff-breakdown", "diff-memory"})
    EXPECT_TRUE(has(page, std::string("id=\"") + id + "\"")) << id;
  EXPECT_TRUE(has(page, "<td>step time</td>"));
  EXPECT_EQ(page, report_diff_html(a->report, b->report, "a.json", "b.json"));
}

}  // namespace
}  // namespace hcsim
