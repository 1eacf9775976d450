// parse_pai_trace / read_pai_trace (sim/cluster/trace_import.hpp) on the hand-written sample
// in Alibaba PAI's cluster-trace-gpu-v2020 format (scenarios/cluster/sample-trace/README.md)
// and on malformed rows, whose messages name file, line and column.
#include "sim/cluster/trace_import.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "sim/core/error.hpp"

namespace hcsim {
namespace {

const std::string kSample = std::string(HCSIM_SOURCE_DIR) + "/scenarios/cluster/sample-trace";

// One job "a" submitted at 100, one task row: `task` (10 columns).
std::vector<Issue> issues_of(const std::string& jobs, const std::string& tasks) {
  try {
    parse_pai_trace(jobs, tasks, "j.csv", "t.csv");
  } catch (const InputError& e) { return e.issues(); }
  return {};
}
const std::string kJobA = "a,i,u,Terminated,100.0,400.0\n";

TEST(TraceImport, SampleKeepsWholeGpuTerminatedJobsAndCountsTheRest) {
  const auto t = read_pai_trace(kSample);
  EXPECT_EQ(t.job_rows, 64u);   // wc -l pai_job_table.csv
  EXPECT_EQ(t.task_rows, 71u);  // wc -l pai_task_table.csv
  EXPECT_EQ(t.unmatched_task_rows, 0u);
  EXPECT_EQ(t.jobs.size(), 48u);
  // The sample's README lists what was written to be dropped.
  const std::map<std::string, std::size_t> dropped{
      {"status Failed", 6},  {"status Running", 3},
      {"status Waiting", 1}, {"fractional GPU (plan_gpu not a multiple of 100)", 3},
      {"no GPU", 2},         {"no task rows", 1}};
  EXPECT_EQ(t.dropped, dropped);
  EXPECT_EQ(t.dropped_jobs() + t.jobs.size(), t.job_rows);
  EXPECT_TRUE(std::is_sorted(t.jobs.begin(), t.jobs.end(),
                             [](const TraceJob& a, const TraceJob& b) { return a.submit < b.submit; }));
  for (const auto& j : t.jobs) {
    EXPECT_EQ(j.status, "Terminated");
    EXPECT_GE(j.gpus, 1u);
    EXPECT_GT(j.end, j.start);
  }
}

TEST(TraceImport, SampleJobFieldsMatchTheFileByHand) {
  const auto t = read_pai_trace(kSample);
  const auto find = [&](const std::string& id) {
    const auto it = std::find_if(t.jobs.begin(), t.jobs.end(), [&](const TraceJob& j) { return j.id == id; });
    EXPECT_NE(it, t.jobs.end()) << id;
    return *it;
  };
  // pai_job_table.csv line 11; pai_task_table.csv lines 11-12: a ps task without GPUs
  // (started 1774746) and 2 worker instances of 800 % GPU each (1774749 to 1788989).
  const auto a = find("8d3a30c8edea0075f00d3f95");
  EXPECT_EQ(a.submit.value(), 1774716.0);
  EXPECT_EQ(a.start.value(), 1774749.0);  // the GPU task's start, not the ps task's
  EXPECT_EQ(a.end.value(), 1788989.0);
  EXPECT_EQ(a.gpus, 16u);
  EXPECT_EQ(a.gpu_type, "V100M32");
  EXPECT_EQ(a.status, "Terminated");
  // Line 50 / lines 55-56: 3 worker instances of 400 % GPU each.
  const auto b = find("0d7696a3553cbf7f28d67948");
  EXPECT_EQ(b.gpus, 12u);
  EXPECT_EQ(b.gpu_type, "V100");
  EXPECT_EQ((b.end - b.start).value(), 1929611.0 - 1925991.0);
}

TEST(TraceImport, HeaderRowCrlfAndBlankLinesAreAccepted) {
  const std::string jobs = "job_name,inst_id,user,status,start_time,end_time\r\n" + kJobA + "\n";
  const std::string tasks = "a,worker,2.0,Terminated,110.0,390.0,600.0,29.3,100.0,T4\r\n";
  const auto t = parse_pai_trace(jobs, tasks);
  ASSERT_EQ(t.jobs.size(), 1u);
  EXPECT_EQ(t.jobs[0].gpus, 2u);
  EXPECT_EQ(t.jobs[0].gpu_type, "T4");
  EXPECT_EQ(t.jobs[0].start.value(), 110.0);
}

TEST(TraceImport, TaskRowsOfUnknownJobsAreCounted) {
  const std::string tasks =
      "a,worker,1.0,Terminated,110.0,390.0,600.0,29.3,100.0,T4\n"
      "zz,worker,1.0,Terminated,110.0,390.0,600.0,29.3,100.0,T4\n";
  const auto t = parse_pai_trace(kJobA, tasks);
  EXPECT_EQ(t.unmatched_task_rows, 1u);
  EXPECT_EQ(t.jobs.size(), 1u);
}

TEST(TraceImport, MissingColumnNamesTheFirstOneMissing) {
  const auto issues = issues_of(kJobA,
                                "a,worker,1.0,Terminated,110.0,390.0,600.0,29.3,100.0,T4\n"
                                "a,worker,1.0,Terminated,110.0,390.0,600.0,29.3,100.0\n");
  ASSERT_EQ(issues.size(), 1u);
  EXPECT_EQ(issues[0].path, "t.csv:2:gpu_type");
  EXPECT_EQ(issues[0].message, "missing column gpu_type (expected 10 columns, got 9)");
}

TEST(TraceImport, ExtraColumnNamesTheLine) {
  const auto issues = issues_of("a,i,u,Terminated,100.0,400.0,7\n", "");
  ASSERT_EQ(issues.size(), 1u);
  EXPECT_EQ(issues[0].path, "j.csv:1");
  EXPECT_EQ(issues[0].message, "expected 6 columns, got 7");
}

TEST(TraceImport, NonNumberNamesLineAndColumn) {
  const auto issues = issues_of(kJobA, "a,worker,1.0,Terminated,110.0,390.0,600.0,29.3,one,T4\n");
  ASSERT_EQ(issues.size(), 1u);
  EXPECT_EQ(issues[0].path, "t.csv:1:plan_gpu");
  EXPECT_EQ(issues[0].message, "expected a number, got \"one\"");
}

TEST(TraceImport, EndBeforeStartIsAnError) {
  auto issues = issues_of(kJobA, "a,worker,1.0,Terminated,300.0,200.0,600.0,29.3,100.0,T4\n");
  ASSERT_EQ(issues.size(), 1u);
  EXPECT_EQ(issues[0].path, "t.csv:1:end_time");
  EXPECT_EQ(issues[0].message, "end_time 200.0 is before start_time 300.0");
  issues = issues_of("a,i,u,Terminated,100.0,50.0\n", "");
  ASSERT_EQ(issues.size(), 1u);
  EXPECT_EQ(issues[0].path, "j.csv:1:end_time");
}

TEST(TraceImport, OtherBadValues) {
  const auto issues = issues_of(kJobA + kJobA,
                                "a,worker,1.5,Terminated,110.0,390.0,600.0,29.3,100.0,T4\n"
                                "a,worker,1.0,Terminated,-5,390.0,600.0,29.3,100.0,T4\n"
                                "a,worker,,Terminated,110.0,390.0,600.0,29.3,100.0,T4\n"
                                ",worker,1.0,Terminated,110.0,390.0,600.0,29.3,inf,T4\n");
  ASSERT_EQ(issues.size(), 6u);  // every error at once
  EXPECT_EQ(issues[0].path, "j.csv:2:job_name");
  EXPECT_EQ(issues[0].message, "job a is already on line 1");
  EXPECT_EQ(issues[1].path, "t.csv:1:inst_num");
  EXPECT_EQ(issues[1].message, "expected a whole number of instances, got 1.5");
  EXPECT_EQ(issues[2].path, "t.csv:2:start_time");
  EXPECT_EQ(issues[2].message, "expected a number of 0 or more, got -5");
  EXPECT_EQ(issues[3].path, "t.csv:3:inst_num");
  EXPECT_EQ(issues[3].message, "missing inst_num");
  EXPECT_EQ(issues[4].path, "t.csv:4:job_name");
  EXPECT_EQ(issues[5].path, "t.csv:4:plan_gpu");
  EXPECT_EQ(issues[5].message, "expected a number, got \"inf\"");
}

TEST(TraceImport, ErrorsAreCappedWithACount) {
  std::string tasks;
  for (int i = 0; i < 150; ++i) tasks += "a,worker,x,Terminated,110.0,390.0,600.0,29.3,100.0,T4\n";
  const auto issues = issues_of(kJobA, tasks);
  ASSERT_EQ(issues.size(), 101u);
  EXPECT_EQ(issues.back().path, "");
  EXPECT_EQ(issues.back().message, "and 50 more errors");
}

TEST(TraceImport, MissingFileNamesIt) {
  try {
    read_pai_trace("/nonexistent-dir");
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    ASSERT_EQ(e.issues().size(), 1u);
    EXPECT_EQ(e.issues()[0].path, "/nonexistent-dir/pai_job_table.csv");
    EXPECT_EQ(e.issues()[0].message, "cannot open the file");
  }
}

TEST(TraceImport, UnrecordedOrZeroRunIsDropped) {
  const std::string jobs = kJobA + "b,i,u,Terminated,100.0,400.0\n";
  const std::string tasks =
      "a,worker,1.0,Terminated,0.0,,600.0,29.3,100.0,T4\n"
      "b,worker,1.0,Terminated,200.0,200.0,600.0,29.3,100.0,T4\n";
  const auto t = parse_pai_trace(jobs, tasks);
  EXPECT_TRUE(t.jobs.empty());
  const std::map<std::string, std::size_t> dropped{{"run not recorded", 1}, {"zero run time", 1}};
  EXPECT_EQ(t.dropped, dropped);
}

}  // namespace
}  // namespace hcsim
