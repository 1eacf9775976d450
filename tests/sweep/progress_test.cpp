// Progress lines (sim/sweep/progress.cpp): the time format, and the plain lines written when
// standard error is not a terminal (a tenth of the way each).
#include "sim/sweep/progress.hpp"

#include <algorithm>
#include <cstdio>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace hcsim::sweep {
namespace {

TEST(Progress, FormatsTimeLeft) {
  EXPECT_EQ(Progress::format_eta(0.4), "0s");
  EXPECT_EQ(Progress::format_eta(59.6), "1m 00s");
  EXPECT_EQ(Progress::format_eta(80), "1m 20s");
  EXPECT_EQ(Progress::format_eta(2 * 3600 + 5 * 60 + 10), "2h 05m");
  EXPECT_EQ(Progress::format_eta(-1), "--");
}

TEST(Progress, PlainLinesAtEachTenth) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  {
    Progress p("sweep", 20, true, f);
    for (int i = 0; i < 20; ++i) p.tick(i % 4 != 0);
    p.finish();
  }
  std::rewind(f);
  std::string text;
  for (int c; (c = std::fgetc(f)) != EOF;) text += static_cast<char>(c);
  std::fclose(f);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 10);  // 2, 4, ..., 20 of 20
  EXPECT_THAT(text, ::testing::StartsWith("sweep: 2/20 points (1 not ok)"));
  EXPECT_THAT(text, ::testing::HasSubstr("sweep: 20/20 points (5 not ok)"));
  EXPECT_THAT(text, ::testing::HasSubstr(" in "));  // the last line says how long it took
}

TEST(Progress, DisabledWritesNothing) {
  std::FILE* f = std::tmpfile();
  {
    Progress p("sweep", 5, false, f);
    for (int i = 0; i < 5; ++i) p.tick(true);
    p.finish();
  }
  EXPECT_EQ(std::ftell(f), 0);
  std::fclose(f);
}

}  // namespace
}  // namespace hcsim::sweep
