#pragma once
// Runs the hcsim binary as a child process, the way a user or another team's CI does, and
// captures its exit status, standard output and standard error separately. The child runs
// under a wall-clock limit (coreutils `timeout`) and a memory limit, so a hang or a runaway
// allocation on bad input fails the test instead of stalling the suite or the machine.
//
// Under AddressSanitizer `ulimit -v` cannot be used (ASan reserves terabytes of virtual
// address space for its shadow memory), so the child gets ASan's own resident-memory cap
// (hard_rss_limit_mb) instead, and a longer clock for the instrumented binary.

#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#if defined(__SANITIZE_ADDRESS__)
#define HCSIM_TEST_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HCSIM_TEST_UNDER_ASAN 1
#endif
#endif

namespace hcsim::test {

struct ChildResult {
  int exit_code = -1;  // the child's exit status; 124 when `timeout` stopped it; 128+N for signal N
  std::string out;     // standard output
  std::string err;     // standard error
  double seconds = 0;  // wall-clock time
};

struct ChildLimits {
  int timeout_s = 20;        // wall clock
  long memory_mib = 4096;    // address space (or resident set under ASan)
};

inline bool under_asan() {
#ifdef HCSIM_TEST_UNDER_ASAN
  return true;
#else
  return false;
#endif
}

// Single-quoted for bash.
inline std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline bool file_exists(const std::string& path) {
  struct stat st{};
  return ::stat(path.c_str(), &st) == 0;
}

// A fresh directory under the system temp directory, removed by the destructor.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "hcsim-test-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) ADD_FAILURE() << "mkdtemp failed";
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  [[nodiscard]] const std::string& path() const { return path_; }
  [[nodiscard]] std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// The bash line that runs `hcsim ARGS` under the limits.
inline std::string limited_command(const std::vector<std::string>& args, const ChildLimits& lim) {
  std::string cmd;
  const int clock = under_asan() ? lim.timeout_s * 4 : lim.timeout_s;
  if (under_asan())
    cmd = "ASAN_OPTIONS=\"${ASAN_OPTIONS:+$ASAN_OPTIONS:}hard_rss_limit_mb=" + std::to_string(lim.memory_mib) + "\" ";
  else
    cmd = "ulimit -v " + std::to_string(lim.memory_mib * 1024) + " && ";
  cmd += "exec timeout -k 5 " + std::to_string(clock) + " " + shell_quote(HCSIM_BINARY);
  for (const auto& a : args) cmd += " " + shell_quote(a);
  return cmd;
}

inline ChildResult run_hcsim(const std::vector<std::string>& args, const ChildLimits& lim = {}) {
  TempDir io;
  const std::string cmd = "bash -c " + shell_quote(limited_command(args, lim)) + " </dev/null >" +
                          shell_quote(io.file("out")) + " 2>" + shell_quote(io.file("err"));
  const auto t0 = std::chrono::steady_clock::now();
  const int status = std::system(cmd.c_str());
  ChildResult r;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.exit_code = status == -1 ? -1 : WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = read_file(io.file("out"));
  r.err = read_file(io.file("err"));
  return r;
}

inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

// A test name from a scenario's path ("validation/meg-t1-01.json" -> validation_meg_t1_01).
inline std::string scenario_test_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string n = info.param.substr(0, info.param.size() - 5);
  std::replace_if(n.begin(), n.end(), [](char c) { return !std::isalnum(static_cast<unsigned char>(c)); }, '_');
  return n;
}

// Starts `hcsim ARGS` in its own process group (so that the group can be signalled, as a
// terminal's Ctrl-C does, without reaching the test), standard output and error to the
// files given (or discarded), under the memory limit. Returns the pid (the group's id).
inline pid_t spawn_hcsim(const std::vector<std::string>& args, const std::string& out = "/dev/null",
                         const std::string& err = "/dev/null") {
  const pid_t pid = ::fork();
  if (pid != 0) {
    if (pid > 0) ::setpgid(pid, pid);
    return pid;
  }
  ::setpgid(0, 0);
  if (!under_asan()) {
    const rlimit as{4ul << 30, 4ul << 30};
    ::setrlimit(RLIMIT_AS, &as);
  }
  std::FILE* o = std::fopen(out.c_str(), "w");
  std::FILE* e = std::fopen(err.c_str(), "w");
  if (o) ::dup2(fileno(o), 1);
  if (e) ::dup2(fileno(e), 2);
  std::vector<char*> argv{const_cast<char*>(HCSIM_BINARY)};
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  ::execv(HCSIM_BINARY, argv.data());
  ::_exit(127);
}

// Everything a test prints when a child did not do what was expected.
inline std::string describe(const ChildResult& r) {
  return "exit " + std::to_string(r.exit_code) + " after " + std::to_string(r.seconds) + " s\n--- stdout:\n" +
         r.out.substr(0, 2000) + "\n--- stderr:\n" + r.err.substr(0, 2000);
}

}  // namespace hcsim::test
