// Shared state of one trace (private to src/trace): the graph being built and helpers for
// adding tensors and nodes. builtins.cpp adds data-movement nodes through it.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "solar/einsum/graph.h"
#include "solar/ir/program.h"
#include "value.h"

namespace solar::detail {

struct CallArgs {
  std::vector<Value> positional;
  std::vector<std::pair<std::string, Value>> keywords;
  std::vector<Loc> positional_locs;
};

class TraceContext {
 public:
  explicit TraceContext(const Program& program) : program_(program) {
    graph_.source = program.file;
  }

  const Program& program() const { return program_; }
  Graph& graph() { return graph_; }
  const TensorInfo& tensor(TensorId id) const { return graph_.tensors[static_cast<size_t>(id)]; }

  TensorId add_tensor(TensorInfo info);
  // Adds a node; `name` is derived from `op` ("reshape#2"). Records producer/consumers.
  Node& add_node(const std::string& op, NodeKind kind, Loc loc, std::vector<TensorId> inputs);
  void finish_node(Node& node, const std::vector<TensorId>& outputs);
  std::string next_name(const std::string& op);

  // `with unit(label, fp32_math=...)`: the nodes added until close_unit() form one unit
  // (Graph::units). Units do not nest. A block that adds no node makes no unit. Nodes added
  // outside a block are each a unit of their own.
  void open_unit(const std::string& label, Loc loc, Fp32Math fp32_math);
  void close_unit();
  bool in_unit() const { return open_.active; }

  // Bytes a reader fetches of `t`: its bytes, capped at its storage's bytes.
  int64_t read_bytes(TensorId t) const;

  [[noreturn]] void fail(ErrorKind kind, Loc loc, const std::string& msg,
                         const std::string& hint = "") const {
    throw UserError(kind, program_.file, loc, msg, hint);
  }

 private:
  const Program& program_;
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
};

// Data-movement builtins (builtins.cpp).
Value call_graph_builtin(TraceContext& ctx, const std::string& name, const CallArgs& args, Loc loc);

}  // namespace solar::detail
