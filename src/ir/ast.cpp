#include "solar/ir/ast.h"

#include <algorithm>
#include <cstdint>

#include "solar/base/prefetch.h"

namespace solar::ast {

const char* op_text(Op op) {
  switch (op) {
    case Op::kAdd:
      return "+";
    case Op::kSub:
      return "-";
    case Op::kMul:
      return "*";
    case Op::kDiv:
      return "/";
    case Op::kFloorDiv:
      return "//";
    case Op::kMod:
      return "%";
    case Op::kPow:
      return "**";
    case Op::kNeg:
      return "-";
    case Op::kPos:
      return "+";
    case Op::kNot:
      return "not";
    case Op::kAnd:
      return "and";
    case Op::kOr:
      return "or";
    case Op::kLt:
      return "<";
    case Op::kLe:
      return "<=";
    case Op::kGt:
      return ">";
    case Op::kGe:
      return ">=";
    case Op::kEq:
      return "==";
    case Op::kNe:
      return "!=";
  }
  return "?";
}

const Keyword* Expr::keyword(const std::string& name) const {
  for (const Keyword& k : keywords)
    if (k.name == name) return &k;
  return nullptr;
}

namespace {
template <typename List>
bool equal_ptrs(const List& a, const List& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!equal(*a[i], *b[i])) return false;
  return true;
}
bool equal_opt(const ExprPtr& a, const ExprPtr& b) {
  if (!a || !b) return !a && !b;
  return equal(*a, *b);
}
}  // namespace

bool equal(const Expr& a, const Expr& b) {
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case ExprKind::kInt:
      return a.int_value == b.int_value;
    case ExprKind::kFloat:
      return a.float_value == b.float_value;
    case ExprKind::kStr:
    case ExprKind::kName:
      return a.text == b.text;
    default:
      break;
  }
  if (a.text != b.text || a.cmp_ops != b.cmp_ops) return false;
  if ((a.kind == ExprKind::kBinary || a.kind == ExprKind::kUnary || a.kind == ExprKind::kBoolOp) &&
      a.op != b.op)
    return false;
  if (!equal_ptrs(a.items, b.items)) return false;
  if (a.keywords.size() != b.keywords.size()) return false;
  for (size_t i = 0; i < a.keywords.size(); ++i) {
    if (a.keywords[i].name != b.keywords[i].name ||
        !equal(*a.keywords[i].value, *b.keywords[i].value))
      return false;
  }
  return true;
}

bool equal(const Stmt& a, const Stmt& b) {
  if (a.kind != b.kind || a.name != b.name || a.text != b.text) return false;
  if (a.kind == StmtKind::kAugAssign && a.op != b.op) return false;
  if (!equal_opt(a.target, b.target) || !equal_opt(a.value, b.value) ||
      !equal_opt(a.returns, b.returns))
    return false;
  if (!equal_ptrs(a.body, b.body) || !equal_ptrs(a.orelse, b.orelse) ||
      !equal_ptrs(a.decorators, b.decorators))
    return false;
  if (a.params.size() != b.params.size()) return false;
  for (size_t i = 0; i < a.params.size(); ++i) {
    if (a.params[i].name != b.params[i].name ||
        !equal_opt(a.params[i].annotation, b.params[i].annotation) ||
        !equal_opt(a.params[i].default_value, b.params[i].default_value))
      return false;
  }
  return true;
}

bool equal(const Module& a, const Module& b) { return equal_ptrs(a.body, b.body); }

namespace {

// The nodes from `begin` to `end` (the next statement's or parameter's), at most `span` bytes
// of them; `end` before `begin` or null: the first `span` bytes.
void prefetch_span(const void* begin, const void* end, size_t span = kPrefetchSpan) {
  const auto a = reinterpret_cast<uintptr_t>(begin), b = reinterpret_cast<uintptr_t>(end);
  const uintptr_t limit = span;
  prefetch_lines(begin, b > a && b - a < limit ? b - a : limit);
}

}  // namespace

void prefetch_ahead(const std::vector<StmtPtr>& body, size_t i, size_t span) {
  const size_t j = i + kPrefetchAhead;
  if (j >= body.size()) return;
  prefetch_span(body[j].get(), j + 1 < body.size() ? body[j + 1].get() : nullptr, span);
}

Stmt::~Stmt() {
  for (size_t i = 0; i < body.size(); ++i) {
    prefetch_ahead(body, i);
    body[i].reset();
  }
}

// A parameter's nodes are its annotation's (and default's), allocated in order like a
// statement's; the next parameter's annotation bounds them.
void prefetch_ahead(const std::vector<Param>& params, size_t i) {
  const size_t j = i + kPrefetchAhead;
  if (j >= params.size()) return;
  const Expr* first =
      params[j].annotation ? params[j].annotation.get() : params[j].default_value.get();
  const Expr* next = j + 1 < params.size() ? params[j + 1].annotation.get() : nullptr;
  prefetch_span(first, next);
}

uint32_t subtree_depth(const Expr& e) {
  uint32_t d = 0;
  for (const auto& item : e.items) d = std::max(d, item->depth);
  for (const auto& kw : e.keywords) d = std::max(d, kw.value->depth);
  return d + 1;
}

ExprPtr make_int(int64_t v, Loc loc) {
  auto e = std::make_shared<Expr>();
  e->kind = ExprKind::kInt;
  e->int_value = v;
  e->loc = loc;
  return e;
}

ExprPtr make_name(std::string name, Loc loc) {
  auto e = std::make_shared<Expr>();
  e->kind = ExprKind::kName;
  e->text = std::move(name);
  e->loc = loc;
  return e;
}

ExprPtr make_binary(Op op, ExprPtr a, ExprPtr b, Loc loc) {
  auto e = std::make_shared<Expr>();
  e->kind = ExprKind::kBinary;
  e->op = op;
  e->loc = loc.line ? loc : a->loc;
  e->items = {std::move(a), std::move(b)};
  e->depth = subtree_depth(*e);
  return e;
}

ExprPtr make_unary(Op op, ExprPtr a, Loc loc) {
  auto e = std::make_shared<Expr>();
  e->kind = ExprKind::kUnary;
  e->op = op;
  e->loc = loc;
  e->items = {std::move(a)};
  e->depth = subtree_depth(*e);
  return e;
}

}  // namespace solar::ast
