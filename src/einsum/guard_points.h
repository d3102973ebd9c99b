// Points of a loop nest where a guard holds (docs/ir.md §7.1): the iterations a statement
// under `if <guard>:` really runs. A padded convolution's guard excludes the taps in the
// padding, a causal attention's the masked half; a count over the dense space would put the
// bound above a kernel that skips them.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "solar/ir/program.h"
#include "solar/ir/static_eval.h"

namespace solar {

// Enumerated assignments of the loop variables a guard couples, beyond the one solved in
// closed form (about 50 ms at most); a guard needing more is not counted.
constexpr int64_t kMaxGuardAssignments = int64_t{1} << 22;

// The number of points of `nest` (loop sizes `sizes`, outermost first) where `guard` holds,
// exactly: the guard is and/or/not of comparisons of affine expressions (the checker's
// rule). Conjuncts over disjoint loop variables are counted apart and multiplied (a 2-D
// padding guard is a row guard times a column guard); within a group one variable is
// solved by intervals and the others are enumerated. nullopt when a group would enumerate
// more than kMaxGuardAssignments assignments or an expression is not affine after binding
// the sizes; the caller then counts every point (the dense space, an upper bound).
std::optional<int64_t> guarded_points(const ast::Expr& guard, const Nest& nest,
                                      const std::vector<int64_t>& sizes, const StaticEnv& env);

// For each loop of `nest`, the values [first, last] that `guard`'s top-level conjuncts on that
// loop alone allow (`c0 <= n and n <= c1`); [0, size - 1] where none bounds it, and the
// whole loop when the guard is no conjunction of affine comparisons. The accesses of a
// statement under the guard read only these values (a window over the last keys reads
// those keys). An empty range has last < first.
std::vector<std::pair<int64_t, int64_t>> guard_loop_ranges(const ast::Expr& guard, const Nest& nest,
                                                           const std::vector<int64_t>& sizes,
                                                           const StaticEnv& env);

}  // namespace solar
