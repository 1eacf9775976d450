#pragma once
// The result files of a sweep, DIR/results.jsonl and DIR/results.csv, written so that a
// killed sweep loses nothing and resumes where it stopped:
//  - each finished point is appended to both files at once (one write each), in the order
//    points finish, and results.jsonl is fsync'ed (the CSV is derived from it);
//  - on start, an existing results.jsonl is read back: a torn last line is cut off, every
//    other line is a finished point (checked against this sweep's parameters by the
//    caller), and results.csv is rebuilt from it;
//  - at the end both files are rewritten sorted by point index through the atomic writer,
//    so their bytes are those of an uninterrupted single-worker run.

#include <cstddef>
#include <functional>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/sweep/record.hpp"

namespace hcsim::sweep {

// write_file_atomic (sim/cli/output.hpp), passed in by the command layer.
using AtomicWriter = std::function<void(const std::string& path, const std::string& content)>;

class ResultsStore {
 public:
  ResultsStore(std::string dir, Columns columns, AtomicWriter writer);
  ~ResultsStore();
  ResultsStore(const ResultsStore&) = delete;
  ResultsStore& operator=(const ResultsStore&) = delete;

  // Reads the finished points back (see above) and opens both files for appending.
  // `check(line_number, record)` throws InputError when a record does not belong to this
  // sweep. Returns how many finished points were found.
  std::size_t open(const std::function<void(std::size_t, const nlohmann::ordered_json&)>& check);

  [[nodiscard]] bool done(std::size_t index) const { return lines_.count(index) != 0; }
  [[nodiscard]] const std::map<std::size_t, std::string>& lines() const { return lines_; }

  // Appends one record line (no newline) to both files and syncs results.jsonl.
  void append(std::size_t index, const std::string& line);

  // Rewrites both files sorted by index.
  void finish();

  [[nodiscard]] std::string jsonl_path() const { return dir_ + "/results.jsonl"; }
  [[nodiscard]] std::string csv_path() const { return dir_ + "/results.csv"; }

 private:
  void close_files();
  std::string dir_;
  Columns columns_;
  AtomicWriter writer_;
  std::map<std::size_t, std::string> lines_;
  int jsonl_fd_ = -1, csv_fd_ = -1;
};

}  // namespace hcsim::sweep
