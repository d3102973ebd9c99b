// Shared state of one trace (private to src/trace): the graph being built and helpers for
// adding tensors and nodes. builtins.cpp adds data-movement nodes through it.
#pragma once

#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "solar/graph/graph.h"
#include "solar/ir/program.h"
#include "solar/trace/tracer.h"
#include "value.h"

namespace solar::detail {

// Inline: a large program makes tens of thousands of calls, most with a few arguments, and
// three heap blocks per call were a measurable part of tracing.
struct CallArgs {
  SmallVec<Value, 4> positional;
  SmallVec<std::pair<std::string, Value>, 2> keywords;
  SmallVec<Loc, 4> positional_locs;
};

// A model() loop being unrolled, for the messages of the caps.
struct ActiveLoop {
  Loc loc;
  std::string header;  // "for l in range(wq.shape[0])"
  int64_t trips = 0;
  int64_t iteration = 0;  // 0-based
  std::string dim;        // the model dim its range() bound was read from, "" if unknown
};

class TraceContext {
 public:
  TraceContext(const Program& program, const TraceLimits& limits)
      : program_(program), limits_(limits) {
    graph_.source = program.file;
  }

  const Program& program() const { return program_; }
  const TraceLimits& limits() const { return limits_; }
  Graph& graph() { return graph_; }
  const TensorInfo& tensor(TensorId id) const { return graph_.tensors[static_cast<size_t>(id)]; }

  // Adds a tensor whose shape, dtype and sparsity are set; its elements and bytes must fit
  // in int64 (else a UserError of kind `overflow` at `loc` naming the tensor, or the model()
  // parameter when `is_parameter`).
  TensorId add_tensor(TensorInfo info, Loc loc, bool is_parameter = false);
  // Adds a node; `name` is derived from `op` ("reshape#2"). The node cap and the graph's
  // memory cap are checked here (a UserError of kind `budget` naming the loop).
  Node& add_node(const std::string& op, NodeKind kind, Loc loc, TensorIds inputs);
  // Sets the node's outputs, its bytes (read: the sum of input_bytes; written: every output
  // when `writes_outputs`, else 0) and checks every count of the node (kind `overflow`).
  // Records producer and consumers.
  void finish_node(Node& node, std::span<const TensorId> outputs, bool writes_outputs);
  std::string next_name(const std::string& op);

  // `with unit(label, fp32_math=...)`: the nodes added until close_unit() form one unit
  // (Graph::units). Units do not nest. A block that adds no node makes no unit. Nodes added
  // outside a block are each a unit of their own.
  void open_unit(const std::string& label, Loc loc, Fp32Math fp32_math);
  void close_unit();
  bool in_unit() const { return open_.active; }
  // The caps of TraceLimits (kind `budget`): `n` more steps of model(); a value holding
  // `values` values; a string of `chars` characters; `bytes` more of lifted einsums.
  void charge_steps(int64_t n, Loc loc);
  void check_values(int64_t values, Loc loc) const;
  void check_string(size_t chars, Loc loc) const;
  void charge_graph_bytes(int64_t bytes, Loc loc);
  std::vector<ActiveLoop>& loops() { return loops_; }
  // A loop's first iteration added `nodes` nodes and `tensors` tensors and `remaining` more
  // iterations follow: reserves room for as many more of each (within the caps), so that the
  // graph's arrays do not grow by copying. Growing by doubling moves every node about once
  // more; a 40,000-node graph (18 MB of nodes) does so from memory, a 5,000-node one from the
  // cache, so the move costs the large graph more per node (bench/README.md, pipeline growth).
  // The trace also calls it once before model() runs, with its calls as written
  // (Program::model_calls) as one iteration to come.
  void expect_repeats(size_t nodes, size_t tensors, int64_t remaining);

  // The one shared list of these dim names in this trace (graph.h, SharedDims): the tensors
  // with the same names share it. `dims_of` does the same for a kernel's declared tensor,
  // remembered by the declaration so that a call copies no strings.
  SharedDims intern_dims(DimNames names);
  SharedDims dims_of(const KernelTensor& declared);

  // Bytes a reader fetches of `t`: its bytes, capped at its storage's bytes.
  int64_t read_bytes(TensorId t) const;

  [[noreturn]] void fail(ErrorKind kind, Loc loc, const std::string& msg,
                         const std::string& hint = "") const {
    throw UserError(kind, program_.file, loc, msg, hint);
  }

 private:
  // The budget error for `what` ("builds more than 1,048,576 nodes"), located at the loop to
  // blame (else at `loc`) with a hint naming the --dim to lower.
  [[noreturn]] void budget_error(const std::string& what, Loc loc) const;

  const Program& program_;
  const TraceLimits& limits_;
  Graph graph_;
  std::unordered_map<std::string, int> counters_;
  std::unordered_map<std::string, int> unit_counters_;
  struct OpenUnit {
    bool active = false;
    std::string label;
    Loc loc;
    Fp32Math fp32_math = Fp32Math::kPlatformDefault;
    UnitId id = -1;  // made when the block adds its first node
  } open_;
  std::vector<ActiveLoop> loops_;
  absl::flat_hash_map<DimNames, SharedDims> interned_dims_;
  absl::flat_hash_map<const KernelTensor*, SharedDims> declared_dims_;
  int64_t steps_ = 0;
  int64_t graph_bytes_ = 0;
};

// Data-movement builtins (builtins.cpp).
Value call_graph_builtin(TraceContext& ctx, const std::string& name, const CallArgs& args, Loc loc);

}  // namespace solar::detail
