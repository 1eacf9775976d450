// Atomic result files (sim/cli/output.hpp): a report is written under a temporary name and
// renamed over the target, so a reader -- or a run killed at any moment -- sees either the
// previous complete file or the new complete file, never a prefix of one.
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "hcsim_child.hpp"
#include "sim/cli/output.hpp"

namespace hcsim::test {
namespace {

ino_t inode_of(const std::string& path) {
  struct stat st{};
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return st.st_ino;
}

std::vector<std::string> entries_out(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

TEST(WriteFileAtomic, ReplacesByRenameNotInPlace) {
  TempDir dir;
  const std::string f = dir.file("report.json");
  write_file_atomic(f, "old complete report\n");
  const ino_t before = inode_of(f);
  std::ifstream reader(f, std::ios::binary);  // a reader holding the old file open
  write_file_atomic(f, "new complete report\n");
  // A rename installs a new inode; writing in place would keep the old one (and a reader
  // would see the file truncated, then growing).
  EXPECT_NE(inode_of(f), before);
  std::string held((std::istreambuf_iterator<char>(reader)), std::istreambuf_iterator<char>());
  EXPECT_EQ(held, "old complete report\n");
  EXPECT_EQ(read_file(f), "new complete report\n");
  EXPECT_EQ(entries_out(dir.path()), std::vector<std::string>{"report.json"});  // no temporary left
}

TEST(WriteFileAtomic, FailedRenameLeavesNoTemporary) {
  TempDir dir;
  std::filesystem::create_directory(dir.file("report.json"));  // a directory where the file should go
  EXPECT_THROW(write_file_atomic(dir.file("report.json"), "content"), std::runtime_error);
  EXPECT_EQ(entries_out(dir.path()), std::vector<std::string>{"report.json"});
}

TEST(WriteFileAtomic, MissingDirectoryThrows) {
  TempDir dir;
  EXPECT_THROW(write_file_atomic(dir.file("no/such/dir/report.json"), "content"), std::runtime_error);
}

TEST(AtomicOutput, KilledRunLeavesNoReportAndKeepsTheOldOne) {
  // tests/scenarios/slow_full_ranks.json simulates all 1,024 ranks of GPT-3 175B: a minute
  // or more, so a kill after a second lands in the middle of the run.
  const std::string scenario = std::string(HCSIM_SOURCE_DIR) + "/tests/scenarios/slow_full_ranks.json";
  TempDir dir;
  const std::string fresh = dir.file("fresh"), reused = dir.file("reused");
  std::filesystem::create_directory(reused);
  const std::string old_report = "{\"previous\": \"complete\"}\n";
  std::ofstream(reused + "/report.json") << old_report;

  const pid_t a = spawn_hcsim({"run", scenario, "--format", "json", "--out", fresh});
  const pid_t b = spawn_hcsim({"run", scenario, "--format", "json", "--out", reused});
  ASSERT_GT(a, 0);
  ASSERT_GT(b, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  for (pid_t pid : {a, b}) {
    int status = 0;
    EXPECT_EQ(::waitpid(pid, &status, WNOHANG), 0) << "the run ended before it could be killed";
    ::kill(-pid, SIGKILL);
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  }
  EXPECT_FALSE(file_exists(fresh + "/report.json"));
  EXPECT_FALSE(file_exists(fresh + "/resolved_scenario.json"));
  EXPECT_EQ(read_file(reused + "/report.json"), old_report);
}

}  // namespace
}  // namespace hcsim::test
