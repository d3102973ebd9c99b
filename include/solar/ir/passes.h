// The passes that make a checked Program from a parsed module, in the order check_program
// runs them (ir/checker.h), each one function from a Program to the next Program:
//
//   check_and_lower   every rule of docs/ir.md §3-4 (a UserError with every problem found);
//                     kernels lowered to loop nests of guarded updates with affine index
//                     maps and their tensor reads in source order (ir/program.h)
//   lower_scalars     each update's right-hand side into the typed scalar IR
//                     (ir/kernel_ir.h): loads naming their access, scalar ops with dtypes
//   count_flops       per point of each update: non-MAC FLOPs by kind and the MAC pattern
//                     (docs/ir.md §7.2-7.3), a visitor over the scalar IR
//   derive_einsums    each nest's einsum string, inputs, output, reduction and printed body;
//                     each kernel's node-level einsum string
//
// Only check_and_lower reports user errors; the later passes run on a valid program.
// print_checked and print_kernel_ir (ir/printer.h) show a Program after any of them.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "solar/ir/ast.h"
#include "solar/ir/program.h"

namespace solar {

Program check_and_lower(ast::Module module);
Program lower_scalars(Program program);
Program count_flops(Program program);
Program derive_einsums(Program program);

// The passes after check_and_lower, by name, in order.
struct CheckPass {
  const char* name;
  Program (*run)(Program);
};
const std::vector<CheckPass>& check_passes();

// Called after each pass with its name ("check_and_lower", "lower_scalars", "count_flops",
// "derive_einsums")
// and the program it made.
using PassDump = std::function<void(const std::string& pass, const Program& program)>;

}  // namespace solar
