// The reference interpreter. Each update's right-hand side (its typed scalar IR,
// ir/kernel_ir.h) and guard are compiled once per call to a small stack bytecode (static
// parts folded to constants, tensor reads to affine address computations); every point of the
// iteration space then runs that bytecode in double precision and stores with rounding to the
// target's dtype.
#include "interpreter.h"

#include <cmath>
#include <limits>
#include <unordered_map>

#include "solar/ir/printer.h"
#include "solar/ir/static_eval.h"
#include "storage.h"

namespace solar::detail {
namespace {

using ast::Expr;
using ast::ExprKind;
using ast::Op;

enum class Code : uint8_t {
  kConst,
  kLoop,
  kLoad,
  kAdd,
  kSub,
  kMul,
  kDiv,
  kFloorDiv,
  kMod,
  kPow,
  kNeg,
  kNot,
  kLt,
  kLe,
  kGt,
  kGe,
  kEq,
  kNe,
  kAnd,
  kOr,
  kSelect,
  kMax,
  kMin,
  kFn,
  kCast,
};

enum class Fn : uint8_t {
  kExp,
  kLog,
  kLog1p,
  kExpm1,
  kSqrt,
  kRsqrt,
  kAbs,
  kTanh,
  kSigmoid,
  kErf,
  kSin,
  kCos,
  kFloor,
  kCeil,
  kRound,
};

struct Instr {
  Code code;
  uint8_t aux = 0;  // Fn, or DType for kCast
  int32_t arg = 0;  // loop index or read index
  double value = 0.0;
};

// An access T[i0, i1, ...]: per tensor dim, offset + Σ coef[l] * loop[l].
struct Access {
  int tensor = 0;
  std::vector<int64_t> offset;             // per tensor dim
  std::vector<std::vector<int64_t>> coef;  // per tensor dim, per loop
  std::vector<int64_t> shape;              // of the tensor
  int64_t flat_offset = 0;                 // Σ stride * offset
  std::vector<int64_t> flat_coef;          // per loop: Σ stride * coef
};

struct PreparedUpdate {
  const Update* update = nullptr;
  Access target;
  std::vector<Access> reads;
  std::vector<Instr> value;
  std::vector<Instr> guard;  // empty: no guard
};

const std::unordered_map<std::string, Fn>& functions() {
  static const std::unordered_map<std::string, Fn> k = {
      {"exp", Fn::kExp},     {"log", Fn::kLog},   {"log1p", Fn::kLog1p},
      {"expm1", Fn::kExpm1}, {"sqrt", Fn::kSqrt}, {"rsqrt", Fn::kRsqrt},
      {"abs", Fn::kAbs},     {"tanh", Fn::kTanh}, {"sigmoid", Fn::kSigmoid},
      {"erf", Fn::kErf},     {"sin", Fn::kSin},   {"cos", Fn::kCos},
      {"floor", Fn::kFloor}, {"ceil", Fn::kCeil}, {"round", Fn::kRound},
  };
  return k;
}

class Compiler {
 public:
  Compiler(const Nest& nest, const StaticEnv& env, const std::vector<Access>& reads)
      : nest_(nest), env_(env), reads_(reads) {}

  // Compiles `e`: a guard, or a static part of a right-hand side (no tensor reads).
  void emit(const Expr& e, std::vector<Instr>& out) {
    switch (e.kind) {
      case ExprKind::kInt:
        out.push_back({Code::kConst, 0, 0, static_cast<double>(e.int_value)});
        return;
      case ExprKind::kFloat:
        out.push_back({Code::kConst, 0, 0, e.float_value});
        return;
      case ExprKind::kName: {
        for (size_t l = 0; l < nest_.loops.size(); ++l) {
          if (nest_.loops[l].var == e.text) {
            out.push_back({Code::kLoop, 0, static_cast<int32_t>(l), 0.0});
            return;
          }
        }
        if (e.text == "nan") {
          out.push_back({Code::kConst, 0, 0, std::numeric_limits<double>::quiet_NaN()});
          return;
        }
        out.push_back({Code::kConst, 0, 0, eval_static(e, env_).as_double()});
        return;
      }
      case ExprKind::kSubscript: {
        if (e.items[0]->kind == ExprKind::kAttribute) {  // X.shape[i]
          out.push_back({Code::kConst, 0, 0, eval_static(e, env_).as_double()});
          return;
        }
        // Tensor reads are loads of the scalar IR; guards and static values read none.
        throw InternalError("interpreter: a tensor read outside the scalar IR: '" + print_expr(e) +
                            "'");
      }
      case ExprKind::kBinary: {
        emit(*e.items[0], out);
        emit(*e.items[1], out);
        static const std::pair<Op, Code> kOps[] = {
            {Op::kAdd, Code::kAdd}, {Op::kSub, Code::kSub},           {Op::kMul, Code::kMul},
            {Op::kDiv, Code::kDiv}, {Op::kFloorDiv, Code::kFloorDiv}, {Op::kMod, Code::kMod},
            {Op::kPow, Code::kPow},
        };
        for (const auto& [op, code] : kOps)
          if (op == e.op) out.push_back({code, 0, 0, 0.0});
        return;
      }
      case ExprKind::kUnary:
        emit(*e.items[0], out);
        if (e.op == Op::kNeg) out.push_back({Code::kNeg, 0, 0, 0.0});
        if (e.op == Op::kNot) out.push_back({Code::kNot, 0, 0, 0.0});
        return;
      case ExprKind::kCompare:
        for (size_t i = 0; i < e.cmp_ops.size(); ++i) {
          emit(*e.items[i], out);
          emit(*e.items[i + 1], out);
          out.push_back({compare_code(e.cmp_ops[i]), 0, 0, 0.0});
          if (i > 0) out.push_back({Code::kAnd, 0, 0, 0.0});
        }
        return;
      case ExprKind::kBoolOp:
        for (size_t i = 0; i < e.items.size(); ++i) {
          emit(*e.items[i], out);
          if (i > 0) out.push_back({e.op == Op::kAnd ? Code::kAnd : Code::kOr, 0, 0, 0.0});
        }
        return;
      case ExprKind::kCall: {
        const std::string& fn = e.items[0]->text;
        if (fn == "size") {
          out.push_back({Code::kConst, 0, 0, eval_static(e, env_).as_double()});
          return;
        }
        if (fn == "select") {
          for (size_t i = 1; i <= 3; ++i) emit(*e.items[i], out);
          out.push_back({Code::kSelect, 0, 0, 0.0});
          return;
        }
        if (fn == "cast") {
          emit(*e.items[1], out);
          out.push_back({Code::kCast, static_cast<uint8_t>(*parse_dtype(e.items[2]->text)), 0, 0});
          return;
        }
        if (fn == "max" || fn == "min") {
          for (size_t i = 1; i < e.items.size(); ++i) {
            emit(*e.items[i], out);
            if (i > 1) out.push_back({fn == "max" ? Code::kMax : Code::kMin, 0, 0, 0.0});
          }
          return;
        }
        if (fn == "pow") {
          emit(*e.items[1], out);
          emit(*e.items[2], out);
          out.push_back({Code::kPow, 0, 0, 0.0});
          return;
        }
        emit(*e.items[1], out);
        out.push_back({Code::kFn, static_cast<uint8_t>(functions().at(fn)), 0, 0.0});
        return;
      }
      default:
        throw InternalError("interpreter: unexpected expression '" + print_expr(e) + "'");
    }
  }

  // Compiles instruction `i` of an update's typed scalar IR (ir/kernel_ir.h) and its operands,
  // depth first: a load reads the access it names; a static value is its expression (no
  // tensor reads), compiled as above.
  void emit(const ScalarBody& body, int i, std::vector<Instr>& out) {
    const ScalarInst& in = body.insts.at(static_cast<size_t>(i));
    auto operands_then = [&](Code code, uint8_t aux = 0) {
      for (int a : in.args) emit(body, a, out);
      out.push_back({code, aux, 0, 0.0});
    };
    // a0 a1 op a2 op ...: n-ary and/or/max/min as a left fold.
    auto fold = [&](Code code) {
      emit(body, in.args[0], out);
      for (size_t k = 1; k < in.args.size(); ++k) {
        emit(body, in.args[k], out);
        out.push_back({code, 0, 0, 0.0});
      }
    };
    switch (in.op) {
      case ScalarOp::kStatic:
        emit(*in.expr, out);
        return;
      case ScalarOp::kLoopVar:
        out.push_back({Code::kLoop, 0, static_cast<int32_t>(in.loop), 0.0});
        return;
      case ScalarOp::kLoad:
        SOLAR_INTERNAL_CHECK(static_cast<size_t>(in.read) < reads_.size(),
                             "a load of a read the update does not have");
        out.push_back({Code::kLoad, 0, static_cast<int32_t>(in.read), 0.0});
        return;
      case ScalarOp::kAdd:
        return operands_then(Code::kAdd);
      case ScalarOp::kSub:
        return operands_then(Code::kSub);
      case ScalarOp::kMul:
        return operands_then(Code::kMul);
      case ScalarOp::kDiv:
        return operands_then(Code::kDiv);
      case ScalarOp::kFloorDiv:
        return operands_then(Code::kFloorDiv);
      case ScalarOp::kMod:
        return operands_then(Code::kMod);
      case ScalarOp::kPow:
        return operands_then(Code::kPow);
      case ScalarOp::kNeg:
        return operands_then(Code::kNeg);
      case ScalarOp::kNot:
        return operands_then(Code::kNot);
      case ScalarOp::kCompare:
        return operands_then(compare_code(in.cmp));
      case ScalarOp::kAnd:
        return fold(Code::kAnd);
      case ScalarOp::kOr:
        return fold(Code::kOr);
      case ScalarOp::kSelect:
        return operands_then(Code::kSelect);
      case ScalarOp::kCast:
        return operands_then(Code::kCast, static_cast<uint8_t>(in.dtype));
      case ScalarOp::kCall:
        if (in.fn == "max" || in.fn == "min") return fold(in.fn == "max" ? Code::kMax : Code::kMin);
        return operands_then(Code::kFn, static_cast<uint8_t>(functions().at(in.fn)));
    }
  }

 private:
  static Code compare_code(Op op) {
    switch (op) {
      case Op::kLt:
        return Code::kLt;
      case Op::kLe:
        return Code::kLe;
      case Op::kGt:
        return Code::kGt;
      case Op::kGe:
        return Code::kGe;
      case Op::kEq:
        return Code::kEq;
      default:
        return Code::kNe;
    }
  }

  const Nest& nest_;
  const StaticEnv& env_;
  const std::vector<Access>& reads_;
};

double apply_fn(Fn fn, double x) {
  switch (fn) {
    case Fn::kExp:
      return std::exp(x);
    case Fn::kLog:
      return std::log(x);
    case Fn::kLog1p:
      return std::log1p(x);
    case Fn::kExpm1:
      return std::expm1(x);
    case Fn::kSqrt:
      return std::sqrt(x);
    case Fn::kRsqrt:
      return 1.0 / std::sqrt(x);
    case Fn::kAbs:
      return std::fabs(x);
    case Fn::kTanh:
      return std::tanh(x);
    case Fn::kSigmoid:
      return 1.0 / (1.0 + std::exp(-x));
    case Fn::kErf:
      return std::erf(x);
    case Fn::kSin:
      return std::sin(x);
    case Fn::kCos:
      return std::cos(x);
    case Fn::kFloor:
      return std::floor(x);
    case Fn::kCeil:
      return std::ceil(x);
    case Fn::kRound:
      return std::nearbyint(x);  // half to even, as Python's round
  }
  return x;
}

// max/min that propagate NaN (as torch.maximum does).
double nan_max(double a, double b) {
  return std::isnan(a) || std::isnan(b) ? NAN : (a > b ? a : b);
}
double nan_min(double a, double b) {
  return std::isnan(a) || std::isnan(b) ? NAN : (a < b ? a : b);
}

class KernelRun {
 public:
  KernelRun(const Program& program, const Kernel& kernel, const LiftedCall& lifted,
            const std::vector<Scalar>& scalars, std::vector<Array>& tensors,
            const ExecOptions& options, const std::string& call_name)
      : program_(program),
        kernel_(kernel),
        lifted_(lifted),
        tensors_(tensors),
        options_(options),
        call_name_(call_name) {
    env_ = call_env(program, kernel, lifted, scalars);
  }

  void run() {
    for (const Nest& nest : kernel_.nests) run_nest(nest);
  }

 private:
  Access prepare_access(const solar::Access& a, const Nest& nest) {
    Access out;
    out.tensor = a.tensor;
    out.shape = tensors_[static_cast<size_t>(a.tensor)].shape;
    const size_t rank = a.index.size();
    out.offset.assign(rank, 0);
    out.coef.assign(rank, std::vector<int64_t>(nest.loops.size(), 0));
    for (size_t d = 0; d < rank; ++d) {
      const AffineExpr& idx = a.index[d];
      if (idx.constant) out.offset[d] = eval_static_int(*idx.constant, env_, "an index offset");
      for (const AffineTerm& t : idx.terms) {
        out.coef[d][static_cast<size_t>(t.loop)] +=
            t.coefficient ? eval_static_int(*t.coefficient, env_, "a coefficient") : 1;
      }
    }
    int64_t stride = 1;
    out.flat_coef.assign(nest.loops.size(), 0);
    for (size_t d = rank; d-- > 0;) {
      out.flat_offset += stride * out.offset[d];
      for (size_t l = 0; l < nest.loops.size(); ++l) out.flat_coef[l] += stride * out.coef[d][l];
      stride *= out.shape[d];
    }
    return out;
  }

  // Flat element index of an access at the current point (bounds-checked if asked).
  int64_t address(const Access& a, const std::vector<int64_t>& loop, const Nest& nest,
                  const Update& u) const {
    if (!options_.bounds_check) {
      int64_t flat = a.flat_offset;
      for (size_t l = 0; l < loop.size(); ++l) flat += a.flat_coef[l] * loop[l];
      return flat;
    }
    int64_t flat = 0;
    for (size_t d = 0; d < a.shape.size(); ++d) {
      int64_t i = a.offset[d];
      for (size_t l = 0; l < loop.size(); ++l) i += a.coef[d][l] * loop[l];
      if (i < 0 || i >= a.shape[d]) bounds_error(a, loop, nest, u);
      flat = flat * a.shape[d] + i;
    }
    return flat;
  }

  [[noreturn]] void bounds_error(const Access& a, const std::vector<int64_t>& loop,
                                 const Nest& nest, const Update& u) const {
    std::string idx, shape, where;
    for (size_t d = 0; d < a.shape.size(); ++d) {
      int64_t i = a.offset[d];
      for (size_t l = 0; l < loop.size(); ++l) i += a.coef[d][l] * loop[l];
      idx += (d ? ", " : "") + std::to_string(i);
      shape += (d ? ", " : "") + std::to_string(a.shape[d]);
    }
    for (size_t l = 0; l < loop.size(); ++l)
      where += (l ? ", " : "") + nest.loops[l].var + "=" + std::to_string(loop[l]);
    const std::string& name = kernel_.tensors[static_cast<size_t>(a.tensor)].name;
    throw UserError(ErrorKind::kBounds, program_.file, u.loc,
                    "kernel '" + kernel_.name + "' (call " + call_name_ + ") accesses " + name +
                        "[" + idx + "] but '" + name + "' has shape [" + shape + "] (at " + where +
                        ")",
                    "a missing guard? wrap the statement in if 0 <= index < size(...) (for "
                    "example for padding), or fix the index expression");
  }

  double eval(const std::vector<Instr>& code, const std::vector<int64_t>& loop,
              const PreparedUpdate& pu, const Nest& nest) {
    stack_.clear();
    for (const Instr& in : code) {
      switch (in.code) {
        case Code::kConst:
          stack_.push_back(in.value);
          break;
        case Code::kLoop:
          stack_.push_back(static_cast<double>(loop[static_cast<size_t>(in.arg)]));
          break;
        case Code::kLoad: {
          const Access& a = pu.reads[static_cast<size_t>(in.arg)];
          const Array& t = tensors_[static_cast<size_t>(a.tensor)];
          stack_.push_back(load_element(t.dtype, t.data, address(a, loop, nest, *pu.update)));
          break;
        }
        case Code::kNeg:
          stack_.back() = -stack_.back();
          break;
        case Code::kNot:
          stack_.back() = stack_.back() == 0.0 ? 1.0 : 0.0;
          break;
        case Code::kFn:
          stack_.back() = apply_fn(static_cast<Fn>(in.aux), stack_.back());
          break;
        case Code::kCast:
          stack_.back() = round_to_dtype(static_cast<DType>(in.aux), stack_.back());
          break;
        case Code::kSelect: {
          const double b = stack_.back();
          stack_.pop_back();
          const double a = stack_.back();
          stack_.pop_back();
          stack_.back() = stack_.back() != 0.0 ? a : b;
          break;
        }
        default: {
          const double y = stack_.back();
          stack_.pop_back();
          double& x = stack_.back();
          switch (in.code) {
            case Code::kAdd:
              x = x + y;
              break;
            case Code::kSub:
              x = x - y;
              break;
            case Code::kMul:
              x = x * y;
              break;
            case Code::kDiv:
              x = x / y;
              break;
            case Code::kFloorDiv:
              x = std::floor(x / y);
              break;
            case Code::kMod:
              x = x - std::floor(x / y) * y;
              break;
            case Code::kPow:
              x = std::pow(x, y);
              break;
            case Code::kLt:
              x = x < y;
              break;
            case Code::kLe:
              x = x <= y;
              break;
            case Code::kGt:
              x = x > y;
              break;
            case Code::kGe:
              x = x >= y;
              break;
            case Code::kEq:
              x = x == y;
              break;
            case Code::kNe:
              x = x != y;
              break;
            case Code::kAnd:
              x = (x != 0.0 && y != 0.0);
              break;
            case Code::kOr:
              x = (x != 0.0 || y != 0.0);
              break;
            case Code::kMax:
              x = nan_max(x, y);
              break;
            case Code::kMin:
              x = nan_min(x, y);
              break;
            default:
              throw InternalError("interpreter: bad opcode");
          }
        }
      }
    }
    return stack_.back();
  }

  void run_nest(const Nest& nest) {
    std::vector<int64_t> sizes;
    for (const Loop& l : nest.loops) sizes.push_back(lifted_.dims.at(l.dim));
    std::vector<PreparedUpdate> updates;
    for (const Update& u : nest.updates) {
      PreparedUpdate pu;
      pu.update = &u;
      pu.target = prepare_access(u.target, nest);
      for (const solar::Access& r : u.reads) pu.reads.push_back(prepare_access(r, nest));
      Compiler compiler(nest, env_, pu.reads);
      compiler.emit(u.body, u.body.result, pu.value);
      if (u.guard) {
        Compiler guard_compiler(nest, env_, pu.reads);
        guard_compiler.emit(*u.guard, pu.guard);
      }
      updates.push_back(std::move(pu));
    }
    const size_t depth = nest.loops.size();
    std::vector<int64_t> loop(depth, 0);
    int64_t rows = 0;
    while (true) {
      for (PreparedUpdate& pu : updates) {
        if (!pu.guard.empty() && eval(pu.guard, loop, pu, nest) == 0.0) continue;
        const double v = eval(pu.value, loop, pu, nest);
        Array& t = tensors_[static_cast<size_t>(pu.target.tensor)];
        const int64_t at = address(pu.target, loop, nest, *pu.update);
        double result = v;
        switch (pu.update->kind) {
          case UpdateKind::kAssign:
            break;
          case UpdateKind::kAdd:
            result = load_element(t.dtype, t.data, at) + v;
            break;
          case UpdateKind::kMul:
            result = load_element(t.dtype, t.data, at) * v;
            break;
          case UpdateKind::kMax:
            result = nan_max(load_element(t.dtype, t.data, at), v);
            break;
          case UpdateKind::kMin:
            result = nan_min(load_element(t.dtype, t.data, at), v);
            break;
        }
        store_element(t.dtype, t.data, at, result);
      }
      // Odometer: advance the innermost loop, carrying outward.
      size_t l = depth;
      while (l > 0) {
        if (++loop[l - 1] < sizes[l - 1]) break;
        loop[l - 1] = 0;
        --l;
      }
      if (l == 0) break;
      if (l < depth && options_.cancel && (++rows & 63) == 0 &&
          options_.cancel->load(std::memory_order_relaxed))
        throw Interrupted();
    }
  }

  const Program& program_;
  const Kernel& kernel_;
  const LiftedCall& lifted_;
  std::vector<Array>& tensors_;
  const ExecOptions& options_;
  const std::string& call_name_;
  StaticEnv env_;
  std::vector<double> stack_;
};

}  // namespace

void interpret_kernel(const Program& program, const Kernel& kernel, const LiftedCall& lifted,
                      const std::vector<Scalar>& scalar_args, std::vector<Array>& tensors,
                      const ExecOptions& options, const std::string& call_name) {
  KernelRun(program, kernel, lifted, scalar_args, tensors, options, call_name).run();
}

}  // namespace solar::detail
