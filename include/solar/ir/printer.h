// Printer: ast -> source text in the IR's canonical layout (4-space indent). Its output
// parses back to an equal tree (ast::equal).
#pragma once

#include <ostream>
#include <string>

#include "solar/ir/ast.h"

namespace solar {

std::string print_expr(const ast::Expr& e);
std::string print_module(const ast::Module& m);

namespace ast {
std::ostream& operator<<(std::ostream& os, const Expr& e);
std::ostream& operator<<(std::ostream& os, const Module& m);
}  // namespace ast

}  // namespace solar
