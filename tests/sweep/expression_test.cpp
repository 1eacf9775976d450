// The sweep expression language (sim/sweep/expression.hpp). Expected values are plain
// arithmetic worked by hand.
#include "sim/sweep/expression.hpp"

#include <gtest/gtest.h>

namespace hcsim::sweep {
namespace {

const nlohmann::json kDoc = {
    {"strategy", {{"tp", 4}, {"pp", 2}, {"dp", 2}, {"schedule", "1f1b"}, {"sequence_parallel", true}}},
    {"workload", {{"global_batch", 64}, {"micro_batch", 4}}},
    {"odd-key", {{"x", 3}}},
    {"list", {10, 20, 30}}};

double eval(const std::string& text) { return std::get<double>(Expression::parse(text).evaluate(kDoc)); }

TEST(Expression, ArithmeticFollowsPrecedence) {
  EXPECT_EQ(eval("1 + 2 * 3"), 7);
  EXPECT_EQ(eval("(1 + 2) * 3"), 9);
  EXPECT_EQ(eval("-2 * -3"), 6);
  EXPECT_EQ(eval("7 % 4"), 3);
  EXPECT_EQ(eval("2 - 3 - 4"), -5);  // left associative
  EXPECT_EQ(eval("64 / 4 / 2"), 8);
}

TEST(Expression, PointersReadTheDocumentAndSlashAfterAValueDivides) {
  EXPECT_EQ(eval("/strategy/tp * /strategy/pp * /strategy/dp"), 16);
  EXPECT_EQ(eval("64 / (/strategy/tp * /strategy/pp)"), 8);
  EXPECT_EQ(eval("/workload/global_batch / /workload/micro_batch"), 16);
  EXPECT_EQ(eval("/list/1"), 20);                 // a digit segment is an array index
  EXPECT_EQ(eval("ptr('/odd-key/x') + 1"), 4);    // keys outside [A-Za-z0-9_~] through ptr()
}

TEST(Expression, ComparisonsAndLogic) {
  EXPECT_TRUE(Expression::parse("/strategy/tp * /strategy/pp * /strategy/dp == 16").holds(kDoc));
  EXPECT_FALSE(Expression::parse("/strategy/tp <= 2").holds(kDoc));
  EXPECT_TRUE(Expression::parse("/strategy/schedule == '1f1b' && /strategy/sequence_parallel").holds(kDoc));
  EXPECT_TRUE(Expression::parse("/strategy/schedule != \"gpipe\" || 1 > 2").holds(kDoc));
  EXPECT_TRUE(Expression::parse("!(/strategy/pp >= 4)").holds(kDoc));
}

TEST(Expression, FunctionsWorkOnNumbers) {
  EXPECT_EQ(eval("min(3, /strategy/tp, 9)"), 3);
  EXPECT_EQ(eval("max(/strategy/tp, /strategy/pp)"), 4);
  EXPECT_EQ(eval("floor(7 / 2) + ceil(7 / 2)"), 7);
  EXPECT_EQ(eval("log2(/workload/global_batch)"), 6);
  EXPECT_EQ(eval("pow(2, 10)"), 1024);
  EXPECT_EQ(eval("abs(2 - 5)"), 3);
}

TEST(Expression, IntegralResultsBecomeJsonIntegers) {
  const auto v = Expression::parse("64 / (/strategy/tp * /strategy/pp)").evaluate_json(kDoc);
  EXPECT_TRUE(v.is_number_integer());
  EXPECT_EQ(v.get<int>(), 8);
  EXPECT_TRUE(Expression::parse("3 / 2").evaluate_json(kDoc).is_number_float());
  EXPECT_EQ(Expression::parse("'gpipe'").evaluate_json(kDoc), "gpipe");
}

TEST(Expression, SyntaxErrorsSayWhere) {
  try {
    Expression::parse("/strategy/tp * * 2");
    FAIL() << "no error";
  } catch (const ExprError& e) {
    EXPECT_NE(std::string(e.what()).find("unexpected '*' at character 16"), std::string::npos) << e.what();
  }
  EXPECT_THROW(Expression::parse("foo(2)"), ExprError);
  EXPECT_THROW(Expression::parse("(1 + 2"), ExprError);
  EXPECT_THROW(Expression::parse("pow(2)"), ExprError);
  EXPECT_THROW(Expression::parse("1 2"), ExprError);
}

TEST(Expression, EvaluationErrorsNameTheProblem) {
  try {
    (void)Expression::parse("/strategy/zero + 1").evaluate(kDoc);
    FAIL() << "no error";
  } catch (const ExprError& e) {
    EXPECT_STREQ(e.what(), "/strategy/zero is not set in the scenario");
  }
  EXPECT_THROW((void)Expression::parse("/strategy/schedule + 1").evaluate(kDoc), ExprError);
  EXPECT_THROW((void)Expression::parse("/strategy/tp == 'four'").evaluate(kDoc), ExprError);
  EXPECT_THROW((void)Expression::parse("1 / (/strategy/tp - 4)").evaluate(kDoc), ExprError);
  EXPECT_THROW((void)Expression::parse("/strategy").evaluate(kDoc), ExprError);  // an object
  EXPECT_THROW((void)Expression::parse("/strategy/tp + 1").holds(kDoc), ExprError);  // not a comparison
}

}  // namespace
}  // namespace hcsim::sweep
