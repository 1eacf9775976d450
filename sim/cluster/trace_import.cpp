#include "trace_import.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <fstream>
#include <optional>
#include <span>
#include <sstream>
#include <unordered_map>

#include "sim/core/error.hpp"

namespace hcsim {
namespace {

constexpr std::array<std::string_view, 6> kJobColumns{"job_name", "inst_id",    "user",
                                                      "status",   "start_time", "end_time"};
constexpr std::array<std::string_view, 10> kTaskColumns{"job_name", "task_name", "inst_num", "status",   "start_time",
                                                        "end_time", "plan_cpu",  "plan_mem", "plan_gpu", "gpu_type"};
enum JobCol : std::size_t { kJobName, kInstId, kUser, kJobStatus, kSubmit, kJobEnd };
enum TaskCol : std::size_t {
  kTaskJob,
  kTaskName,
  kInstNum,
  kTaskStatus,
  kTaskStart,
  kTaskEnd,
  kPlanCpu,
  kPlanMem,
  kPlanGpu,
  kGpuType
};
constexpr std::size_t kMaxErrors = 100;  // a broken file is not told line by line past this
constexpr double kMaxJobGpus = 1e6;      // more is not a job of any cluster there is

// Errors of both tables, capped at kMaxErrors (the rest counted in one closing line).
struct Errors {
  Diagnostics diag;
  std::size_t count = 0;
  void add(std::string path, std::string message) {
    if (count++ < kMaxErrors) diag.error(std::move(path), std::move(message));
  }
  void throw_if_any() {
    if (count > kMaxErrors) diag.error("", "and " + std::to_string(count - kMaxErrors) + " more errors");
    diag.throw_if_any();
  }
};

bool parse_number(std::string_view s, double& out) {
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size() && std::isfinite(out);
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// One row being read: its fields, where it is, and whether it has been found wrong.
struct Row {
  Errors& errors;
  std::string_view file;
  std::size_t line = 0;
  std::span<const std::string_view> columns;
  std::span<const std::string_view> fields;
  bool ok = true;

  [[nodiscard]] std::string where(std::size_t col) const {
    return std::string(file) + ":" + std::to_string(line) + ":" + std::string(columns[col]);
  }
  void fail(std::size_t col, std::string message) {
    errors.add(where(col), std::move(message));
    ok = false;
  }
  [[nodiscard]] std::string_view text(std::size_t col) const { return fields[col]; }
  // Empty: not recorded. Otherwise a finite number, 0 or more.
  std::optional<double> amount(std::size_t col) {
    const auto s = fields[col];
    if (s.empty()) return std::nullopt;
    double v = 0;
    if (!parse_number(s, v)) {
      fail(col, "expected a number, got \"" + std::string(s) + "\"");
      return std::nullopt;
    }
    if (v < 0) {
      fail(col, "expected a number of 0 or more, got " + std::string(s));
      return std::nullopt;
    }
    return v;
  }
  // A time in seconds; empty or 0 is "not recorded" (as the trace writes it).
  std::optional<double> time(std::size_t col) {
    const auto v = amount(col);
    return v && *v > 0 ? v : std::nullopt;
  }
  // Both times, when both are recorded, in order.
  void check_order(std::size_t start_col, std::size_t end_col, std::optional<double> start, std::optional<double> end) {
    if (start && end && *end < *start)
      fail(end_col, std::string(columns[end_col]) + " " + std::string(fields[end_col]) + " is before " +
                        std::string(columns[start_col]) + " " + std::string(fields[start_col]));
  }
};

// Calls `fn(Row&)` for every row of `text` with exactly `columns.size()` fields; blank
// lines and a first row naming the columns are skipped, a row of another width is an error.
template <class Fn>
std::size_t for_each_row(std::string_view text, std::string_view file, std::span<const std::string_view> columns,
                         Errors& errors, Fn&& fn) {
  std::vector<std::string_view> fields;
  std::size_t line = 0, rows = 0;
  bool first = true;
  while (!text.empty()) {
    const auto nl = text.find('\n');
    const auto raw = trim(text.substr(0, nl));
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    ++line;
    if (raw.empty()) continue;
    fields.clear();
    for (std::size_t at = 0;;) {
      const auto comma = raw.find(',', at);
      fields.push_back(trim(raw.substr(at, comma == std::string_view::npos ? raw.npos : comma - at)));
      if (comma == std::string_view::npos) break;
      at = comma + 1;
    }
    const bool header = first && std::equal(fields.begin(), fields.end(), columns.begin(), columns.end());
    first = false;
    if (header) continue;
    Row row{errors, file, line, columns, fields};
    if (fields.size() < columns.size()) {
      row.fail(fields.size(), "missing column " + std::string(columns[fields.size()]) + " (expected " +
                                  std::to_string(columns.size()) + " columns, got " + std::to_string(fields.size()) +
                                  ")");
      continue;
    }
    if (fields.size() > columns.size()) {
      errors.add(std::string(file) + ":" + std::to_string(line),
                 "expected " + std::to_string(columns.size()) + " columns, got " + std::to_string(fields.size()));
      continue;
    }
    ++rows;
    fn(row);
  }
  return rows;
}

// What the two tables say about one job.
struct JobAgg {
  std::string name, status;
  std::size_t line = 0;
  std::optional<double> submit;
  std::size_t tasks = 0;
  double gpus = 0, largest = 0;  // whole GPUs; the largest GPU task's
  bool fractional = false;       // some GPU task asked for part of a GPU
  bool untimed = false;          // some GPU task's run is not recorded
  std::optional<double> start, end;
  std::string gpu_type;
};

using JobIndex = std::unordered_map<std::string_view, std::size_t>;

void read_job_row(Row& row, std::vector<JobAgg>& jobs, JobIndex& index) {
  const auto name = row.text(kJobName);
  if (name.empty()) row.fail(kJobName, "empty job_name");
  const auto submit = row.time(kSubmit);
  const auto end = row.time(kJobEnd);
  row.check_order(kSubmit, kJobEnd, submit, end);
  if (!row.ok) return;
  if (const auto it = index.find(name); it != index.end()) {
    row.fail(kJobName, "job " + std::string(name) + " is already on line " + std::to_string(jobs[it->second].line));
    return;
  }
  JobAgg job;
  job.name = std::string(name);
  job.status = std::string(row.text(kJobStatus));
  job.line = row.line;
  job.submit = submit;
  jobs.push_back(std::move(job));
}

void read_task_row(Row& row, std::vector<JobAgg>& jobs, const JobIndex& index, std::size_t& unmatched) {
  if (row.text(kTaskJob).empty()) row.fail(kTaskJob, "empty job_name");
  if (row.text(kInstNum).empty()) row.fail(kInstNum, "missing inst_num");
  const auto inst = row.amount(kInstNum);
  if (inst && *inst != std::floor(*inst))
    row.fail(kInstNum, "expected a whole number of instances, got " + std::string(row.text(kInstNum)));
  const auto start = row.time(kTaskStart);
  const auto end = row.time(kTaskEnd);
  row.check_order(kTaskStart, kTaskEnd, start, end);
  row.amount(kPlanCpu);
  row.amount(kPlanMem);
  const double plan_gpu = row.amount(kPlanGpu).value_or(0);
  if (!row.ok) return;
  const auto it = index.find(row.text(kTaskJob));
  if (it == index.end()) {
    ++unmatched;
    return;
  }
  auto& job = jobs[it->second];
  ++job.tasks;
  if (plan_gpu <= 0 || *inst <= 0) return;
  if (std::fmod(plan_gpu, 100.0) != 0) job.fractional = true;
  const double gpus = *inst * plan_gpu / 100.0;
  job.gpus += gpus;
  if (gpus > job.largest) {
    job.largest = gpus;
    job.gpu_type = std::string(row.text(kGpuType));
  }
  if (!start || !end) job.untimed = true;
  if (start) job.start = job.start ? std::min(*job.start, *start) : *start;
  if (end) job.end = job.end ? std::max(*job.end, *end) : *end;
}

// Why `job` is not kept; empty when it is.
std::string drop_reason(const JobAgg& job) {
  if (job.status != "Terminated") return "status " + (job.status.empty() ? std::string("(empty)") : job.status);
  if (job.tasks == 0) return "no task rows";
  if (job.fractional) return "fractional GPU (plan_gpu not a multiple of 100)";
  if (job.gpus < 1) return "no GPU";
  if (job.gpus > kMaxJobGpus) return "more than 1000000 GPUs";
  if (!job.submit) return "no submit time";
  if (job.untimed) return "run not recorded";
  if (*job.end <= *job.start) return "zero run time";
  return {};
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, "cannot open the file");
  std::ostringstream out;
  out << in.rdbuf();
  if (in.bad()) throw InputError(path, "cannot read the file");
  return out.str();
}

}  // namespace

std::size_t TraceImport::dropped_jobs() const {
  std::size_t n = 0;
  for (const auto& [why, count] : dropped) n += count;
  return n;
}

TraceImport parse_pai_trace(std::string_view job_table, std::string_view task_table, const std::string& job_file,
                            const std::string& task_file) {
  Errors errors;
  TraceImport out;
  std::vector<JobAgg> jobs;
  JobIndex index;
  out.job_rows = for_each_row(job_table, job_file, kJobColumns, errors, [&](Row& row) {
    read_job_row(row, jobs, index);
    if (row.ok) index.emplace(row.text(kJobName), jobs.size() - 1);
  });
  out.task_rows = for_each_row(task_table, task_file, kTaskColumns, errors,
                               [&](Row& row) { read_task_row(row, jobs, index, out.unmatched_task_rows); });
  errors.throw_if_any();
  for (const auto& job : jobs) {
    if (auto why = drop_reason(job); !why.empty()) {
      ++out.dropped[why];
      continue;
    }
    out.jobs.push_back({job.name, Seconds(*job.submit), Seconds(*job.start), Seconds(*job.end),
                        static_cast<std::uint32_t>(job.gpus), job.status, job.gpu_type});
  }
  std::sort(out.jobs.begin(), out.jobs.end(), [](const TraceJob& a, const TraceJob& b) {
    return a.submit != b.submit ? a.submit < b.submit : a.id < b.id;
  });
  return out;
}

TraceImport read_pai_trace(const std::string& dir) {
  const std::string job_file = dir + "/pai_job_table.csv", task_file = dir + "/pai_task_table.csv";
  const auto job_text = read_text(job_file);
  const auto task_text = read_text(task_file);
  return parse_pai_trace(job_text, task_text, job_file, task_file);
}

}  // namespace hcsim
