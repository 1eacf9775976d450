// Ctrl-C and SIGTERM (sim/cli/interrupt.hpp): the parent ends and reaps the forked engine
// process, leaves no file (nor a temporary) behind, prints one line and exits with 130;
// a Ctrl-C at a terminal, which signals the whole process group, ends the engine process
// quietly (no "Segmentation fault." from SimGrid's own handler). The promise is the one of
// docs/robustness.md, "Interrupts".
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "hcsim_child.hpp"
#include "../support/paths.hpp"

namespace hcsim::test {
namespace {

// The quickstart in flow mode, every rank simulated, 4,096 samples: its engine process is
// forked within 0.1 s and simulates for about 8 s.
const std::vector<std::string> kSlowRun{"run", kSource + "/scenarios/quickstart.json", "--set", "/simulation/mode=flow",
                                        "--set", "/simulation/symmetry=false", "--set", "/workload/global_batch=4096"};

std::vector<std::string> slow_run(std::vector<std::string> more) {
  std::vector<std::string> args = kSlowRun;
  args.insert(args.end(), more.begin(), more.end());
  return args;
}
const std::string kRunLine = "hcsim: interrupted; nothing was written — rerun the same command to start again\n";

// The first child of `pid` (/proc/PID/task/PID/children), or 0 when it has none.
pid_t first_child(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/children");
  pid_t child = 0;
  in >> child;
  return child;
}

bool alive(pid_t pid) { return ::kill(pid, 0) == 0; }

struct Interrupted {
  int status = 0;
  pid_t engine = 0;  // the child seen before the signal
  std::string err;
};

// Runs `args`, waits until hcsim has forked (at most 3 s) and at least `after`, then sends
// `sig` to hcsim alone or to its process group; returns how it ended.
Interrupted interrupt(const std::vector<std::string>& args, bool group, const TempDir& io,
                      std::chrono::milliseconds after = std::chrono::milliseconds(500), int sig = SIGINT) {
  Interrupted r;
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t pid = spawn_hcsim(args, io.file("stdout"), io.file("stderr"));
  EXPECT_GT(pid, 0);
  while (std::chrono::steady_clock::now() - t0 < std::chrono::seconds(3) &&
         (r.engine == 0 || std::chrono::steady_clock::now() - t0 < after)) {
    if (r.engine == 0) r.engine = first_child(pid);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_GT(r.engine, 0) << "hcsim forked no process within 3 s";
  EXPECT_EQ(::waitpid(pid, &r.status, WNOHANG), 0) << "the run ended before it could be interrupted";
  ::kill(group ? -pid : pid, sig);
  // hcsim ends at once; one that ignored the signal is killed after 10 s, failing the test.
  const auto sent = std::chrono::steady_clock::now();
  while (::waitpid(pid, &r.status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() - sent > std::chrono::seconds(10)) {
      ADD_FAILURE() << "hcsim did not end within 10 s of the signal";
      ::kill(-pid, SIGKILL);
      ::waitpid(pid, &r.status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  r.err = read_file(io.file("stderr"));
  return r;
}

std::vector<std::string> entries(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) out.push_back(e.path().filename().string());
  return out;
}

void expect_clean_run_interrupt(const Interrupted& r, const TempDir& io, int exit_code = 130) {
  ASSERT_TRUE(WIFEXITED(r.status)) << "ended by signal " << WTERMSIG(r.status) << "\n" << r.err;
  EXPECT_EQ(WEXITSTATUS(r.status), exit_code) << r.err;
  EXPECT_EQ(r.err, kRunLine);
  EXPECT_EQ(read_file(io.file("stdout")), "");
  // Killed and reaped by hcsim: not running, not a zombie waiting for a parent.
  EXPECT_FALSE(alive(r.engine)) << "engine process " << r.engine << " left running";
  EXPECT_TRUE(entries(io.file("out")).empty()) << "a file was written";
  EXPECT_FALSE(file_exists(io.file("out/report.json")));
}

TEST(CliInterrupt, SigintToTheRunEndsTheEngineProcessAndWritesNothing) {
  TempDir io;
  const Interrupted r = interrupt(slow_run({"--format", "json", "--out", io.file("out")}), false, io);
  expect_clean_run_interrupt(r, io);
}

TEST(CliInterrupt, CtrlCToTheProcessGroupEndsQuietly) {
  TempDir io;
  const Interrupted r = interrupt(slow_run({"--out", io.file("out")}), true, io);
  expect_clean_run_interrupt(r, io);
  EXPECT_EQ(r.err.find("Segmentation"), std::string::npos) << r.err;
}

TEST(CliInterrupt, SigtermEndsTheRunAlike) {
  TempDir io;
  const Interrupted r = interrupt(slow_run({"--out", io.file("out")}), false, io, std::chrono::milliseconds(300), SIGTERM);
  expect_clean_run_interrupt(r, io, 128 + SIGTERM);
}

TEST(CliInterrupt, SweepSaysHowToResume) {
  // The sweep's finished points stay in results.jsonl (sim/sweep/results_store.hpp), which a
  // rerun of the printed command reads back.
  TempDir io;
  const std::string sweep = kSource + "/scenarios/sweeps/tiny-gpt-200.json";
  const Interrupted r = interrupt({"sweep", sweep, "--out", io.file("res"), "-q"}, false, io,
                                  std::chrono::milliseconds(300));
  ASSERT_TRUE(WIFEXITED(r.status)) << r.err;
  EXPECT_EQ(WEXITSTATUS(r.status), 130) << r.err;
  EXPECT_EQ(r.err, "hcsim: interrupted; the points that finished are kept in " + io.file("res") +
                       "/results.jsonl — resume with: " + std::string(HCSIM_BINARY) + " sweep " + sweep + " --out " +
                       io.file("res") + " -q\n");
  EXPECT_FALSE(alive(r.engine)) << "worker " << r.engine << " left running";
  for (const auto& e : entries(io.file("res"))) EXPECT_EQ(e.find(".tmp."), std::string::npos) << e;
}

}  // namespace
}  // namespace hcsim::test
