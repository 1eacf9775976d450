// Forked worker processes (sim/sweep/worker_pool.cpp): every job runs once, results come
// back to the parent, a worker that dies costs only its own job.
#include "sim/sweep/worker_pool.hpp"

#include <unistd.h>

#include <csignal>
#include <map>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace hcsim::sweep {
namespace {

TEST(WorkerPool, EveryJobRunsOnceInAWorkerProcess) {
  const pid_t parent = ::getpid();
  std::vector<std::size_t> jobs;
  for (std::size_t i = 0; i < 40; ++i) jobs.push_back(i * 3);
  std::map<std::size_t, std::string> got;
  run_forked(
      jobs, 3,
      [parent](std::size_t i) { return std::to_string(i * i) + (::getpid() != parent ? " child" : " parent"); },
      [&](std::size_t i, std::string out) { EXPECT_TRUE(got.emplace(i, std::move(out)).second) << "twice: " << i; },
      [](std::size_t, const std::string& why) { return "crash " + why; });
  ASSERT_EQ(got.size(), jobs.size());
  for (std::size_t i : jobs) EXPECT_EQ(got[i], std::to_string(i * i) + " child");
}

TEST(WorkerPool, AWorkerThatDiesCostsOnlyItsJob) {
  std::map<std::size_t, std::string> got;
  run_forked(
      {0, 1, 2, 3, 4, 5, 6, 7}, 2,
      [](std::size_t i) -> std::string {
        if (i == 3) ::raise(SIGKILL);
        if (i == 5) throw std::runtime_error("escaped");
        return "ok";
      },
      [&](std::size_t i, std::string out) { got[i] = std::move(out); },
      [](std::size_t, const std::string& why) { return "crash: " + why; });
  ASSERT_EQ(got.size(), 8u);
  EXPECT_EQ(got[3], "crash: worker process killed by signal 9 (Killed)");
  EXPECT_EQ(got[5], "crash: worker process exited with status 4");
  for (std::size_t i : {0, 1, 2, 4, 6, 7}) EXPECT_EQ(got[i], "ok") << i;
}

TEST(WorkerPool, LargeResultsAndMoreWorkersThanJobs) {
  std::string big(300'000, 'x');  // larger than a pipe buffer
  std::string got;
  run_forked({0}, 8, [&](std::size_t) { return big; }, [&](std::size_t, std::string out) { got = std::move(out); },
             [](std::size_t, const std::string& why) { return why; });
  EXPECT_EQ(got, big);
  run_forked({}, 2, [](std::size_t) { return std::string(); }, [](std::size_t, std::string) { FAIL(); },
             [](std::size_t, const std::string& why) { return why; });
}

}  // namespace
}  // namespace hcsim::sweep
