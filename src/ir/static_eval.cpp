#include "solar/ir/static_eval.h"

#include <cmath>
#include <limits>

#include "solar/ir/printer.h"

namespace solar {

int64_t floor_div(int64_t a, int64_t b) {
  if (b == -1) return a == std::numeric_limits<int64_t>::min() ? a : -a;  // callers check -a
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

int64_t floor_mod(int64_t a, int64_t b) {
  if (b == -1) return 0;  // a % -1 traps on INT64_MIN in hardware
  const int64_t r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

namespace {

using ast::Expr;
using ast::ExprKind;
using ast::Op;

[[noreturn]] void fail(const StaticEnv& env, const Expr& e, const std::string& msg,
                       const std::string& hint = "") {
  throw UserError(ErrorKind::kType, env.program ? env.program->file : "", e.loc, msg, hint);
}

Scalar arith(const StaticEnv& env, const Expr& e, Op op, Scalar a, Scalar b) {
  std::string why;
  if (auto r = scalar_arith(op, a, b, &why)) return *r;
  fail(env, e, why + " in '" + print_expr(e) + "'");
}

int64_t dim_size(const StaticEnv& env, const Expr& e, const std::string& dim) {
  if (env.dim_sizes) {
    auto it = env.dim_sizes->find(dim);
    if (it != env.dim_sizes->end()) return it->second;
  }
  throw UserError(ErrorKind::kUnknownDim, env.program ? env.program->file : "", e.loc,
                  "dim '" + dim + "' has no size at this point",
                  "bind it through a parameter annotation or an earlier allocation");
}

}  // namespace

std::optional<Scalar> scalar_arith(Op op, Scalar a, Scalar b, std::string* why) {
  if (a.is_int && b.is_int) {
    int64_t r = 0;
    bool overflow = false;
    switch (op) {
      case Op::kAdd:
        overflow = __builtin_add_overflow(a.i, b.i, &r);
        break;
      case Op::kSub:
        overflow = __builtin_sub_overflow(a.i, b.i, &r);
        break;
      case Op::kMul:
        overflow = __builtin_mul_overflow(a.i, b.i, &r);
        break;
      case Op::kFloorDiv:
      case Op::kMod:
        if (b.i == 0) {
          *why = "division by zero";
          return std::nullopt;
        }
        // INT64_MIN // -1 is 2^63, which does not fit.
        overflow = op == Op::kFloorDiv && b.i == -1 && a.i == std::numeric_limits<int64_t>::min();
        r = op == Op::kFloorDiv ? floor_div(a.i, b.i) : floor_mod(a.i, b.i);
        break;
      case Op::kPow: {
        if (b.i < 0) return Scalar::of_float(std::pow(a.as_double(), b.as_double()));
        // By squaring: at most 64 steps for any exponent (1 ** 10**18 is 1 at once).
        r = 1;
        int64_t base = a.i;
        for (int64_t e = b.i; e > 0 && !overflow; e >>= 1) {
          if (e & 1) overflow = __builtin_mul_overflow(r, base, &r);
          if ((e >> 1) > 0 && !overflow) overflow = __builtin_mul_overflow(base, base, &base);
        }
        break;
      }
      default:
        goto floating;  // true division and anything else: float semantics
    }
    if (overflow) {
      *why = "integer overflow";
      return std::nullopt;
    }
    return Scalar::of_int(r);
  }
floating:
  const double x = a.as_double(), y = b.as_double();
  switch (op) {
    case Op::kAdd:
      return Scalar::of_float(x + y);
    case Op::kSub:
      return Scalar::of_float(x - y);
    case Op::kMul:
      return Scalar::of_float(x * y);
    case Op::kDiv:
    case Op::kFloorDiv:
    case Op::kMod:
      if (y == 0) {
        *why = "division by zero";
        return std::nullopt;
      }
      if (op == Op::kDiv) return Scalar::of_float(x / y);
      if (op == Op::kFloorDiv) return Scalar::of_float(std::floor(x / y));
      return Scalar::of_float(x - std::floor(x / y) * y);
    case Op::kPow:
      return Scalar::of_float(std::pow(x, y));
    default:
      *why = std::string("'") + ast::op_text(op) + "' is not an arithmetic operator";
      return std::nullopt;
  }
}

bool scalar_compare(Op op, double a, double b) {
  switch (op) {
    case Op::kLt:
      return a < b;
    case Op::kLe:
      return a <= b;
    case Op::kGt:
      return a > b;
    case Op::kGe:
      return a >= b;
    case Op::kEq:
      return a == b;
    case Op::kNe:
      return a != b;
    default:
      return false;
  }
}

Scalar eval_static(const Expr& e, const StaticEnv& env) {
  switch (e.kind) {
    case ExprKind::kInt:
      return Scalar::of_int(e.int_value);
    case ExprKind::kFloat:
      return Scalar::of_float(e.float_value);
    case ExprKind::kName: {
      if (e.text == "inf") return Scalar::of_float(std::numeric_limits<double>::infinity());
      if (e.text == "True") return Scalar::of_int(1);
      if (e.text == "False") return Scalar::of_int(0);
      if (env.kernel && env.scalar_args) {
        for (size_t i = 0; i < env.kernel->params.size(); ++i) {
          const KernelParam& p = env.kernel->params[i];
          if (p.name == e.text && p.kind != ParamKind::kTensor) return (*env.scalar_args)[i];
        }
      }
      if (env.program) {
        auto it = env.program->constants.find(e.text);
        if (it != env.program->constants.end()) return it->second;
      }
      fail(env, e, "'" + e.text + "' is not a static value here",
           "static expressions may use integers, scalar parameters, module constants, "
           "size(\"D\") and X.shape[i]");
    }
    case ExprKind::kUnary: {
      Scalar a = eval_static(*e.items[0], env);
      if (e.op == Op::kNeg && a.is_int && a.i == std::numeric_limits<int64_t>::min())
        fail(env, e, "integer overflow in '" + print_expr(e) + "'");
      if (e.op == Op::kNeg) return a.is_int ? Scalar::of_int(-a.i) : Scalar::of_float(-a.f);
      if (e.op == Op::kNot) return Scalar::of_int(a.as_double() == 0.0 ? 1 : 0);
      return a;
    }
    case ExprKind::kBinary:
      return arith(env, e, e.op, eval_static(*e.items[0], env), eval_static(*e.items[1], env));
    case ExprKind::kCompare: {
      Scalar lhs = eval_static(*e.items[0], env);
      for (size_t i = 0; i < e.cmp_ops.size(); ++i) {
        Scalar rhs = eval_static(*e.items[i + 1], env);
        if (!scalar_compare(e.cmp_ops[i], lhs.as_double(), rhs.as_double()))
          return Scalar::of_int(0);
        lhs = rhs;
      }
      return Scalar::of_int(1);
    }
    case ExprKind::kBoolOp: {
      const bool is_and = e.op == Op::kAnd;
      for (const auto& item : e.items) {
        const bool v = eval_static(*item, env).as_double() != 0.0;
        if (is_and && !v) return Scalar::of_int(0);
        if (!is_and && v) return Scalar::of_int(1);
      }
      return Scalar::of_int(is_and ? 1 : 0);
    }
    case ExprKind::kCall: {
      const Expr& fn = *e.items[0];
      if (fn.kind == ExprKind::kName) {
        if (fn.text == "size" && e.items.size() == 2 && e.items[1]->kind == ExprKind::kStr) {
          return Scalar::of_int(dim_size(env, e, e.items[1]->text));
        }
        if ((fn.text == "min" || fn.text == "max") && e.items.size() >= 3) {
          Scalar best = eval_static(*e.items[1], env);
          for (size_t i = 2; i < e.items.size(); ++i) {
            Scalar v = eval_static(*e.items[i], env);
            const bool take = fn.text == "min" ? v.as_double() < best.as_double()
                                               : v.as_double() > best.as_double();
            if (take) best = v;
          }
          return best;
        }
        if (fn.text == "int" && e.items.size() == 2) {
          Scalar v = eval_static(*e.items[1], env);
          if (v.is_int) return v;
          if (!(std::fabs(v.f) < 9223372036854775808.0))
            fail(env, e, "int() of " + std::to_string(v.f) + ": not an integer in 64 bits");
          return Scalar::of_int(static_cast<int64_t>(v.f));
        }
        if (fn.text == "float" && e.items.size() == 2) {
          return Scalar::of_float(eval_static(*e.items[1], env).as_double());
        }
      }
      fail(env, e, "'" + print_expr(e) + "' is not a static expression");
    }
    case ExprKind::kSubscript: {
      // X.shape[i]
      const Expr& base = *e.items[0];
      if (base.kind == ExprKind::kAttribute && base.text == "shape" &&
          base.items[0]->kind == ExprKind::kName && e.items.size() == 2 && env.kernel &&
          env.tensor_shapes) {
        const int t = env.kernel->find_tensor(base.items[0]->text);
        if (t >= 0 && static_cast<size_t>(t) < env.tensor_shapes->size()) {
          const auto& shape = (*env.tensor_shapes)[static_cast<size_t>(t)];
          int64_t i = eval_static_int(*e.items[1], env, "a shape index");
          const int64_t rank = static_cast<int64_t>(shape.size());
          if (i < 0) i += rank;
          if (i < 0 || i >= rank) {
            fail(env, e,
                 "shape index out of range: '" + base.items[0]->text + "' has " +
                     std::to_string(rank) + " dims");
          }
          return Scalar::of_int(shape[static_cast<size_t>(i)]);
        }
      }
      fail(env, e, "'" + print_expr(e) + "' is not a static expression",
           "use X.shape[i] or size(\"D\") for sizes");
    }
    default:
      fail(env, e, "'" + print_expr(e) + "' is not a static expression");
  }
}

int64_t eval_static_int(const ast::Expr& e, const StaticEnv& env, const char* what) {
  Scalar v = eval_static(e, env);
  if (!v.is_int) {
    if (std::floor(v.f) == v.f && std::fabs(v.f) < 9223372036854775808.0)
      return static_cast<int64_t>(v.f);
    fail(env, e, std::string(what) + " must be an integer, got " + std::to_string(v.f));
  }
  return v.i;
}

}  // namespace solar
