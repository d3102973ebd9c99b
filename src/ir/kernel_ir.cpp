// Pass lower_scalars (ir/passes.h): each update's right-hand side into the typed scalar IR
// (ir/kernel_ir.h), and its printer.
#include "solar/ir/kernel_ir.h"

#include <sstream>

#include "scalar_functions.h"
#include "solar/ir/passes.h"
#include "solar/ir/printer.h"

namespace solar {
namespace {

using ast::Expr;
using ast::ExprKind;
using ast::Op;

// The wider of two value dtypes: any float over any integer, then more bits; bool lowest.
DType wider(DType a, DType b) {
  auto rank = [](DType d) {
    if (d == DType::kBool) return 0;
    return (dtype_is_float(d) ? 1000 : 100) + dtype_bits(d);
  };
  return rank(b) > rank(a) ? b : a;
}

class Lowering {
 public:
  Lowering(const Kernel& k, const Nest& nest, const Update& u) : k_(k), nest_(nest), u_(u) {}

  ScalarBody run() {
    body_.result = lower(u_.value);
    return std::move(body_);
  }

 private:
  int loop_of(const std::string& name) const {
    for (size_t l = 0; l < nest_.loops.size(); ++l)
      if (nest_.loops[l].var == name) return static_cast<int>(l);
    return -1;
  }

  // The same value at every point of the nest: no tensor read and no loop variable.
  bool point_invariant(const Expr& e) const {
    if (e.kind == ExprKind::kName && loop_of(e.text) >= 0) return false;
    if (e.kind == ExprKind::kSubscript && e.items[0]->kind == ExprKind::kName &&
        k_.find_tensor(e.items[0]->text) >= 0)
      return false;
    for (const auto& item : e.items)
      if (item && !point_invariant(*item)) return false;
    return true;
  }

  int emit(ScalarInst inst) {
    body_.insts.push_back(std::move(inst));
    return static_cast<int>(body_.insts.size()) - 1;
  }
  DType dtype_of(int i) const { return body_.insts[static_cast<size_t>(i)].dtype; }
  int op(ScalarOp o, std::vector<int> args, const ast::ExprPtr& e, DType dtype) {
    ScalarInst inst;
    inst.op = o;
    inst.args = std::move(args);
    inst.dtype = dtype;
    inst.expr = e;
    return emit(std::move(inst));
  }
  DType widest(const std::vector<int>& args) const {
    DType d = DType::kBool;
    for (int a : args) d = wider(d, dtype_of(a));
    return d;
  }

  // Lowers `e` in the order the checker collected the update's reads (source order), so
  // that the n-th load is Update::reads[n].
  int lower(const ast::ExprPtr& p) {
    const Expr& e = *p;
    if (point_invariant(e)) {
      const bool integer = e.kind == ExprKind::kInt ||
                           (e.kind == ExprKind::kCall && e.items[0]->is_name("size")) ||
                           e.kind == ExprKind::kSubscript;  // X.shape[i]
      return op(ScalarOp::kStatic, {}, p, integer ? DType::kInt64 : DType::kFp64);
    }
    switch (e.kind) {
      case ExprKind::kName: {
        const int id = op(ScalarOp::kLoopVar, {}, p, DType::kInt64);
        body_.insts[static_cast<size_t>(id)].loop = loop_of(e.text);
        return id;
      }
      case ExprKind::kSubscript: {
        const int read = next_read_++;
        const Access& a = u_.reads.at(static_cast<size_t>(read));
        const int id = op(ScalarOp::kLoad, {}, p, k_.tensors[static_cast<size_t>(a.tensor)].dtype);
        body_.insts[static_cast<size_t>(id)].read = read;
        return id;
      }
      case ExprKind::kBinary: {
        const int a = lower(e.items[0]);
        const int b = lower(e.items[1]);
        ScalarOp o = ScalarOp::kAdd;
        switch (e.op) {
          case Op::kAdd:
            o = ScalarOp::kAdd;
            break;
          case Op::kSub:
            o = ScalarOp::kSub;
            break;
          case Op::kMul:
            o = ScalarOp::kMul;
            break;
          case Op::kDiv:
            o = ScalarOp::kDiv;
            break;
          case Op::kFloorDiv:
            o = ScalarOp::kFloorDiv;
            break;
          case Op::kMod:
            o = ScalarOp::kMod;
            break;
          case Op::kPow:
            o = ScalarOp::kPow;
            break;
          default:
            throw InternalError("lower_scalars: binary operator '" +
                                std::string(ast::op_text(e.op)) + "'");
        }
        return op(o, {a, b}, p, widest({a, b}));
      }
      case ExprKind::kUnary: {
        const int a = lower(e.items[0]);
        if (e.op == Op::kNot) return op(ScalarOp::kNot, {a}, p, DType::kBool);
        if (e.op == Op::kPos) return a;
        return op(ScalarOp::kNeg, {a}, p, dtype_of(a));
      }
      case ExprKind::kCompare: {
        std::vector<int> items;
        for (const auto& item : e.items) items.push_back(lower(item));
        std::vector<int> compares;
        for (size_t i = 0; i < e.cmp_ops.size(); ++i) {
          const int c = op(ScalarOp::kCompare, {items[i], items[i + 1]}, p, DType::kBool);
          body_.insts[static_cast<size_t>(c)].cmp = e.cmp_ops[i];
          compares.push_back(c);
        }
        return compares.size() == 1 ? compares[0] : op(ScalarOp::kAnd, compares, p, DType::kBool);
      }
      case ExprKind::kBoolOp: {
        std::vector<int> items;
        for (const auto& item : e.items) items.push_back(lower(item));
        return op(e.op == Op::kOr ? ScalarOp::kOr : ScalarOp::kAnd, items, p, DType::kBool);
      }
      case ExprKind::kCall:
        return lower_call(p);
      default:
        throw InternalError("lower_scalars: '" + print_expr(e) + "' in a checked kernel");
    }
  }

  int lower_call(const ast::ExprPtr& p) {
    const Expr& e = *p;
    const std::string fn = e.items[0]->kind == ExprKind::kName ? e.items[0]->text : "";
    const auto it = detail::scalar_functions().find(fn);
    if (it == detail::scalar_functions().end())
      throw InternalError("lower_scalars: call of '" + fn + "' in a checked kernel");
    if (it->second == detail::FnClass::kCast) {
      const int a = lower(e.items[1]);
      const int id =
          op(ScalarOp::kCast, {a}, p, parse_dtype(e.items[2]->text).value_or(DType::kFp64));
      return id;
    }
    std::vector<int> args;
    for (size_t i = 1; i < e.items.size(); ++i) args.push_back(lower(e.items[i]));
    if (it->second == detail::FnClass::kSelect)
      return op(ScalarOp::kSelect, args, p, wider(dtype_of(args[1]), dtype_of(args[2])));
    if (fn == "pow") return op(ScalarOp::kPow, args, p, widest(args));
    const int id = op(ScalarOp::kCall, args, p, widest(args));
    body_.insts[static_cast<size_t>(id)].fn = fn;
    return id;
  }

  const Kernel& k_;
  const Nest& nest_;
  const Update& u_;
  ScalarBody body_;
  int next_read_ = 0;
};

}  // namespace

const char* scalar_op_name(ScalarOp op) {
  switch (op) {
    case ScalarOp::kStatic:
      return "static";
    case ScalarOp::kLoopVar:
      return "index";
    case ScalarOp::kLoad:
      return "load";
    case ScalarOp::kNeg:
      return "neg";
    case ScalarOp::kNot:
      return "not";
    case ScalarOp::kAdd:
      return "add";
    case ScalarOp::kSub:
      return "sub";
    case ScalarOp::kMul:
      return "mul";
    case ScalarOp::kDiv:
      return "div";
    case ScalarOp::kFloorDiv:
      return "floordiv";
    case ScalarOp::kMod:
      return "mod";
    case ScalarOp::kPow:
      return "pow";
    case ScalarOp::kCompare:
      return "cmp";
    case ScalarOp::kAnd:
      return "and";
    case ScalarOp::kOr:
      return "or";
    case ScalarOp::kCall:
      return "call";
    case ScalarOp::kSelect:
      return "select";
    case ScalarOp::kCast:
      return "cast";
  }
  return "?";
}

Program lower_scalars(Program program) {
  for (Kernel& k : program.kernels)
    for (Nest& nest : k.nests)
      for (Update& u : nest.updates) u.body = Lowering(k, nest, u).run();
  return program;
}

}  // namespace solar
