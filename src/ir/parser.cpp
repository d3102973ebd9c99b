// Recursive-descent parser for the IR's Python subset (grammar: docs/ir.md §Grammar).
#include "solar/ir/parser.h"

#include <charconv>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unordered_set>

#include "lexer.h"

namespace solar {
namespace {

using ast::Expr;
using ast::ExprKind;
using ast::ExprPtr;
using ast::Op;
using ast::Stmt;
using ast::StmtKind;
using ast::StmtPtr;
using detail::Tok;
using detail::Token;

const std::unordered_set<std::string_view> kReserved = {
    "def",      "for",    "in",     "if",     "elif",     "else",  "while", "return",
    "pass",     "import", "from",   "as",     "and",      "or",    "not",   "lambda",
    "class",    "with",   "try",    "except", "finally",  "raise", "yield", "global",
    "nonlocal", "del",    "assert", "break",  "continue", "is",    "async", "await",
};

class Parser {
 public:
  Parser(std::string_view text, const std::string& file) : lexer_(text, file), file_(file) {}

  ast::Module parse_module() {
    ast::Module m;
    m.file = file_;
    m.arena = arena_;
    while (!at(Tok::kEof)) {
      if (accept(Tok::kNewline)) continue;
      parse_statement_into(m.body);
    }
    return m;
  }

 private:
  // --- token helpers -------------------------------------------------------------------
  // Tokens come from the lexer on demand into a short window; consumed tokens are dropped
  // in batches, so a reference to a token stays valid for the next kKeep consumptions.
  // `cur_` caches the current token: every precedence level of an expression asks for it
  // (a few dozen asks per token), and a deque index costs a division's worth of arithmetic.
  // A deque's push_back and pop_front leave references to the other elements valid, so the
  // pointer stays good until next() moves past it.
  static constexpr size_t kKeep = 16;
  [[gnu::always_inline]] const Token& peek() {
    if (cur_ == nullptr) [[unlikely]] {
      while (window_.size() <= pos_) lexer_.fill(&window_);
      cur_ = &window_[pos_];
    }
    return *cur_;
  }
  const Token& peek(size_t k) {
    if (pos_ + k >= window_.size()) [[unlikely]] {
      while (window_.size() <= pos_ + k) lexer_.fill(&window_);
    }
    return window_[pos_ + k];
  }
  // Token tests run several times per token: compare length and first byte before the text.
  [[gnu::always_inline]] static bool same(std::string_view a, std::string_view b) {
    return a.size() == b.size() && a[0] == b[0] && (a.size() == 1 || a == b);
  }
  [[gnu::always_inline]] bool at(Tok kind) { return peek().kind == kind; }
  [[gnu::always_inline]] bool at_op(std::string_view op) {
    const Token& t = peek();
    return t.kind == Tok::kOp && same(t.text, op);
  }
  [[gnu::always_inline]] bool at_kw(std::string_view kw) {
    const Token& t = peek();
    return t.kind == Tok::kName && same(t.text, kw);
  }
  const Token& next() {
    const Token& t = peek();
    if (t.kind == Tok::kEof) return t;
    ++pos_;
    if (pos_ >= 2 * kKeep) {
      for (size_t i = 0; i < kKeep; ++i) window_.pop_front();
      pos_ -= kKeep;
    }
    cur_ = pos_ < window_.size() ? &window_[pos_] : nullptr;
    return t;
  }
  bool accept(Tok kind) {
    if (!at(kind)) return false;
    next();
    return true;
  }
  bool accept_op(std::string_view op) {
    if (!at_op(op)) return false;
    next();
    return true;
  }
  bool accept_kw(std::string_view kw) {
    if (!at_kw(kw)) return false;
    next();
    return true;
  }
  static std::string describe(const Token& t) {
    switch (t.kind) {
      case Tok::kNewline:
        return "end of line";
      case Tok::kEof:
        return "end of file";
      case Tok::kIndent:
        return "an indented block";
      case Tok::kDedent:
        return "the end of a block";
      default:
        return "'" + std::string(t.text) + "'";
    }
  }
  [[noreturn]] void fail(Loc loc, std::string msg, std::string hint = "") const {
    throw UserError(ErrorKind::kSyntax, file_, loc, std::move(msg), std::move(hint));
  }
  // Valid Python that the IR does not accept.
  [[noreturn]] void unsupported(Loc loc, std::string msg, std::string hint = "") const {
    throw UserError(ErrorKind::kUnsupported, file_, loc, std::move(msg), std::move(hint));
  }
  // Bounds recursion so that pathological input is an error, not a stack overflow.
  struct DepthGuard {
    Parser& p;
    explicit DepthGuard(Parser& parser) : p(parser) {
      if (++p.depth_ > kMaxDepth) {
        p.fail(p.peek().loc,
               "expression or block nested too deeply (more than " + std::to_string(kMaxDepth) +
                   " levels)",
               "split it into several statements");
      }
    }
    ~DepthGuard() { --p.depth_; }
  };
  static constexpr int kMaxDepth = 200;
  static constexpr uint32_t kMaxTreeDepth = 4000;
  // Sets the depth of a node built here from its children's.
  static ExprPtr sized(std::shared_ptr<Expr> e) {
    e->depth = ast::subtree_depth(*e);
    return e;
  }
  // Operands of one chain of binary operators (a + b + ... builds a left-deep tree).
  static constexpr int kMaxChain = 2000;
  void count_chain(int* n) {
    if (++*n > kMaxChain) {
      fail(peek().loc,
           "expression has more than " + std::to_string(kMaxChain) + " operands in a row",
           "split it into several statements or kernels");
    }
  }
  void expect_op(std::string_view op, const char* context) {
    if (!accept_op(op)) {
      fail(peek().loc,
           "expected '" + std::string(op) + "' " + context + ", found " + describe(peek()));
    }
  }
  // Nodes live in the module's arena (allocate_shared puts the control block there too).
  template <typename T>
  std::shared_ptr<T> node() {
    return std::allocate_shared<T>(std::pmr::polymorphic_allocator<T>(arena_.get()));
  }
  ExprPtr binary(Op op, ExprPtr a, ExprPtr b, Loc loc) {
    auto e = node<Expr>();
    e->kind = ExprKind::kBinary;
    e->op = op;
    e->loc = loc.line ? loc : a->loc;
    e->items = {std::move(a), std::move(b)};
    e->depth = ast::subtree_depth(*e);
    return e;
  }
  ExprPtr unary(Op op, ExprPtr a, Loc loc) {
    auto e = node<Expr>();
    e->kind = ExprKind::kUnary;
    e->op = op;
    e->loc = loc;
    e->items = {std::move(a)};
    e->depth = ast::subtree_depth(*e);
    return e;
  }

  // A closing bracket: when it is missing, point at the opening one (the usual culprit).
  void expect_close(std::string_view close, Loc open, const char* context) {
    if (accept_op(close)) return;
    const Token& t = peek();
    fail(open,
         "'" +
             std::string(close == ")"   ? "("
                         : close == "]" ? "["
                                        : "{") +
             "' is never closed: expected '" + std::string(close) + "' " + context + ", found " +
             describe(t) + " at " + std::to_string(t.loc.line) + ":" + std::to_string(t.loc.col),
         "close the bracket opened here");
  }
  std::string expect_name(const char* context) {
    const Token& t = peek();
    if (t.kind != Tok::kName || kReserved.count(t.text)) {
      fail(t.loc, std::string("expected a name ") + context + ", found " + describe(t));
    }
    next();
    return std::string(t.text);
  }
  void expect_newline() {
    if (accept(Tok::kNewline) || at(Tok::kEof)) return;
    fail(peek().loc, "expected end of line, found " + describe(peek()),
         "one statement per line; the IR accepts a subset of Python (docs/ir.md)");
  }

  // --- statements ------------------------------------------------------------------------
  void parse_statement_into(std::vector<StmtPtr>& out) {
    DepthGuard guard(*this);
    const Token& t = peek();
    if (at(Tok::kIndent)) {
      throw UserError(ErrorKind::kIndentation, file_, t.loc, "unexpected indent",
                      "indent only the body of a def, for, if or while");
    }
    if (at_op("@") || at_kw("def")) {
      out.push_back(parse_funcdef());
    } else if (at_kw("for")) {
      out.push_back(parse_for());
    } else if (at_kw("if")) {
      out.push_back(parse_if());
    } else if (at_kw("while")) {
      out.push_back(parse_while());
    } else if (at_kw("with")) {
      out.push_back(parse_with());
    } else {
      parse_simple_line(out);
    }
  }

  // simple_stmt (';' simple_stmt)* NEWLINE
  void parse_simple_line(std::vector<StmtPtr>& out) {
    out.push_back(parse_simple());
    while (accept_op(";")) {
      if (at(Tok::kNewline) || at(Tok::kEof)) break;
      out.push_back(parse_simple());
    }
    expect_newline();
  }

  StmtPtr parse_simple() {
    const Token& t = peek();
    auto s = node<Stmt>();
    s->loc = t.loc;
    if (t.kind == Tok::kName) {
      if (t.text == "pass") {
        next();
        s->kind = StmtKind::kPass;
        return s;
      }
      if (t.text == "return") {
        next();
        s->kind = StmtKind::kReturn;
        if (!at(Tok::kNewline) && !at(Tok::kEof) && !at_op(";")) s->value = parse_exprlist();
        return s;
      }
      if (t.text == "import" || t.text == "from") return parse_import();
      if (t.text == "break" || t.text == "continue") {
        unsupported(
            t.loc, "'" + std::string(t.text) + "' is not supported",
            "loops in the IR have static trip counts; restructure without " + std::string(t.text));
      }
      if (t.text == "elif" || t.text == "else") {
        fail(t.loc, "'" + std::string(t.text) + "' without a matching 'if'");
      }
      if (kReserved.count(t.text) && t.text != "not" && t.text != "lambda") {
        unsupported(t.loc, "'" + std::string(t.text) + "' statements are not part of the IR",
                    "the IR accepts the Python subset described in docs/ir.md");
      }
    }
    ExprPtr lhs = parse_exprlist();
    if (accept_op("=")) {
      if (at_op("=")) fail(peek().loc, "unexpected '='");
      s->kind = StmtKind::kAssign;
      s->target = lhs;
      s->value = parse_exprlist();
      if (at_op("=")) {
        fail(peek().loc, "chained assignment is not supported", "assign each name separately");
      }
      check_target(*lhs);
      return s;
    }
    static const std::pair<std::string_view, Op> kAug[] = {
        {"+=", Op::kAdd},       {"-=", Op::kSub}, {"*=", Op::kMul},  {"/=", Op::kDiv},
        {"//=", Op::kFloorDiv}, {"%=", Op::kMod}, {"**=", Op::kPow},
    };
    for (const auto& [text, op] : kAug) {
      if (accept_op(text)) {
        s->kind = StmtKind::kAugAssign;
        s->op = op;
        s->target = lhs;
        s->value = parse_expr();
        check_target(*lhs);
        return s;
      }
    }
    s->kind = StmtKind::kExpr;
    s->value = lhs;
    return s;
  }

  void check_target(const Expr& e) {
    switch (e.kind) {
      case ExprKind::kName:
      case ExprKind::kSubscript:
        return;
      case ExprKind::kTuple:
      case ExprKind::kList:
        for (const auto& item : e.items) check_target(*item);
        return;
      default:
        fail(e.loc, "cannot assign to this expression",
             "assign to a name, a tuple of names, or a tensor element T[i, j]");
    }
  }

  StmtPtr parse_import() {
    auto s = node<Stmt>();
    s->kind = StmtKind::kImport;
    s->loc = peek().loc;
    std::string text;
    while (!at(Tok::kNewline) && !at(Tok::kEof) && !at_op(";")) {
      const Token& t = next();
      std::string_view piece = t.text;
      if (t.kind == Tok::kOp && (piece == "," || piece == "." || piece == "(" || piece == ")")) {
        if (piece == ",") {
          text += ", ";
        } else {
          while (!text.empty() && text.back() == ' ' && piece != "(") text.pop_back();
          text += piece;
        }
      } else {
        if (!text.empty() && text.back() != ' ' && text.back() != '.' && text.back() != '(')
          text += ' ';
        text += piece;
      }
    }
    s->text = text;
    return s;
  }

  std::vector<StmtPtr> parse_suite(const char* what) {
    std::vector<StmtPtr> body;
    if (!accept(Tok::kNewline)) {
      // Body on the same line: `for n in Dim("N"): Y[n] = 0`
      parse_simple_line(body);
      return body;
    }
    if (!accept(Tok::kIndent)) {
      throw UserError(ErrorKind::kIndentation, file_, peek().loc,
                      std::string("expected an indented block after ") + what,
                      "indent the body by 4 spaces");
    }
    while (!accept(Tok::kDedent)) {
      if (at(Tok::kEof)) break;
      if (accept(Tok::kNewline)) continue;
      parse_statement_into(body);
    }
    return body;
  }

  StmtPtr parse_funcdef() {
    auto s = node<Stmt>();
    s->kind = StmtKind::kFunctionDef;
    s->loc = peek().loc;
    while (accept_op("@")) {
      s->decorators.push_back(parse_expr());
      expect_newline();
      while (accept(Tok::kNewline)) {
      }
    }
    if (!accept_kw("def")) fail(peek().loc, "expected 'def' after a decorator");
    s->name = expect_name("after 'def'");
    expect_op("(", "after the function name");
    while (!at_op(")")) {
      ast::Param p;
      p.loc = peek().loc;
      if (at_op("*") || at_op("**")) {
        unsupported(peek().loc, "*args and **kwargs are not supported",
                    "list each parameter by name");
      }
      p.name = expect_name("for a parameter");
      if (accept_op(":")) p.annotation = parse_expr();
      if (accept_op("=")) p.default_value = parse_expr();
      s->params.push_back(std::move(p));
      if (!accept_op(",")) break;
    }
    expect_op(")", "to close the parameter list");
    if (accept_op("->")) s->returns = parse_expr();
    expect_op(":", "after the function signature");
    s->body = parse_suite("'def'");
    return s;
  }

  StmtPtr parse_for() {
    auto s = node<Stmt>();
    s->kind = StmtKind::kFor;
    s->loc = next().loc;
    s->target = parse_target_list();
    if (!accept_kw("in")) fail(peek().loc, "expected 'in' in for loop, found " + describe(peek()));
    s->value = parse_exprlist();
    expect_op(":", "after the for header");
    s->body = parse_suite("'for'");
    if (at_kw("else")) unsupported(peek().loc, "'for ... else' is not supported");
    return s;
  }

  ExprPtr parse_target_list() {
    Loc loc = peek().loc;
    std::vector<ExprPtr> items;
    do {
      auto e = node<Expr>();
      e->kind = ExprKind::kName;
      e->loc = peek().loc;
      e->text = expect_name("as a loop variable");
      items.push_back(e);
    } while (accept_op(","));
    if (items.size() == 1) return items[0];
    auto t = node<Expr>();
    t->kind = ExprKind::kTuple;
    t->loc = loc;
    t->items.assign(items.begin(), items.end());
    return t;
  }

  StmtPtr parse_if() {
    auto s = node<Stmt>();
    s->kind = StmtKind::kIf;
    s->loc = next().loc;  // 'if' or 'elif'
    s->value = parse_expr();
    expect_op(":", "after the if condition");
    s->body = parse_suite("'if'");
    if (at_kw("elif")) {
      s->orelse.push_back(parse_if());
    } else if (accept_kw("else")) {
      expect_op(":", "after 'else'");
      s->orelse = parse_suite("'else'");
    }
    return s;
  }

  StmtPtr parse_while() {
    auto s = node<Stmt>();
    s->kind = StmtKind::kWhile;
    s->loc = next().loc;
    s->value = parse_expr();
    expect_op(":", "after the while condition");
    s->body = parse_suite("'while'");
    return s;
  }

  // with EXPR: suite — one context expression, no `as` (the checker accepts only unit(...)).
  StmtPtr parse_with() {
    auto s = node<Stmt>();
    s->kind = StmtKind::kWith;
    s->loc = next().loc;
    s->value = parse_expr();
    if (at_kw("as")) {
      unsupported(peek().loc, "'with ... as' is not supported",
                  "the composition layer has one context: with unit(\"name\"):");
    }
    if (at_op(",")) {
      unsupported(peek().loc, "one context per 'with'", "nest a second 'with' inside the first");
    }
    expect_op(":", "after the with header");
    s->body = parse_suite("'with'");
    return s;
  }

  // --- expressions -----------------------------------------------------------------------
  // exprlist: expr (',' expr)* [','] — a bare tuple when there is a comma.
  ExprPtr parse_exprlist() {
    Loc loc = peek().loc;
    ExprPtr first = parse_expr();
    if (!at_op(",")) return first;
    auto t = node<Expr>();
    t->kind = ExprKind::kTuple;
    t->loc = loc;
    t->items.push_back(first);
    while (accept_op(",")) {
      if (at(Tok::kNewline) || at(Tok::kEof) || at_op("=") || at_op(")") || at_op(";")) break;
      t->items.push_back(parse_expr());
    }
    return sized(t);
  }

  ExprPtr parse_expr() {
    DepthGuard guard(*this);
    if (at_kw("lambda"))
      unsupported(peek().loc, "lambda is not supported", "define a helper function");
    ExprPtr e = parse_or();
    if (e->depth > kMaxTreeDepth) {
      fail(e->loc,
           "expression is too deep (" + std::to_string(e->depth) + " levels; the limit is " +
               std::to_string(kMaxTreeDepth) + ")",
           "split it into several statements");
    }
    if (at_kw("if")) {
      unsupported(peek().loc, "conditional expressions 'a if c else b' are not supported",
                  "use select(c, a, b) inside kernels, or an if statement in model()");
    }
    return e;
  }

  ExprPtr parse_or() {
    ExprPtr first = parse_and();
    if (!at_kw("or")) return first;
    auto e = node<Expr>();
    e->kind = ExprKind::kBoolOp;
    e->op = Op::kOr;
    e->loc = first->loc;
    e->items.push_back(first);
    int chain = 0;
    while (accept_kw("or")) {
      count_chain(&chain);
      e->items.push_back(parse_and());
    }
    return sized(e);
  }

  ExprPtr parse_and() {
    ExprPtr first = parse_not();
    if (!at_kw("and")) return first;
    auto e = node<Expr>();
    e->kind = ExprKind::kBoolOp;
    e->op = Op::kAnd;
    e->loc = first->loc;
    e->items.push_back(first);
    int chain = 0;
    while (accept_kw("and")) {
      count_chain(&chain);
      e->items.push_back(parse_not());
    }
    return sized(e);
  }

  ExprPtr parse_not() {
    DepthGuard guard(*this);
    if (at_kw("not")) {
      Loc loc = next().loc;
      return unary(Op::kNot, parse_not(), loc);
    }
    return parse_comparison();
  }

  bool at_compare(Op* op) {
    static const std::pair<std::string_view, Op> kCmp[] = {
        {"<", Op::kLt},  {"<=", Op::kLe}, {">", Op::kGt},
        {">=", Op::kGe}, {"==", Op::kEq}, {"!=", Op::kNe},
    };
    if (peek().kind != Tok::kOp) {
      if (at_kw("in") || at_kw("is")) {
        unsupported(peek().loc, "'" + std::string(peek().text) + "' comparisons are not supported");
      }
      return false;
    }
    for (const auto& [text, o] : kCmp) {
      if (peek().text == text) {
        *op = o;
        return true;
      }
    }
    return false;
  }

  ExprPtr parse_comparison() {
    ExprPtr first = parse_arith();
    Op op;
    if (!at_compare(&op)) return first;
    auto e = node<Expr>();
    e->kind = ExprKind::kCompare;
    e->loc = first->loc;
    e->items.push_back(first);
    while (at_compare(&op)) {
      next();
      e->cmp_ops.push_back(op, e->items.get_allocator());
      e->items.push_back(parse_arith());
    }
    return sized(e);
  }

  ExprPtr parse_arith() {
    ExprPtr lhs = parse_term();
    int chain = 0;
    while (at_op("+") || at_op("-")) {
      count_chain(&chain);
      Op op = peek().text == "+" ? Op::kAdd : Op::kSub;
      Loc loc = next().loc;
      lhs = binary(op, lhs, parse_term(), loc);
    }
    return lhs;
  }

  ExprPtr parse_term() {
    ExprPtr lhs = parse_factor();
    int chain = 0;
    while (true) {
      count_chain(&chain);
      Op op;
      if (at_op("*")) {
        op = Op::kMul;
      } else if (at_op("/")) {
        op = Op::kDiv;
      } else if (at_op("//")) {
        op = Op::kFloorDiv;
      } else if (at_op("%")) {
        op = Op::kMod;
      } else if (at_op("@")) {
        unsupported(peek().loc, "the matrix-multiply operator '@' is not supported",
                    "write the contraction as a loop nest in a @kernel");
      } else {
        break;
      }
      Loc loc = next().loc;
      lhs = binary(op, lhs, parse_factor(), loc);
    }
    return lhs;
  }

  ExprPtr parse_factor() {
    DepthGuard guard(*this);
    if (at_op("-") || at_op("+")) {
      Op op = peek().text == "-" ? Op::kNeg : Op::kPos;
      Loc loc = next().loc;
      return unary(op, parse_factor(), loc);
    }
    if (at_op("~")) unsupported(peek().loc, "bitwise '~' is not supported");
    return parse_power();
  }

  ExprPtr parse_power() {
    ExprPtr base = parse_postfix();
    if (at_op("**")) {
      Loc loc = next().loc;
      return binary(Op::kPow, base, parse_factor(), loc);
    }
    if (at_op("&") || at_op("|") || at_op("^")) {
      unsupported(peek().loc, "bitwise operators are not supported",
                  "use 'and' / 'or' for conditions");
    }
    return base;
  }

  ExprPtr parse_postfix() {
    ExprPtr e = parse_atom();
    while (true) {
      if (at_op("(")) {
        Loc loc = next().loc;
        auto call = node<Expr>();
        call->kind = ExprKind::kCall;
        call->loc = e->loc;
        // Most calls and subscripts have up to 3 arguments: one block, not three regrowths
        // (2.3 fewer heap blocks a node in the parse of a 40,000-node program).
        call->items.reserve(4);
        call->items.push_back(std::move(e));
        while (!at_op(")")) {
          if (at_op("*") || at_op("**"))
            unsupported(peek().loc, "argument unpacking is not supported");
          if (peek().kind == Tok::kName && peek(1).kind == Tok::kOp && peek(1).text == "=" &&
              !kReserved.count(peek().text)) {
            ast::Keyword kw;
            kw.loc = peek().loc;
            kw.name = std::string(next().text);
            next();  // '='
            kw.value = parse_expr();
            call->keywords.push_back(std::move(kw), call->items.get_allocator());
          } else {
            if (!call->keywords.empty()) {
              fail(peek().loc, "positional argument after a keyword argument");
            }
            call->items.push_back(parse_expr());
          }
          if (!accept_op(",")) break;
        }
        expect_close(")", loc, "to close the call");
        e = sized(call);
      } else if (at_op("[")) {
        const Loc open = next().loc;
        auto sub = node<Expr>();
        sub->kind = ExprKind::kSubscript;
        sub->loc = e->loc;
        sub->items.reserve(4);
        sub->items.push_back(std::move(e));
        while (!at_op("]")) {
          if (at_op(":")) {
            fail(peek().loc, "slice syntax 'a:b' is not supported",
                 "use the slice(x, dim=..., start=..., stop=...) builtin");
          }
          sub->items.push_back(parse_expr());
          if (at_op(":")) {
            fail(peek().loc, "slice syntax 'a:b' is not supported",
                 "use the slice(x, dim=..., start=..., stop=...) builtin");
          }
          if (!accept_op(",")) break;
        }
        expect_close("]", open, "to close the subscript");
        if (sub->items.size() == 1) fail(sub->loc, "empty subscript");
        e = sized(sub);
      } else if (at_op(".")) {
        next();
        auto attr = node<Expr>();
        attr->kind = ExprKind::kAttribute;
        attr->loc = e->loc;
        attr->items.push_back(e);
        attr->text = expect_name("after '.'");
        e = sized(attr);
      } else {
        return e;
      }
    }
  }

  ExprPtr parse_atom() {
    const Token& t = peek();
    auto e = node<Expr>();
    e->loc = t.loc;
    switch (t.kind) {
      case Tok::kName: {
        if (kReserved.count(t.text)) {
          fail(t.loc, "unexpected keyword '" + std::string(t.text) + "'");
        }
        next();
        e->kind = ExprKind::kName;
        e->text = std::string(t.text);
        return e;
      }
      case Tok::kInt: {
        next();
        std::string digits;
        for (char c : t.text)
          if (c != '_') digits += c;
        int64_t v = 0;
        auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
        if (ec != std::errc() || ptr != digits.data() + digits.size()) {
          fail(t.loc, "integer literal '" + digits + "' is out of range (64-bit)");
        }
        e->kind = ExprKind::kInt;
        e->int_value = v;
        return e;
      }
      case Tok::kFloat: {
        next();
        std::string digits;
        for (char c : t.text)
          if (c != '_') digits += c;
        e->kind = ExprKind::kFloat;
        e->float_value = std::strtod(digits.c_str(), nullptr);
        return e;
      }
      case Tok::kString: {
        e->kind = ExprKind::kStr;
        while (at(Tok::kString)) e->text += next().value;  // implicit concatenation
        return e;
      }
      case Tok::kOp: {
        if (t.text == "(") {
          next();
          if (accept_op(")")) {
            e->kind = ExprKind::kTuple;
            return e;
          }
          ExprPtr inner = parse_expr();
          if (accept_op(")")) return inner;  // parenthesised expression
          e->kind = ExprKind::kTuple;
          e->items.push_back(inner);
          while (accept_op(",")) {
            if (at_op(")")) break;
            e->items.push_back(parse_expr());
          }
          expect_close(")", e->loc, "to close the parenthesis");
          return sized(e);
        }
        if (t.text == "[") {
          next();
          e->kind = ExprKind::kList;
          while (!at_op("]")) {
            e->items.push_back(parse_expr());
            if (at_kw("for")) {
              unsupported(peek().loc, "list comprehensions are not supported",
                          "build the list with a for loop: xs = xs + [item]");
            }
            if (!accept_op(",")) break;
          }
          expect_close("]", e->loc, "to close the list");
          return sized(e);
        }
        if (t.text == "{") {
          next();
          e->kind = ExprKind::kDict;
          while (!at_op("}")) {
            e->items.push_back(parse_expr());
            expect_op(":", "between a dict key and its value");
            e->items.push_back(parse_expr());
            if (!accept_op(",")) break;
          }
          expect_close("}", e->loc, "to close the dict");
          return sized(e);
        }
        break;
      }
      default:
        break;
    }
    fail(t.loc, "expected an expression, found " + describe(t));
  }

  std::shared_ptr<std::pmr::monotonic_buffer_resource> arena_ =
      std::make_shared<std::pmr::monotonic_buffer_resource>(size_t{1} << 16);
  detail::Lexer lexer_;
  std::deque<Token> window_;
  const Token* cur_ = nullptr;  // &window_[pos_] once lexed (see peek())
  const std::string& file_;
  size_t pos_ = 0;
  int depth_ = 0;
};

bool looks_binary(const std::string& text) {
  if (text.find('\0') != std::string::npos) return true;
  // Reject invalid UTF-8 (a quick structural check).
  size_t i = 0;
  while (i < text.size()) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (n == 0 || i + n > text.size()) return true;
    for (size_t k = 1; k < n; ++k)
      if ((static_cast<unsigned char>(text[i + k]) >> 6) != 2) return true;
    i += n;
  }
  return false;
}

}  // namespace

std::string read_source_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw UserError(ErrorKind::kIo, path, {}, "'" + path + "' is a directory, not a file",
                    "pass the path of an IR program (.py)");
  }
  if (!std::filesystem::exists(path, ec)) {
    throw UserError(ErrorKind::kIo, path, {}, "cannot open file '" + path + "': no such file");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UserError(ErrorKind::kIo, path, {}, "cannot open file '" + path + "'");
  in.seekg(0, std::ios::end);
  std::streamoff size = in.tellg();
  if (size < 0) throw UserError(ErrorKind::kIo, path, {}, "cannot read file '" + path + "'");
  if (static_cast<size_t>(size) > kMaxSourceBytes) {
    throw UserError(ErrorKind::kIo, path, {},
                    "file is too large (" + std::to_string(size) + " bytes; the limit is " +
                        std::to_string(kMaxSourceBytes) + ")",
                    "an IR program is a source file; check that you passed the right path");
  }
  in.seekg(0);
  std::string text(static_cast<size_t>(size), '\0');
  in.read(text.data(), size);
  if (looks_binary(text)) {
    throw UserError(ErrorKind::kIo, path, {}, "file is binary, not UTF-8 source text",
                    "pass an IR program (a .py file of kernels and model())");
  }
  if (text.find_first_not_of(" \t\r\n\f") == std::string::npos) {
    throw UserError(ErrorKind::kIo, path, {}, "file is empty",
                    "an IR program needs at least a def model(...) function");
  }
  return text;
}

ast::Module parse_source(const std::string& text, const std::string& file) {
  return Parser(text, file).parse_module();
}

ast::Module parse_file(const std::string& path) {
  return parse_source(read_source_file(path), path);
}

}  // namespace solar
