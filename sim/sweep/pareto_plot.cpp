#include "pareto_plot.hpp"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <fmt/format.h>

extern char** environ;

namespace hcsim::sweep {

PlotOutcome plot_pareto(const std::string& csv, const std::string& png) {
  const char* dir = std::getenv("HCSIM_SCRIPTS_DIR");
  const std::string script = std::string(dir && *dir ? dir : HCSIM_SCRIPTS_DIR) + "/plot_pareto.py";
  const std::string python = "/usr/bin/python3";
  if (::access(python.c_str(), X_OK) != 0) return {false, "plot skipped: " + python + " not found"};
  if (::access(script.c_str(), R_OK) != 0) return {false, "plot skipped: " + script + " not found"};
  std::vector<std::string> args{python, script, csv, png};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int rc = ::posix_spawn(&pid, python.c_str(), nullptr, nullptr, argv.data(), environ);
  if (rc != 0) return {false, fmt::format("plot skipped: cannot start {}: {}", python, std::strerror(rc))};
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return {true, "Pareto plot: " + png};
  if (WIFEXITED(status) && WEXITSTATUS(status) == 3)
    return {false, "plot skipped: matplotlib is not installed (apt-get install python3-matplotlib)"};
  return {false, fmt::format("plot skipped: {} failed (status {})", script, WIFEXITED(status) ? WEXITSTATUS(status) : -1)};
}

}  // namespace hcsim::sweep
