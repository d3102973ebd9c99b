// Tracer: evaluates model() over shapes only (no data). Binds dims from DIMS and overrides,
// unrolls static loops, calls helpers, lifts every kernel call (einsum/lift.h) and records
// every builtin as a data-movement node. The result is the einsum graph.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "solar/einsum/graph.h"
#include "solar/ir/program.h"

namespace solar {

struct TraceOptions {
  // --dim K=V overrides of DIMS, applied in order. An override of a dim that model() does
  // not use is a UserError (kArgument) so that typos do not pass silently.
  std::vector<std::pair<std::string, int64_t>> dims;
};

Graph trace_program(const Program& program, const TraceOptions& options);

}  // namespace solar
