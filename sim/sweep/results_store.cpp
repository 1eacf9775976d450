#include "results_store.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

#include "sim/core/error.hpp"

namespace hcsim::sweep {
namespace {

void write_fully(int fd, const std::string& s, const std::string& path, bool sync) {
  const char* p = s.data();
  std::size_t n = s.size();
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) throw std::runtime_error(fmt::format("cannot write {}: {}", path, std::strerror(errno)));
    p += w;
    n -= static_cast<std::size_t>(w);
  }
  if (sync && ::fsync(fd) != 0) throw std::runtime_error(fmt::format("cannot sync {}: {}", path, std::strerror(errno)));
}

int open_append(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) throw InputError("", fmt::format("cannot open {}: {}", path, std::strerror(errno)));
  return fd;
}

}  // namespace

ResultsStore::ResultsStore(std::string dir, Columns columns, AtomicWriter writer)
    : dir_(std::move(dir)), columns_(std::move(columns)), writer_(std::move(writer)) {}

ResultsStore::~ResultsStore() { close_files(); }

void ResultsStore::close_files() {
  if (jsonl_fd_ >= 0) ::close(jsonl_fd_);
  if (csv_fd_ >= 0) ::close(csv_fd_);
  jsonl_fd_ = csv_fd_ = -1;
}

std::size_t ResultsStore::open(const std::function<void(std::size_t, const nlohmann::ordered_json&)>& check) {
  const std::string path = jsonl_path();
  std::string text;
  {
    std::ifstream in(path, std::ios::binary);
    if (in) {
      std::ostringstream ss;
      ss << in.rdbuf();
      text = ss.str();
    }
  }
  // A point is finished once its whole line, newline included, is on disk; anything after
  // the last newline is a write cut short by a kill.
  const std::size_t complete = text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1;
  if (complete < text.size() && ::truncate(path.c_str(), static_cast<off_t>(complete)) != 0)
    throw InputError("", fmt::format("cannot truncate the torn last line of {}: {}", path, std::strerror(errno)));
  std::size_t line_no = 0, start = 0;
  while (start < complete) {
    const std::size_t nl = text.find('\n', start);
    const std::string line = text.substr(start, nl - start);
    start = nl + 1;
    ++line_no;
    if (line.empty()) continue;
    nlohmann::ordered_json rec = nlohmann::ordered_json::parse(line, nullptr, false);
    if (rec.is_discarded() || !rec.is_object() || !rec.contains("index") || !rec["index"].is_number_unsigned())
      throw InputError("", fmt::format("{} line {} is not a result record; move the file away to start afresh", path,
                                        line_no));
    check(line_no, rec);
    lines_.emplace(rec["index"].get<std::size_t>(), line);
  }
  std::string csv = csv_header(columns_);
  for (const auto& [i, line] : lines_) csv += csv_row(nlohmann::ordered_json::parse(line), columns_);
  writer_(csv_path(), csv);
  jsonl_fd_ = open_append(path);
  csv_fd_ = open_append(csv_path());
  return lines_.size();
}

void ResultsStore::append(std::size_t index, const std::string& line) {
  const std::string row = csv_row(nlohmann::ordered_json::parse(line), columns_);
  // results.jsonl is the record of what finished and is synced; results.csv is rebuilt
  // from it on resume, so it is written at once but not synced (one fsync per point).
  write_fully(jsonl_fd_, line + "\n", jsonl_path(), true);
  write_fully(csv_fd_, row, csv_path(), false);
  lines_.emplace(index, line);
}

void ResultsStore::finish() {
  close_files();
  std::string jsonl, csv = csv_header(columns_);
  for (const auto& [i, line] : lines_) {
    jsonl += line + "\n";
    csv += csv_row(nlohmann::ordered_json::parse(line), columns_);
  }
  writer_(jsonl_path(), jsonl);
  writer_(csv_path(), csv);
}

}  // namespace hcsim::sweep
