// Tracer: evaluates model() over shapes only (no data). Binds dims from DIMS and overrides,
// unrolls static loops, calls helpers, lifts every kernel call (einsum/lift.h) and records
// every builtin as a data-movement node. The result is the einsum graph.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "solar/graph/graph.h"
#include "solar/ir/program.h"

namespace solar {

// The tracer's caps: model() is unrolled (every loop iteration, every helper call), so a
// large --dim can ask for a graph that does not fit in memory, or a loop that never ends.
// Above a cap the trace stops with a UserError of kind `budget` naming the loop
// (file:line:col) and the --dim to lower. The defaults keep the largest real programs (the
// 40,000-node benchmark programs) 13x below the node cap, and stop within seconds.
struct TraceLimits {
  int64_t max_nodes = int64_t{1} << 19;        // 524,288 nodes (~0.6 GB with their tensors)
  int64_t max_graph_bytes = int64_t{1} << 29;  // 512 MiB: estimated memory of graph and lifts
  int64_t max_steps = int64_t{1} << 24;        // 16,777,216 statements run and values copied
  int64_t max_values = int64_t{1} << 20;       // values in one list or tuple (nested ones too)
  int64_t max_string = int64_t{1} << 20;       // characters of one string
};

struct TraceOptions {
  // --dim K=V overrides of DIMS, applied in order. An override of a dim that model() does
  // not use is a UserError (kArgument) so that typos do not pass silently.
  std::vector<std::pair<std::string, int64_t>> dims;
  TraceLimits limits;
};

Graph trace_program(const Program& program, const TraceOptions& options);

}  // namespace solar
