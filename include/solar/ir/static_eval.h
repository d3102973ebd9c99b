// Evaluation of static expressions inside kernels (allocation sizes, index coefficients,
// scalar parameters) once a call has bound its dim sizes and scalar arguments.
#pragma once

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "solar/ir/program.h"

namespace solar {

struct StaticEnv {
  const Program* program = nullptr;
  const Kernel* kernel = nullptr;
  const std::vector<Scalar>* scalar_args = nullptr;  // by kernel parameter index
  const std::unordered_map<std::string, int64_t>* dim_sizes = nullptr;
  const std::vector<std::vector<int64_t>>* tensor_shapes = nullptr;  // by kernel tensor index
};

// Evaluates `e`; a name that is not static (a loop variable, a tensor) or an operation on
// unknown values is a UserError located at the expression.
Scalar eval_static(const ast::Expr& e, const StaticEnv& env);
int64_t eval_static_int(const ast::Expr& e, const StaticEnv& env, const char* what);

// Python semantics of + - * / // % ** on ints and floats (ints stay ints except for /).
// Returns nullopt, with the reason in `why`, on division by zero, integer overflow or a
// non-arithmetic operator. Shared by kernels' static expressions and the tracer.
std::optional<Scalar> scalar_arith(ast::Op op, Scalar a, Scalar b, std::string* why);
bool scalar_compare(ast::Op op, double a, double b);

// Python semantics for // and % on integers (floor division).
int64_t floor_div(int64_t a, int64_t b);
int64_t floor_mod(int64_t a, int64_t b);

}  // namespace solar
