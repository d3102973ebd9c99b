// Syntax tree of an Affine Loop IR file: the Python subset of docs/ir.md, with a source
// location on every node. Nodes are immutable once built (shared_ptr<const>); passes build
// new trees rather than editing. Printer: ir/printer.h. Equality ignores locations.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <memory_resource>
#include <string>
#include <utility>
#include <vector>

#include "solar/base/error.h"

namespace solar::ast {

struct Expr;
struct Stmt;
using ExprPtr = std::shared_ptr<const Expr>;
using StmtPtr = std::shared_ptr<const Stmt>;
// An expression's operands (Expr::items): in the module's arena for parsed expressions.
using ExprList = std::pmr::vector<ExprPtr>;

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
// pointer, the elements elsewhere when there are any. Expressions are the bulk of a large
// program's syntax tree (hundreds of thousands in the benchmark's 40,000-node flat program); two
// empty std::vectors took 48 of an expression's 144 bytes; the tree is walked four times
// (parse, check, trace, free), from memory once it outgrows the cache (bench/README.md, "Where
// the growth is"). The elements live in the memory resource of the first push_back (the
// parser's: the module's arena; by default the heap). Written here because no maintained
// container holds a list in one pointer (std::vector and absl::InlinedVector take 24 bytes or
// more). Copies are deep, on the heap.
template <class T>
class RareList {
  using Vec = std::pmr::vector<T>;

 public:
  RareList() = default;
  RareList(const RareList& o) {
    if (o.v_) v_ = make(*o.v_, {});
  }
  RareList(RareList&& o) noexcept : v_(std::exchange(o.v_, nullptr)) {}
  RareList& operator=(const RareList& o) {
    if (this != &o) *this = RareList(o);
    return *this;
  }
  RareList& operator=(RareList&& o) noexcept {
    std::swap(v_, o.v_);
    return *this;
  }
  ~RareList() {
    if (!v_) return;
    std::pmr::polymorphic_allocator<Vec> alloc(v_->get_allocator().resource());
    std::destroy_at(v_);
    alloc.deallocate(v_, 1);
  }

  bool empty() const { return !v_ || v_->empty(); }
  size_t size() const { return v_ ? v_->size() : 0; }
  const T& operator[](size_t i) const { return (*v_)[i]; }
  const T& back() const { return v_->back(); }
  const T* begin() const { return v_ ? v_->data() : nullptr; }
  const T* end() const { return v_ ? v_->data() + v_->size() : nullptr; }
  // Where the elements live; null while there are none.
  std::pmr::memory_resource* resource() const {
    return v_ ? v_->get_allocator().resource() : nullptr;
  }
  // `alloc`: where the list's memory comes from, when this is its first element.
  void push_back(T item, std::pmr::polymorphic_allocator<> alloc = {}) {
    if (!v_) v_ = make(Vec(alloc), alloc);
    v_->push_back(std::move(item));
  }
  friend bool operator==(const RareList& a, const RareList& b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin());
  }

 private:
  static Vec* make(const Vec& from, std::pmr::polymorphic_allocator<> alloc) {
    std::pmr::polymorphic_allocator<Vec> a(alloc.resource());
    Vec* v = a.allocate(1);
    a.construct(v, from);  // uses-allocator construction: the copy takes `alloc`
    return v;
  }
  Vec* v_ = nullptr;
};

struct Keyword {
  std::string name;
  ExprPtr value;
  Loc loc;
};

struct Expr {
  // The parser's expressions take their items' memory from the module's arena, next to the
  // expression (allocate_shared passes the arena here): no heap block per list, nothing for
  // free() to walk when the tree goes (bench/README.md, "Prefetching the walks"). Copies and
  // the expressions passes make use the default resource, the heap.
  using allocator_type = std::pmr::polymorphic_allocator<>;
  Expr() = default;
  explicit Expr(const allocator_type& alloc) : items(alloc) {}

  ExprKind kind = ExprKind::kName;
  Op op = Op::kAdd;
  uint32_t depth = 1;  // height of this subtree (the parser bounds it; passes recurse on it)
  Loc loc;
  // The literal's value: int_value for kInt, float_value for kFloat (read only by kind; one
  // storage, so that the items' allocator fits in the 104 bytes an expression takes).
  union {
    int64_t int_value = 0;
    double float_value;
  };
  std::string text;
  ExprList items;
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
  Stmt() = default;
  Stmt(const Stmt&) = default;
  Stmt(Stmt&&) = default;
  Stmt& operator=(const Stmt&) = default;
  Stmt& operator=(Stmt&&) = default;
  // Releases the body in order, asking for each statement's nodes ahead (prefetch_ahead): a
  // long model() is freed from memory once it outgrows the cache.
  ~Stmt();

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

// Memory hints for passes that walk a long body or parameter list in order (the checker, the
// tracer): called at element i, they ask for the nodes of element i + kPrefetchAhead, so that
// a program larger than the last-level cache does not stall on the first read of each node
// (bench/README.md, "Prefetching the walks"). The parser allocates a statement before the
// nodes it contains, in one arena, so a statement's nodes lie from its address to the next
// statement's; a span that is reversed or longer than kPrefetchSpan (the two in different
// arena blocks, or a long compound statement) is asked for in its first kPrefetchSpan bytes.
// Hints only: no result depends on them, and a body whose nodes lie elsewhere (made by a
// pass) is merely not helped.
inline constexpr size_t kPrefetchAhead = 2;
inline constexpr size_t kPrefetchSpan = 4096;
// `span`: at most the first `span` bytes of the statement's nodes (a pass that reads only the
// statements themselves asks for less).
void prefetch_ahead(const std::vector<StmtPtr>& body, size_t i, size_t span = kPrefetchSpan);
void prefetch_ahead(const std::vector<Param>& params, size_t i);

// Calls f(name) for each name `e` reads as a value (a call's callee excluded), looking at no
// more than `budget` expressions: a pass that finds names in a large table asks for the
// table's memory a statement ahead of reading it (a hint; see prefetch_ahead).
template <class F>
void for_each_value_name(const Expr& e, int* budget, F&& f) {
  if (--*budget < 0) return;
  if (e.kind == ExprKind::kName) {
    f(e.text);
    return;
  }
  for (size_t i = e.kind == ExprKind::kCall ? 1 : 0; i < e.items.size(); ++i)
    for_each_value_name(*e.items[i], budget, f);
  for (const Keyword& kw : e.keywords) for_each_value_name(*kw.value, budget, f);
}
inline constexpr int kPrefetchNames = 24;  // expressions a statement's look-ahead visits

// Both hints for a pass at statement i of `body`: the nodes of the statement kPrefetchAhead
// on, and prefetch_name(name) for each name the next statement reads.
template <class F>
void look_ahead(const std::vector<StmtPtr>& body, size_t i, F&& prefetch_name) {
  prefetch_ahead(body, i);
  if (i + 1 < body.size() && body[i + 1]->value) {
    int budget = kPrefetchNames;
    for_each_value_name(*body[i + 1]->value, &budget, prefetch_name);
  }
}

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
