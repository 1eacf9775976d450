#pragma once
// A small expression language over JSON pointers, for sweep constraints and derived values:
//   "/strategy/tp * /strategy/pp * /strategy/dp == 64"
//   "64 / (/strategy/tp * /strategy/pp)"
//   "/strategy/schedule != 'gpipe' && /workload/micro_batch <= 4"
// Operands: numbers, 'strings' or "strings", true/false, JSON pointers into a document
// (a '/' where an operand is expected starts a pointer whose segments are letters, digits,
// '_' and '~' escapes; ptr('/any-key/x') reaches other keys), and the functions min, max,
// floor, ceil, abs, log2, pow. Operators by precedence, lowest first: ||; &&; == != < <=
// > >=; + -; * / %; unary - and !. Put spaces around a division that follows a pointer
// ("/a/b / 2"): "/a/b/2" reads as the pointer /a/b/2. Arithmetic is in double precision;
// == compares exactly.

#include <memory>
#include <stdexcept>
#include <string>
#include <variant>

#include <nlohmann/json.hpp>

namespace hcsim::sweep {

// A parse or evaluation problem; callers attach the JSON path of the expression.
class ExprError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

using ExprValue = std::variant<double, std::string, bool>;

struct ExprNode;

class Expression {
 public:
  // Throws ExprError on a syntax error (with the character offset).
  static Expression parse(const std::string& text);

  // Throws ExprError when a pointer is missing or not a scalar, or types do not fit.
  [[nodiscard]] ExprValue evaluate(const nlohmann::json& doc) const;
  // The value as JSON: integral numbers become integers.
  [[nodiscard]] nlohmann::json evaluate_json(const nlohmann::json& doc) const;
  // A constraint: the expression must yield a boolean.
  [[nodiscard]] bool holds(const nlohmann::json& doc) const;

  [[nodiscard]] const std::string& text() const { return text_; }

 private:
  std::string text_;
  std::shared_ptr<const ExprNode> root_;
};

// "3", "'gpipe'", "true": for messages.
std::string to_string(const ExprValue& v);

}  // namespace hcsim::sweep
