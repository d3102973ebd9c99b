// Syntax tree of an Affine Loop IR file: the Python subset of docs/ir.md, with a source
// location on every node. Nodes are immutable once built (shared_ptr<const>); passes build
// new trees rather than editing. Printer: ir/printer.h. Equality ignores locations.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <memory_resource>
#include <string>
#include <vector>

#include "solar/base/error.h"

namespace solar::ast {

struct Expr;
struct Stmt;
using ExprPtr = std::shared_ptr<const Expr>;
using StmtPtr = std::shared_ptr<const Stmt>;

enum class ExprKind : uint8_t {
  kInt,        // int_value
  kFloat,      // float_value
  kStr,        // text
  kName,       // text
  kAttribute,  // items[0].text
  kSubscript,  // items[0][items[1], ...]
  kCall,       // items[0](items[1..], keywords)
  kBinary,     // items[0] op items[1]
  kUnary,      // op items[0]
  kCompare,    // items[0] cmp_ops[0] items[1] cmp_ops[1] items[2] ...
  kBoolOp,     // items joined by op (and/or)
  kTuple,      // (items...)
  kList,       // [items...]
  kDict,       // {items[0]: items[1], items[2]: items[3], ...}
};

enum class Op : uint8_t {
  kAdd,
  kSub,
  kMul,
  kDiv,
  kFloorDiv,
  kMod,
  kPow,  // binary arithmetic
  kNeg,
  kPos,
  kNot,  // unary
  kAnd,
  kOr,  // bool ops
  kLt,
  kLe,
  kGt,
  kGe,
  kEq,
  kNe,  // comparisons
};
const char* op_text(Op op);

// A list that is nearly always empty (an expression's keywords and comparison operators): one
// pointer, the elements on the heap when there are any. Expressions are the bulk of a large
// program's syntax tree (hundreds of thousands in the benchmark's 40,000-node flat program); two
// empty std::vectors took 48 of an expression's 144 bytes; the tree is walked four times
// (parse, check, trace, free), from memory once it outgrows the cache (bench/README.md, "Where
// the growth is"). Written here because no maintained container holds a list in one pointer
// (std::vector and absl::InlinedVector take 24 bytes or more). Copies are deep.
template <class T>
class RareList {
 public:
  RareList() = default;
  RareList(const RareList& o) : v_(o.v_ ? std::make_unique<std::vector<T>>(*o.v_) : nullptr) {}
  RareList(RareList&&) noexcept = default;
  RareList& operator=(const RareList& o) {
    if (this != &o) v_ = o.v_ ? std::make_unique<std::vector<T>>(*o.v_) : nullptr;
    return *this;
  }
  RareList& operator=(RareList&&) noexcept = default;
  ~RareList() = default;

  bool empty() const { return !v_ || v_->empty(); }
  size_t size() const { return v_ ? v_->size() : 0; }
  const T& operator[](size_t i) const { return (*v_)[i]; }
  const T& back() const { return v_->back(); }
  const T* begin() const { return v_ ? v_->data() : nullptr; }
  const T* end() const { return v_ ? v_->data() + v_->size() : nullptr; }
  void push_back(T item) {
    if (!v_) v_ = std::make_unique<std::vector<T>>();
    v_->push_back(std::move(item));
  }
  friend bool operator==(const RareList& a, const RareList& b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin());
  }

 private:
  std::unique_ptr<std::vector<T>> v_;
};

struct Keyword {
  std::string name;
  ExprPtr value;
  Loc loc;
};

struct Expr {
  ExprKind kind = ExprKind::kName;
  Op op = Op::kAdd;
  uint32_t depth = 1;  // height of this subtree (the parser bounds it; passes recurse on it)
  Loc loc;
  int64_t int_value = 0;
  double float_value = 0.0;
  std::string text;
  std::vector<ExprPtr> items;
  RareList<Op> cmp_ops;
  RareList<Keyword> keywords;

  // Accessors for readability at use sites.
  bool is_name(const char* name) const { return kind == ExprKind::kName && text == name; }
  const Keyword* keyword(const std::string& name) const;
};

enum class StmtKind : uint8_t {
  kAssign,     // target = value
  kAugAssign,  // target op= value
  kFor,        // for target in value: body
  kIf,         // if value: body else: orelse
  kWhile,      // parsed so the checker can reject it with a useful message
  kWith,       // with value: body (composition layer: `with unit("name"):`)
  kReturn,     // return value (value may be null)
  kExpr,       // value
  kPass,
  kFunctionDef,  // decorators, def name(params) -> returns: body
  kImport,       // text holds the statement as written (normalised spacing)
};

struct Param {
  std::string name;
  ExprPtr annotation;     // may be null
  ExprPtr default_value;  // may be null
  Loc loc;
};

struct Stmt {
  StmtKind kind = StmtKind::kPass;
  Loc loc;
  ExprPtr target;
  ExprPtr value;
  Op op = Op::kAdd;  // kAugAssign
  std::vector<StmtPtr> body;
  std::vector<StmtPtr> orelse;
  std::string name;                 // kFunctionDef
  std::vector<ExprPtr> decorators;  // kFunctionDef
  std::vector<Param> params;        // kFunctionDef
  ExprPtr returns;                  // kFunctionDef, may be null
  std::string text;                 // kImport
};

struct Module {
  // Memory of the parsed nodes: one bump allocator per module, so that a large program is
  // laid out in order and released at once. Nodes made by later passes use the heap. Declared
  // first so that it is destroyed last; a node must not outlive its module.
  std::shared_ptr<std::pmr::monotonic_buffer_resource> arena;
  std::string file;
  std::vector<StmtPtr> body;
};

// Structural equality, ignoring source locations (used by the printer round-trip tests).
bool equal(const Expr& a, const Expr& b);
bool equal(const Stmt& a, const Stmt& b);
bool equal(const Module& a, const Module& b);

// Node builders (used by the parser and by passes that synthesise expressions).
ExprPtr make_int(int64_t v, Loc loc = {});
ExprPtr make_name(std::string name, Loc loc = {});
ExprPtr make_binary(Op op, ExprPtr a, ExprPtr b, Loc loc = {});
ExprPtr make_unary(Op op, ExprPtr a, Loc loc = {});
// 1 + the largest depth among `e`'s children.
uint32_t subtree_depth(const Expr& e);

}  // namespace solar::ast
