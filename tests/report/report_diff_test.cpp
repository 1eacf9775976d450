// `hcsim diff`: rows, relative changes and the refusal of files that are not reports.
#include <gtest/gtest.h>

#include "report_fixture.hpp"
#include "sim/report/report_diff.hpp"

namespace hcsim {
namespace {

using nlohmann::json;
using testing::quickstart;

const DiffRow& find(const std::vector<DiffRow>& rows, const std::string& pointer) {
  for (const auto& r : rows)
    if (r.pointer == pointer) return r;
  ADD_FAILURE() << "no row " << pointer;
  return rows.front();
}

TEST(ReportDiff, ReportAgainstItselfChangesNothing) {
  const json& a = quickstart()->report;
  for (const auto& r : report_diff_rows(a, a)) {
    ASSERT_TRUE(r.a.has_value()) << r.pointer;
    if (*r.a != 0) {
      EXPECT_EQ(r.change(), 0.0) << r.pointer;
    }
  }
}

TEST(ReportDiff, RelativeChangesOfEdits) {
  const json& a = quickstart()->report;
  json b = a;
  b["step_time_s"] = 2 * a["step_time_s"].get<double>();
  b["mfu"] = 0.5 * a["mfu"].get<double>();
  b["energy"]["it_j"] = 1.25 * a["energy"]["it_j"].get<double>();
  b["breakdown"]["exposed_comm_s"]["zero"] = 0.1;  // a kind absent from A
  const auto rows = report_diff_rows(a, b);
  // (b - a) / a: +100 %, -50 %, +25 %.
  EXPECT_DOUBLE_EQ(*find(rows, "/step_time_s").change(), 1.0);
  EXPECT_DOUBLE_EQ(*find(rows, "/mfu").change(), -0.5);
  EXPECT_DOUBLE_EQ(*find(rows, "/energy/it_j").change(), 0.25);
  const DiffRow& zero = find(rows, "/breakdown/exposed_comm_s/zero");
  EXPECT_EQ(*zero.a, 0.0);
  EXPECT_FALSE(zero.change().has_value());  // no relative change from zero
  // Kinds that are zero in both reports get no row.
  for (const auto& r : rows) EXPECT_NE(r.pointer, "/breakdown/exposed_comm_s/cp");

  const std::string table = report_diff_table(a, b, "a.json", "b.json");
  EXPECT_NE(table.find("+100.0 %"), std::string::npos) << table;
  EXPECT_NE(table.find("-50.0 %"), std::string::npos) << table;
  const json j = report_diff_json(a, b, "a.json", "b.json");
  EXPECT_EQ(j["rows"][0]["pointer"], "/step_time_s");
  EXPECT_DOUBLE_EQ(j["rows"][0]["change"].get<double>(), 1.0);
}

TEST(ReportDiff, MissingFieldsShowAsAbsent) {
  const json& a = quickstart()->report;
  json b = a;
  b.erase("time_to_train_s");
  const std::vector<DiffRow> rows = report_diff_rows(a, b);
  const DiffRow& r = find(rows, "/time_to_train_s");
  EXPECT_TRUE(r.a.has_value());
  EXPECT_FALSE(r.b.has_value());
  EXPECT_FALSE(r.change().has_value());
}

TEST(ReportDiff, RejectsFilesThatAreNotReports) {
  EXPECT_NO_THROW(check_report(quickstart()->report, "a.json"));
  try {
    check_report(json{{"name", "quickstart"}}, "scenario.json");
    FAIL() << "a scenario is not a report";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), "scenario.json");
    ASSERT_EQ(e.issues().size(), 1u);
    EXPECT_EQ(e.issues()[0].path, "/format");
    EXPECT_NE(e.issues()[0].message.find("not an hcsim report"), std::string::npos);
  }
  EXPECT_THROW(check_report(json::array(), "x.json"), InputError);
}

}  // namespace
}  // namespace hcsim
