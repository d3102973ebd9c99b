// A checked program: the output of the checker (ir/checker.h). Kernels are lowered from
// syntax to loop nests of guarded updates with affine index maps; model() and helpers stay
// as syntax and are evaluated over shapes by the tracer. Static parts (sizes, coefficients,
// scalar parameters) remain expressions, evaluated once per call with the call's sizes.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "solar/base/counts.h"
#include "solar/base/dtype.h"
#include "solar/base/scalar.h"
#include "solar/ir/ast.h"
#include "solar/ir/kernel_ir.h"

namespace solar {

// `Tensor("B,M,K", dtype=..., role=..., sparsity=..., fill=...)` as written in an annotation.
struct TensorAnnotation {
  std::vector<std::string> dims;
  DType dtype = DType::kFp32;
  Role role = Role::kActivation;
  double sparsity = 0.0;
  Loc loc;
};

// coefficient * loop variable; `coefficient` null means 1.
struct AffineTerm {
  int loop = 0;              // index into Nest::loops
  ast::ExprPtr coefficient;  // static expression
};

// sum of terms + constant (a static expression, null means 0).
struct AffineExpr {
  std::vector<AffineTerm> terms;
  ast::ExprPtr constant;
};

struct Access {
  int tensor = 0;                 // index into Kernel::tensors
  std::vector<AffineExpr> index;  // one per tensor dim
  Loc loc;
};

enum class UpdateKind : uint8_t { kAssign, kAdd, kMul, kMax, kMin };

// One statement of an innermost loop: target (op)= value, under `guard` if not null.
struct Update {
  Access target;
  UpdateKind kind = UpdateKind::kAssign;
  ast::ExprPtr value;         // right-hand side (for max/min: the operand other than the target)
  ast::ExprPtr guard;         // affine condition over loop vars and sizes, or null
  std::vector<Access> reads;  // tensor reads in `value`, in source order
  Loc loc;
  // Derived by the checker (shape-independent, per point of the nest):
  // A contraction accumulated with += over a reduction: two factors, one of them alone
  // indexing some dim the target keeps (docs/ir.md §7.2).
  bool is_mac = false;
  int mac_operand_a = -1;  // indices into `reads` of the two MAC factors
  int mac_operand_b = -1;
  FlopCounts flops;  // non-MAC FLOPs per point
  ScalarBody body;   // `value` in the typed scalar IR (ir/kernel_ir.h; pass lower_scalars)
};

struct Loop {
  std::string var;
  std::string dim;
  bool parallel = false;
  Loc loc;
};

struct Nest {
  std::vector<Loop> loops;
  std::vector<Update> updates;
  Loc loc;
  // Derived by the checker:
  std::string einsum;       // "BMK,NK->BMN"
  std::vector<int> inputs;  // kernel tensors read, first-read order
  int output = -1;          // the tensor written (first update's target)
  ReduceOp reduce = ReduceOp::kNone;
  std::string map_expr;  // printed body
};

struct KernelTensor {
  std::string name;
  bool is_param = false;
  std::vector<std::string> dims;
  DType dtype = DType::kFp32;
  Role role = Role::kActivation;
  double sparsity = 0.0;
  double fill = 0.0;
  std::vector<ast::ExprPtr> size_exprs;  // allocations: one static expression per dim
  bool returned = false;
  bool read = false;
  Loc loc;
};

enum class ParamKind : uint8_t { kTensor, kInt, kFloat, kBool };

struct KernelParam {
  std::string name;
  ParamKind kind = ParamKind::kTensor;
  int tensor = -1;             // for tensors: index into Kernel::tensors
  ast::ExprPtr default_value;  // scalars may have defaults
  Loc loc;
};

struct Kernel {
  std::string name;
  Loc loc;
  std::vector<KernelParam> params;
  std::vector<KernelTensor> tensors;  // parameters first (in order), then allocations
  std::vector<Nest> nests;
  std::vector<int> returns;                          // tensor indices returned, in order
  std::vector<TensorAnnotation> return_annotations;  // may be empty (no annotation)
  std::string einsum;                                // node-level string "BMK,NK,N->BMN"
  int find_tensor(const std::string& name) const;
};

struct Program {
  std::string file;
  ast::Module module;
  std::map<std::string, Scalar> constants;            // module-level numbers
  std::vector<std::pair<std::string, int64_t>> dims;  // DIMS, in order
  bool has_dims = false;
  std::vector<Kernel> kernels;
  std::unordered_map<std::string, int> kernel_index;
  std::unordered_map<std::string, const ast::Stmt*> helpers;  // plain functions (not model)
  const ast::Stmt* model = nullptr;
  // Calls of kernels, helpers and builtins written in model() (each once, loops not unrolled):
  // the tracer's first reservation of the graph's nodes, so that a long model() without loops
  // does not grow them by copying (loops reserve as they unroll).
  int64_t model_calls = 0;

  const Kernel* find_kernel(const std::string& name) const;
};

}  // namespace solar
