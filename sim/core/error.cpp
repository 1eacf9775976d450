#include "error.hpp"

#include <exception>

namespace hcsim {
namespace {
std::string render_issues(const std::vector<Issue>& issues, const std::string& file) {
  std::string out;
  for (const auto& i : issues) {
    if (!out.empty()) out += '\n';
    out += file.empty() ? i.path : file + ":" + i.path;
    out += (file.empty() && i.path.empty()) ? "" : ": ";
    out += i.message;
  }
  return out;
}
}  // namespace

InputError::InputError(std::vector<Issue> issues, std::string file)
    : std::runtime_error(render_issues(issues, file)), issues_(std::move(issues)), file_(std::move(file)) {}

InputError::InputError(std::string path, std::string message, std::string file)
    : InputError(std::vector<Issue>{{std::move(path), std::move(message)}}, std::move(file)) {}

std::string InputError::render() const { return render_issues(issues_, file_); }

InputError InputError::with_file(std::string file) const {
  return InputError(issues_, std::move(file)).with_warnings(warnings_);
}

InputError InputError::with_warnings(std::vector<Issue> warnings) const {
  InputError e(issues_, file_);
  e.warnings_ = std::move(warnings);
  return e;
}

void Diagnostics::error(std::string path, std::string message) {
  issues_.push_back({std::move(path), std::move(message)});
}

void Diagnostics::warn(std::string path, std::string message) {
  for (const auto& w : warnings_)
    if (w.path == path && w.message == message) return;
  warnings_.push_back({std::move(path), std::move(message)});
}

bool Diagnostics::warned_at(const std::string& path) const {
  for (const auto& w : warnings_)
    if (w.path == path) return true;
  return false;
}

void Diagnostics::merge(const Diagnostics& other) {
  issues_.insert(issues_.end(), other.issues_.begin(), other.issues_.end());
  for (const auto& w : other.warnings_) warn(w.path, w.message);
}

void Diagnostics::merge(const InputError& e) {
  issues_.insert(issues_.end(), e.issues().begin(), e.issues().end());
  for (const auto& w : e.warnings()) warn(w.path, w.message);
}

void Diagnostics::throw_if_any() const {
  if (!issues_.empty()) throw InputError(issues_).with_warnings(warnings_);
}

std::string json_child(const std::string& parent, const std::string& key) {
  std::string out = parent + "/";
  for (char c : key) {
    if (c == '~') out += "~0";
    else if (c == '/') out += "~1";
    else out += c;
  }
  return out;
}

std::string json_child(const std::string& parent, std::size_t index) {
  return parent + "/" + std::to_string(index);
}

std::string terminate_message(const std::string& what) {
  try {
    if (auto e = std::current_exception()) std::rethrow_exception(e);
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
  }
  return "internal error (a bug, please report): " + what;
}

void assertion_failed(const char* expr, const char* file, int line, const std::string& msg) {
  throw InternalError("internal error (a bug, please report): " + std::string(file) + ":" + std::to_string(line) +
                      ": " + expr + ": " + msg);
}

}  // namespace hcsim
