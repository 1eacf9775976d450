#pragma once
// User errors versus simulator bugs (style principle 6, after gem5's fatal/panic split).
//
// Bad input is reported as an InputError carrying every Issue found, each with the JSON
// pointer of the offending value. Only main() turns it into exit code 2. Broken internal
// invariants are HCSIM_ASSERT failures, never InputErrors: they throw InternalError, which
// main() reports as one line and exit code 1 (docs/robustness.md); never an abort.

#include <stdexcept>
#include <string>
#include <vector>

namespace hcsim {

struct Issue {
  std::string path;     // JSON pointer, e.g. "/cluster/pools/0/count"; "" for the whole file
  std::string message;  // one sentence, no trailing period
};

class InputError : public std::runtime_error {
 public:
  explicit InputError(std::vector<Issue> issues, std::string file = {});
  InputError(std::string path, std::string message, std::string file = {});
  [[nodiscard]] const std::vector<Issue>& issues() const { return issues_; }
  [[nodiscard]] const std::string& file() const { return file_; }
  // "FILE:/path: message" per line.
  [[nodiscard]] std::string render() const;
  InputError with_file(std::string file) const;
  // The warnings found beside the errors (printed with them, docs/robustness.md).
  [[nodiscard]] const std::vector<Issue>& warnings() const { return warnings_; }
  InputError with_warnings(std::vector<Issue> warnings) const;

 private:
  std::vector<Issue> issues_;
  std::vector<Issue> warnings_;
  std::string file_;
};

// Collects every problem before anything is built (style principle 5), and the warnings:
// input that is legal but implausible (a bandwidth of 600 B/s, "25 mb" read as millibits),
// reported on standard error and made errors by --strict, never changing any output.
class Diagnostics {
 public:
  void error(std::string path, std::string message);
  // A warning; one already given at the same path with the same message is not repeated.
  void warn(std::string path, std::string message);
  [[nodiscard]] bool ok() const { return issues_.empty(); }
  [[nodiscard]] const std::vector<Issue>& issues() const { return issues_; }
  [[nodiscard]] const std::vector<Issue>& warnings() const { return warnings_; }
  [[nodiscard]] bool warned_at(const std::string& path) const;
  void merge(const InputError& e);
  // Errors and warnings of `other`, in their order.
  void merge(const Diagnostics& other);
  // Throws InputError with every error collected, if any was, and the warnings beside them.
  void throw_if_any() const;

 private:
  std::vector<Issue> issues_;
  std::vector<Issue> warnings_;
};

// JSON pointer of child `key` under `parent` (RFC 6901 escaping).
std::string json_child(const std::string& parent, const std::string& key);
std::string json_child(const std::string& parent, std::size_t index);

// A simulator bug: what() is "internal error (a bug, please report): FILE:LINE: EXPR: MESSAGE".
class InternalError : public std::logic_error {
 public:
  explicit InternalError(const std::string& what) : std::logic_error(what) {}
};

// In a std::terminate handler: what() of the exception in flight, else "internal error (a
// bug, please report): " + `what`.
std::string terminate_message(const std::string& what);

// Throws InternalError (HCSIM_ASSERT's failure path).
[[noreturn]] void assertion_failed(const char* expr, const char* file, int line, const std::string& msg);

}  // namespace hcsim

#define HCSIM_ASSERT(cond, msg) \
  do { if (!(cond)) ::hcsim::assertion_failed(#cond, __FILE__, __LINE__, (msg)); } while (0)
