// The typed scalar IR of a checked kernel: each update's right-hand side as a list of scalar
// instructions in evaluation order, each naming its operands by their index in the list and
// carrying the dtype of the value it makes. Built by the pass lower_scalars (ir/passes.h)
// after check_and_lower; the FLOP count (count_flops) is a visitor over it, and
// print_kernel_ir shows it (`solar check FILE --dump kernel-ir`).
//
// Loads name the access they read (an index into Update::reads), so no later stage matches
// reads to syntax by traversal order. A subexpression with the same value at every point of
// the nest (no tensor read, no loop variable: literals, scalar parameters, module constants,
// size(), shapes, arithmetic on those) is one kStatic instruction: it is evaluated once per
// call and counts no FLOPs (docs/ir.md §7.3).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "solar/base/dtype.h"
#include "solar/ir/ast.h"

namespace solar {

enum class ScalarOp : uint8_t {
  kStatic,    // a point-invariant value: `expr`
  kLoopVar,   // the loop variable `loop` (an index of Nest::loops)
  kLoad,      // the tensor element of Update::reads[read]
  kNeg,       // -a
  kNot,       // not a
  kAdd,       // a + b
  kSub,       // a - b
  kMul,       // a * b
  kDiv,       // a / b
  kFloorDiv,  // a // b
  kMod,       // a % b
  kPow,       // a ** b, pow(a, b)
  kCompare,   // a cmp b (one comparison of a chain; `cmp`)
  kAnd,       // a and b ...
  kOr,        // a or b ...
  kCall,      // fn(args...): exp log ... max min abs floor ceil round
  kSelect,    // select(cond, a, b)
  kCast,      // cast(a, dtype)
};
const char* scalar_op_name(ScalarOp op);

struct ScalarInst {
  ScalarOp op = ScalarOp::kStatic;
  DType dtype = DType::kFp64;  // of the value made (below)
  std::vector<int> args;       // indices of earlier instructions
  int loop = -1;               // kLoopVar
  int read = -1;               // kLoad
  std::string fn;              // kCall
  ast::Op cmp = ast::Op::kLt;  // kCompare
  ast::ExprPtr expr;           // kStatic: the expression; every op: the syntax it came from
};

// One right-hand side: `insts` in evaluation order, the value is insts[result]. Dtypes: a load
// has its tensor's dtype, a loop variable int64, a static value int64 or fp64 (as written),
// a comparison and and/or/not bool, a cast its dtype; arithmetic and calls the widest of their
// operands (a float wider than any integer, fp64 over fp32 over narrower floats); select the
// wider of its branches. The executor computes in double (interpreter) or in fp32 for floats
// narrower than fp64 (native code): these dtypes are the values' formats, not the arithmetic's.
struct ScalarBody {
  std::vector<ScalarInst> insts;
  int result = -1;
};

}  // namespace solar
