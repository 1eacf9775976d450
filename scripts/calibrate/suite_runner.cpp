#include "suite_runner.hpp"

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace hcsim::calibrate {
namespace {

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string capture(const std::string& cmd, int& status) {
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) throw std::runtime_error("cannot run: " + cmd);
  std::string out;
  std::array<char, 65536> buf{};
  std::size_t n = 0;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  status = ::pclose(p);
  return out;
}

}  // namespace

bool SuiteResult::all_ran() const {
  for (const auto& c : cases)
    if (!c.ran) return false;
  return !cases.empty();
}

std::string suite_command(const std::string& hcsim, const std::string& dir, const std::vector<std::string>& sets) {
  std::string cmd = shell_quote(hcsim) + " validate-suite " + shell_quote(dir) + " --format json";
  for (const auto& s : sets) cmd += " --set " + shell_quote(s);
  return cmd;
}

SuiteResult run_suite(const std::string& hcsim, const std::string& dir, const std::vector<std::string>& sets) {
  int status = 0;
  const std::string cmd = suite_command(hcsim, dir, sets);
  const std::string out = capture(cmd, status);
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (code != 0 && code != 1) throw std::runtime_error("exit status " + std::to_string(code) + " from: " + cmd);
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(out);
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(std::string("not JSON (") + e.what() + ") from: " + cmd);
  }
  SuiteResult r;
  r.mean_abs_error_pct = j.at("mean_abs_error_pct").get<double>();
  r.max_abs_error_pct = j.at("max_abs_error_pct").get<double>();
  r.wall_s = j.at("wall_s").get<double>();
  for (const auto& c : j.at("cases")) {
    CaseResult cr;
    cr.name = c.at("case").get<std::string>();
    cr.ran = c.at("ran").get<bool>();
    cr.published = c.at("published").get<double>();
    cr.wall_s = c.at("wall_s").get<double>();
    cr.message = c.value("message", std::string());
    if (cr.ran) {
      cr.predicted = c.at("predicted").get<double>();
      cr.error_pct = c.at("error_pct").get<double>();
      cr.peak_bytes = c.at("/memory/peak_bytes"_json_pointer).get<double>();
      cr.capacity_bytes = c.at("/memory/capacity_bytes"_json_pointer).get<double>();
    }
    r.cases.push_back(std::move(cr));
  }
  return r;
}

}  // namespace hcsim::calibrate
