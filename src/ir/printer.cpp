// Printer: emits parenthesised-only-where-needed Python source that parses back to an equal
// tree. Precedence levels follow Python's grammar.
#include "solar/ir/printer.h"

#include <cmath>
#include <cstdio>
#include <sstream>

namespace solar {
namespace {

using ast::Expr;
using ast::ExprKind;
using ast::Op;
using ast::Stmt;
using ast::StmtKind;

// Binding strength (higher binds tighter).
enum Prec : int {
  kPrecTuple = 0,
  kPrecOr = 1,
  kPrecAnd = 2,
  kPrecNot = 3,
  kPrecCmp = 4,
  kPrecArith = 5,
  kPrecTerm = 6,
  kPrecUnary = 7,
  kPrecPow = 8,
  kPrecPostfix = 9,
  kPrecAtom = 10,
};

int prec_of(const Expr& e) {
  switch (e.kind) {
    case ExprKind::kBoolOp:
      return e.op == Op::kOr ? kPrecOr : kPrecAnd;
    case ExprKind::kUnary:
      return e.op == Op::kNot ? kPrecNot : kPrecUnary;
    case ExprKind::kCompare:
      return kPrecCmp;
    case ExprKind::kBinary:
      switch (e.op) {
        case Op::kAdd:
        case Op::kSub:
          return kPrecArith;
        case Op::kPow:
          return kPrecPow;
        default:
          return kPrecTerm;
      }
    case ExprKind::kInt:
      return e.int_value < 0 ? kPrecUnary : kPrecAtom;
    case ExprKind::kFloat:
      return e.float_value < 0 || std::signbit(e.float_value) ? kPrecUnary : kPrecAtom;
    default:
      return kPrecAtom;
  }
}

std::string quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        out += c;
    }
  }
  return out + "\"";
}

std::string format_float(double v) {
  if (std::isinf(v)) return v > 0 ? "1e999" : "-1e999";
  char buf[64];
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  std::string s = buf;
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return s;
}

void print(std::ostream& os, const Expr& e, int min_prec);

void print_items(std::ostream& os, const ast::ExprList& items, size_t from = 0) {
  for (size_t i = from; i < items.size(); ++i) {
    if (i > from) os << ", ";
    print(os, *items[i], kPrecOr);
  }
}

void print(std::ostream& os, const Expr& e, int min_prec) {
  const int p = prec_of(e);
  const bool paren = p < min_prec;
  if (paren) os << "(";
  switch (e.kind) {
    case ExprKind::kInt:
      os << e.int_value;
      break;
    case ExprKind::kFloat:
      os << format_float(e.float_value);
      break;
    case ExprKind::kStr:
      os << quote(e.text);
      break;
    case ExprKind::kName:
      os << e.text;
      break;
    case ExprKind::kAttribute:
      print(os, *e.items[0], kPrecPostfix);
      os << "." << e.text;
      break;
    case ExprKind::kSubscript:
      print(os, *e.items[0], kPrecPostfix);
      os << "[";
      print_items(os, e.items, 1);
      os << "]";
      break;
    case ExprKind::kCall: {
      print(os, *e.items[0], kPrecPostfix);
      os << "(";
      print_items(os, e.items, 1);
      for (size_t i = 0; i < e.keywords.size(); ++i) {
        if (i > 0 || e.items.size() > 1) os << ", ";
        os << e.keywords[i].name << "=";
        print(os, *e.keywords[i].value, kPrecOr);
      }
      os << ")";
      break;
    }
    case ExprKind::kBinary: {
      // Left-associative except '**' (right-associative).
      const bool right_assoc = e.op == Op::kPow;
      print(os, *e.items[0], right_assoc ? p + 1 : p);
      os << " " << ast::op_text(e.op) << " ";
      print(os, *e.items[1], right_assoc ? kPrecUnary : p + 1);
      break;
    }
    case ExprKind::kUnary:
      os << ast::op_text(e.op);
      if (e.op == Op::kNot) os << " ";
      print(os, *e.items[0], p);
      break;
    case ExprKind::kCompare:
      print(os, *e.items[0], kPrecArith);
      for (size_t i = 0; i < e.cmp_ops.size(); ++i) {
        os << " " << ast::op_text(e.cmp_ops[i]) << " ";
        print(os, *e.items[i + 1], kPrecArith);
      }
      break;
    case ExprKind::kBoolOp:
      for (size_t i = 0; i < e.items.size(); ++i) {
        if (i) os << " " << ast::op_text(e.op) << " ";
        print(os, *e.items[i], p + 1);
      }
      break;
    case ExprKind::kTuple:
      os << "(";
      print_items(os, e.items);
      if (e.items.size() == 1) os << ",";
      os << ")";
      break;
    case ExprKind::kList:
      os << "[";
      print_items(os, e.items);
      os << "]";
      break;
    case ExprKind::kDict:
      os << "{";
      for (size_t i = 0; i + 1 < e.items.size(); i += 2) {
        if (i) os << ", ";
        print(os, *e.items[i], kPrecOr);
        os << ": ";
        print(os, *e.items[i + 1], kPrecOr);
      }
      os << "}";
      break;
  }
  if (paren) os << ")";
}

// Tuples at statement level print without parentheses (a, b = f(x)).
void print_top(std::ostream& os, const Expr& e) {
  if (e.kind == ExprKind::kTuple && !e.items.empty()) {
    print_items(os, e.items);
    if (e.items.size() == 1) os << ",";
  } else {
    print(os, e, kPrecTuple);
  }
}

void print_block(std::ostream& os, const std::vector<ast::StmtPtr>& body, int indent);

void print_stmt(std::ostream& os, const Stmt& s, int indent) {
  const std::string pad(static_cast<size_t>(indent) * 4, ' ');
  switch (s.kind) {
    case StmtKind::kAssign:
      os << pad;
      print_top(os, *s.target);
      os << " = ";
      print_top(os, *s.value);
      os << "\n";
      break;
    case StmtKind::kAugAssign:
      os << pad;
      print_top(os, *s.target);
      os << " " << ast::op_text(s.op) << "= ";
      print(os, *s.value, kPrecOr);
      os << "\n";
      break;
    case StmtKind::kFor:
      os << pad << "for ";
      print_top(os, *s.target);
      os << " in ";
      print_top(os, *s.value);
      os << ":\n";
      print_block(os, s.body, indent + 1);
      break;
    case StmtKind::kIf: {
      os << pad << "if ";
      print(os, *s.value, kPrecOr);
      os << ":\n";
      print_block(os, s.body, indent + 1);
      const Stmt* cur = &s;
      while (cur->orelse.size() == 1 && cur->orelse[0]->kind == StmtKind::kIf) {
        cur = cur->orelse[0].get();
        os << pad << "elif ";
        print(os, *cur->value, kPrecOr);
        os << ":\n";
        print_block(os, cur->body, indent + 1);
      }
      if (!cur->orelse.empty()) {
        os << pad << "else:\n";
        print_block(os, cur->orelse, indent + 1);
      }
      break;
    }
    case StmtKind::kWhile:
      os << pad << "while ";
      print(os, *s.value, kPrecOr);
      os << ":\n";
      print_block(os, s.body, indent + 1);
      break;
    case StmtKind::kWith:
      os << pad << "with ";
      print(os, *s.value, kPrecOr);
      os << ":\n";
      print_block(os, s.body, indent + 1);
      break;
    case StmtKind::kReturn:
      os << pad << "return";
      if (s.value) {
        os << " ";
        print_top(os, *s.value);
      }
      os << "\n";
      break;
    case StmtKind::kExpr:
      os << pad;
      print_top(os, *s.value);
      os << "\n";
      break;
    case StmtKind::kPass:
      os << pad << "pass\n";
      break;
    case StmtKind::kImport:
      os << pad << s.text << "\n";
      break;
    case StmtKind::kFunctionDef:
      for (const auto& d : s.decorators) {
        os << pad << "@";
        print(os, *d, kPrecOr);
        os << "\n";
      }
      os << pad << "def " << s.name << "(";
      for (size_t i = 0; i < s.params.size(); ++i) {
        if (i) os << ", ";
        os << s.params[i].name;
        if (s.params[i].annotation) {
          os << ": ";
          print(os, *s.params[i].annotation, kPrecOr);
        }
        if (s.params[i].default_value) {
          os << (s.params[i].annotation ? " = " : "=");
          print(os, *s.params[i].default_value, kPrecOr);
        }
      }
      os << ")";
      if (s.returns) {
        os << " -> ";
        print(os, *s.returns, kPrecOr);
      }
      os << ":\n";
      print_block(os, s.body, indent + 1);
      break;
  }
}

void print_block(std::ostream& os, const std::vector<ast::StmtPtr>& body, int indent) {
  if (body.empty()) {
    os << std::string(static_cast<size_t>(indent) * 4, ' ') << "pass\n";
    return;
  }
  for (const auto& s : body) print_stmt(os, *s, indent);
}

}  // namespace

std::string print_expr(const ast::Expr& e) {
  std::ostringstream os;
  print(os, e, kPrecTuple);
  return os.str();
}

std::string print_module(const ast::Module& m) {
  std::ostringstream os;
  bool prev_def = false;
  for (size_t i = 0; i < m.body.size(); ++i) {
    const bool is_def = m.body[i]->kind == StmtKind::kFunctionDef;
    if (i > 0 && (is_def || prev_def)) os << "\n\n";
    print_stmt(os, *m.body[i], 0);
    prev_def = is_def;
  }
  return os.str();
}

namespace ast {
std::ostream& operator<<(std::ostream& os, const Expr& e) { return os << print_expr(e); }
std::ostream& operator<<(std::ostream& os, const Module& m) { return os << print_module(m); }
}  // namespace ast

}  // namespace solar
