#include "expression.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <vector>

#include <fmt/format.h>

namespace hcsim::sweep {

struct ExprNode {
  enum class Kind { literal, pointer, unary, binary, call } kind = Kind::literal;
  ExprValue value;              // literal
  std::string name;             // pointer text, operator or function name
  std::vector<std::shared_ptr<const ExprNode>> args;
};

namespace {

using NodePtr = std::shared_ptr<const ExprNode>;

bool pointer_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '~'; }

class Parser {
 public:
  explicit Parser(const std::string& t) : t_(t) {}

  NodePtr parse() {
    NodePtr n = parse_or();
    skip();
    if (i_ < t_.size()) fail(fmt::format("unexpected '{}'", t_[i_]));
    return n;
  }

 private:
  const std::string& t_;
  std::size_t i_ = 0;

  [[noreturn]] void fail(const std::string& what) const {
    throw ExprError(fmt::format("{} at character {} of \"{}\"", what, i_ + 1, t_));
  }
  void skip() {
    while (i_ < t_.size() && std::isspace(static_cast<unsigned char>(t_[i_]))) ++i_;
  }
  bool eat(std::string_view op) {
    skip();
    if (t_.compare(i_, op.size(), op) != 0) return false;
    // "<" must not swallow the first half of "<=", "=" of "==" etc.
    if (op.size() == 1 && i_ + 1 < t_.size() && t_[i_ + 1] == '=' && std::string_view("<>!=").find(op[0]) != std::string_view::npos)
      return false;
    i_ += op.size();
    return true;
  }
  static NodePtr binary(std::string op, NodePtr a, NodePtr b) {
    auto n = std::make_shared<ExprNode>();
    n->kind = ExprNode::Kind::binary;
    n->name = std::move(op);
    n->args = {std::move(a), std::move(b)};
    return n;
  }

  NodePtr parse_or() {
    NodePtr n = parse_and();
    while (eat("||")) n = binary("||", n, parse_and());
    return n;
  }
  NodePtr parse_and() {
    NodePtr n = parse_cmp();
    while (eat("&&")) n = binary("&&", n, parse_cmp());
    return n;
  }
  NodePtr parse_cmp() {
    NodePtr n = parse_add();
    for (const char* op : {"==", "!=", "<=", ">=", "<", ">"})
      if (eat(op)) return binary(op, n, parse_add());
    return n;
  }
  NodePtr parse_add() {
    NodePtr n = parse_mul();
    for (;;) {
      if (eat("+")) n = binary("+", n, parse_mul());
      else if (eat("-")) n = binary("-", n, parse_mul());
      else return n;
    }
  }
  NodePtr parse_mul() {
    NodePtr n = parse_unary();
    for (;;) {
      if (eat("*")) n = binary("*", n, parse_unary());
      else if (eat("/")) n = binary("/", n, parse_unary());
      else if (eat("%")) n = binary("%", n, parse_unary());
      else return n;
    }
  }
  NodePtr parse_unary() {
    for (const char* op : {"-", "!"}) {
      if (eat(op)) {
        auto n = std::make_shared<ExprNode>();
        n->kind = ExprNode::Kind::unary;
        n->name = op;
        n->args = {parse_unary()};
        return n;
      }
    }
    return parse_primary();
  }
  NodePtr parse_primary();
  NodePtr parse_pointer();
  NodePtr parse_string();
  NodePtr parse_number();
  NodePtr parse_word();
};

NodePtr Parser::parse_primary() {
  skip();
  if (i_ >= t_.size()) fail("expected a value, found the end");
  const char c = t_[i_];
  if (c == '(') {
    ++i_;
    NodePtr n = parse_or();
    if (!eat(")")) fail("expected ')'");
    return n;
  }
  if (c == '/') return parse_pointer();
  if (c == '\'' || c == '"') return parse_string();
  if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') return parse_number();
  if (std::isalpha(static_cast<unsigned char>(c))) return parse_word();
  fail(fmt::format("unexpected '{}'", c));
}

NodePtr Parser::parse_pointer() {
  const std::size_t start = i_;
  while (i_ < t_.size() && t_[i_] == '/' && i_ + 1 < t_.size() && pointer_char(t_[i_ + 1])) {
    ++i_;
    while (i_ < t_.size() && pointer_char(t_[i_])) ++i_;
  }
  if (i_ == start) fail("a JSON pointer needs a name after '/'");
  auto n = std::make_shared<ExprNode>();
  n->kind = ExprNode::Kind::pointer;
  n->name = t_.substr(start, i_ - start);
  return n;
}

NodePtr Parser::parse_string() {
  const char q = t_[i_++];
  const std::size_t start = i_;
  while (i_ < t_.size() && t_[i_] != q) ++i_;
  if (i_ >= t_.size()) fail("unterminated string");
  auto n = std::make_shared<ExprNode>();
  n->value = t_.substr(start, i_ - start);
  ++i_;
  return n;
}

NodePtr Parser::parse_number() {
  const char* begin = t_.c_str() + i_;
  char* end = nullptr;
  const double v = std::strtod(begin, &end);
  if (end == begin) fail("bad number");
  i_ += static_cast<std::size_t>(end - begin);
  auto n = std::make_shared<ExprNode>();
  n->value = v;
  return n;
}

NodePtr Parser::parse_word() {
  const std::size_t start = i_;
  while (i_ < t_.size() && (std::isalnum(static_cast<unsigned char>(t_[i_])) || t_[i_] == '_')) ++i_;
  const std::string w = t_.substr(start, i_ - start);
  auto n = std::make_shared<ExprNode>();
  if (w == "true" || w == "false") {
    n->value = (w == "true");
    return n;
  }
  static const std::vector<std::string> fns{"min", "max", "floor", "ceil", "abs", "log2", "pow", "ptr"};
  if (std::find(fns.begin(), fns.end(), w) == fns.end())
    fail(fmt::format("unknown name \"{}\" (functions: min, max, floor, ceil, abs, log2, pow, ptr)", w));
  if (!eat("(")) fail(fmt::format("expected '(' after {}", w));
  n->kind = ExprNode::Kind::call;
  n->name = w;
  if (!eat(")")) {
    do n->args.push_back(parse_or());
    while (eat(","));
    if (!eat(")")) fail("expected ')' or ','");
  }
  const std::size_t want = (w == "min" || w == "max") ? 0 : (w == "pow" ? 2 : 1);
  if ((want == 0 && n->args.empty()) || (want > 0 && n->args.size() != want))
    fail(fmt::format("{} takes {} argument(s)", w, want == 0 ? "one or more" : std::to_string(want)));
  if (w == "ptr") {
    const auto* s = std::get_if<std::string>(&n->args[0]->value);
    if (n->args[0]->kind != ExprNode::Kind::literal || !s || s->empty() || (*s)[0] != '/')
      fail("ptr() takes a quoted JSON pointer such as ptr('/a-b/c')");
    auto p = std::make_shared<ExprNode>();
    p->kind = ExprNode::Kind::pointer;
    p->name = *s;
    return p;
  }
  return n;
}

double number_of(const ExprValue& v, const std::string& where) {
  if (const auto* d = std::get_if<double>(&v)) return *d;
  throw ExprError(fmt::format("{} expects a number, got {}", where, to_string(v)));
}

bool truth(const ExprValue& v, const std::string& where) {
  if (const auto* b = std::get_if<bool>(&v)) return *b;
  throw ExprError(fmt::format("{} expects true or false, got {}", where, to_string(v)));
}

ExprValue eval(const ExprNode& n, const nlohmann::json& doc);

ExprValue lookup(const std::string& ptr, const nlohmann::json& doc) {
  const nlohmann::json* v = nullptr;
  try {
    const nlohmann::json::json_pointer jp(ptr);
    if (doc.contains(jp)) v = &doc.at(jp);
  } catch (const nlohmann::json::exception&) {
    v = nullptr;
  }
  if (!v) throw ExprError(fmt::format("{} is not set in the scenario", ptr));
  if (v->is_number()) return v->get<double>();
  if (v->is_string()) return v->get<std::string>();
  if (v->is_boolean()) return v->get<bool>();
  throw ExprError(fmt::format("{} is {}, not a number, string or boolean", ptr, v->type_name()));
}

ExprValue compare(const std::string& op, const ExprValue& a, const ExprValue& b) {
  if (a.index() != b.index())
    throw ExprError(fmt::format("cannot compare {} with {}", to_string(a), to_string(b)));
  if (op == "==") return a == b;
  if (op == "!=") return a != b;
  if (op == "<") return a < b;
  if (op == "<=") return a <= b;
  if (op == ">") return a > b;
  return a >= b;
}

ExprValue eval_binary(const ExprNode& n, const nlohmann::json& doc) {
  const std::string& op = n.name;
  if (op == "&&") return truth(eval(*n.args[0], doc), op) && truth(eval(*n.args[1], doc), op);
  if (op == "||") return truth(eval(*n.args[0], doc), op) || truth(eval(*n.args[1], doc), op);
  const ExprValue a = eval(*n.args[0], doc), b = eval(*n.args[1], doc);
  if (op.size() == 2 || op == "<" || op == ">") return compare(op, a, b);
  const double x = number_of(a, op), y = number_of(b, op);
  if (op == "+") return x + y;
  if (op == "-") return x - y;
  if (op == "*") return x * y;
  if (y == 0) throw ExprError(fmt::format("division by zero in {} {} {}", to_string(a), op, to_string(b)));
  if (op == "/") return x / y;
  return std::fmod(x, y);
}

ExprValue eval_call(const ExprNode& n, const nlohmann::json& doc) {
  std::vector<double> a;
  for (const auto& arg : n.args) a.push_back(number_of(eval(*arg, doc), n.name + "()"));
  if (n.name == "min") return *std::min_element(a.begin(), a.end());
  if (n.name == "max") return *std::max_element(a.begin(), a.end());
  if (n.name == "floor") return std::floor(a[0]);
  if (n.name == "ceil") return std::ceil(a[0]);
  if (n.name == "abs") return std::fabs(a[0]);
  if (n.name == "log2") {
    if (a[0] <= 0) throw ExprError(fmt::format("log2 of {}", a[0]));
    return std::log2(a[0]);
  }
  return std::pow(a[0], a[1]);
}

ExprValue eval(const ExprNode& n, const nlohmann::json& doc) {
  switch (n.kind) {
    case ExprNode::Kind::literal: return n.value;
    case ExprNode::Kind::pointer: return lookup(n.name, doc);
    case ExprNode::Kind::unary: {
      const ExprValue v = eval(*n.args[0], doc);
      if (n.name == "!") return !truth(v, "!");
      return -number_of(v, "unary -");
    }
    case ExprNode::Kind::binary: return eval_binary(n, doc);
    case ExprNode::Kind::call: return eval_call(n, doc);
  }
  return false;
}

}  // namespace

std::string to_string(const ExprValue& v) {
  if (const auto* d = std::get_if<double>(&v)) return fmt::format("{}", *d);
  if (const auto* s = std::get_if<std::string>(&v)) return "'" + *s + "'";
  return std::get<bool>(v) ? "true" : "false";
}

Expression Expression::parse(const std::string& text) {
  Expression e;
  e.text_ = text;
  e.root_ = Parser(text).parse();
  return e;
}

ExprValue Expression::evaluate(const nlohmann::json& doc) const { return eval(*root_, doc); }

nlohmann::json Expression::evaluate_json(const nlohmann::json& doc) const {
  const ExprValue v = evaluate(doc);
  if (const auto* d = std::get_if<double>(&v)) {
    if (!std::isfinite(*d)) throw ExprError(fmt::format("\"{}\" is not finite", text_));
    if (std::floor(*d) == *d && std::fabs(*d) < 9.0e15) return static_cast<std::int64_t>(*d);
    return *d;
  }
  if (const auto* s = std::get_if<std::string>(&v)) return *s;
  return std::get<bool>(v);
}

bool Expression::holds(const nlohmann::json& doc) const {
  const ExprValue v = evaluate(doc);
  if (const auto* b = std::get_if<bool>(&v)) return *b;
  throw ExprError(fmt::format("\"{}\" gives {}, not true or false; write a comparison such as == or <=", text_,
                              to_string(v)));
}

}  // namespace hcsim::sweep
