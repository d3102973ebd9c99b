// Printer: ast -> source text in the IR's canonical layout (4-space indent). Its output
// parses back to an equal tree (ast::equal).
#pragma once

#include <ostream>
#include <string>

#include "solar/ir/ast.h"
#include "solar/ir/program.h"

namespace solar {

std::string print_expr(const ast::Expr& e);
std::string print_module(const ast::Module& m);

// A checked program (ir/program.h) as text: each kernel's parameters and tensors, and each
// loop nest with its loops, einsum, and updates (target, operator, value, guard, the reads
// with their affine index maps, FLOPs per point and the MAC pattern). For dumps after each
// checker pass (ir/passes.h; `solar check --dump PASS`).
std::string print_checked(const Program& program);
// The typed scalar IR of every update (ir/kernel_ir.h), one instruction a line:
// "%3 = mul fp32 %1, %2", loads with the access they read. `solar check --dump kernel-ir`.
std::string print_kernel_ir(const Program& program);

namespace ast {
std::ostream& operator<<(std::ostream& os, const Expr& e);
std::ostream& operator<<(std::ostream& os, const Module& m);
}  // namespace ast

}  // namespace solar
