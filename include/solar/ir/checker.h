// Checker: ast::Module -> Program. Enforces every rule of docs/ir.md §3-4 and reports all
// problems found at once (a UserError with one Diagnostic each: location, what is wrong,
// what to write instead). Lowers kernels to loop nests with affine index maps and derives
// the shape-independent facts the lifting needs (FLOPs per point, einsum strings): the
// passes of ir/passes.h, run in order.
#pragma once

#include "solar/ir/ast.h"
#include "solar/ir/passes.h"
#include "solar/ir/program.h"

namespace solar {

// The passes in order; `dump`, when set, is called after each.
Program check_program(ast::Module module, const PassDump& dump = {});

// Names of the scalar functions allowed in kernel bodies (exp, log, ..., select, cast).
bool is_scalar_function(const std::string& name);
// Names of the composition-layer builtins (reshape, permute, ...).
bool is_graph_builtin(const std::string& name);

}  // namespace solar
