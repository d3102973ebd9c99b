// The unfused traffic rule (docs/sol-modes.md, "Unfused"): the DRAM bytes one node moves when
// it runs alone with an unlimited cache inside it. Each distinct tensor it reads, once, at
// most what it touches and at most the storage a view views; each tensor it writes, once; a
// view moves nothing. The tracer applies the rule as it adds each node (Node::input_bytes,
// bytes_read, bytes_written); every SOL mode then reads those fields. What a builtin reads of
// each input beside the view cap (gather: only the rows it fetches) is part of the builtin's
// semantics and stays with its shape rule (trace/builtins.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "solar/graph/graph.h"

namespace solar {

// Bytes a reader fetches of tensor `t`: its bytes, capped at its storage's bytes.
int64_t view_read_bytes(const Graph& graph, TensorId t);

// Bytes kernel call `node` reads of graph tensor `t`, bound to its kernel tensor `slot`: the
// most any of the node's accesses of that slot touches (each a lower bound, Operand::touched),
// at the tensor's bytes per element and density, capped at view_read_bytes.
int64_t kernel_read_bytes(const Graph& graph, const Node& node, int slot, TensorId t);

// Whether two of node's inputs are (views of) one tensor's memory.
bool inputs_share_memory(const Graph& graph, const Node& node);

// What node reads of each memory its inputs view, each element once (storage_union_bytes),
// one entry per distinct memory.
std::vector<int64_t> union_read_bytes(const Graph& graph, const Node& node);

// Sets node.bytes_read (the sum of node.input_bytes and node.bytes_written (each of
// node.outputs once when `writes_outputs`, else 0: a view). A sum that does not fit in int64
// throws the UserError overflow(quantity) returns ("bytes read", "bytes written",
// "bytes (read + written)").
// Inputs that share memory (two views of one tensor, `x[:, 1:] - x[:, :-1]`) count each
// element once (storage_union_bytes).
template <typename MakeError>
void set_unfused_traffic(const Graph& graph, Node& node, bool writes_outputs,
                         MakeError&& overflow) {
  node.bytes_read = 0;
  if (inputs_share_memory(graph, node)) {
    for (int64_t b : union_read_bytes(graph, node))
      node.bytes_read = count_add(node.bytes_read, b, [&] { return overflow("bytes read"); });
  } else {
    for (int64_t b : node.input_bytes)
      node.bytes_read = count_add(node.bytes_read, b, [&] { return overflow("bytes read"); });
  }
  node.bytes_written = 0;
  if (writes_outputs) {
    for (TensorId t : node.outputs) {
      node.bytes_written =
          count_add(node.bytes_written, graph.tensors[static_cast<size_t>(t)].bytes(),
                    [&] { return overflow("bytes written"); });
    }
  }
  count_add(node.bytes_read, node.bytes_written,
            [&] { return overflow("bytes (read + written)"); });
}

}  // namespace solar

namespace solar {

// One read (or write) of a storage through one of its views: the tensor read (the storage
// itself or a view of it) and the bytes fetched of it.
struct StorageAccess {
  TensorId tensor = -1;
  int64_t bytes = 0;
};

// The bytes of storage `storage` that `accesses` (each through a view of it, or the storage
// itself) need at least, with unlimited on-chip capacity: each distinct element once. The
// union of what they fetch is not known in general, so the rule is a lower bound of it
// (docs/ir.md, "Graph traffic"): one tensor accessed several times counts its largest access;
// accesses whose regions are disjoint add up, and whole slices of one frame count the volume
// of their union (two slices that overlap share their common part); any other overlap counts
// the largest. Capped at the storage's bytes. `accesses` is reordered.
int64_t storage_union_bytes(const Graph& graph, TensorId storage,
                            std::vector<StorageAccess>& accesses);

// Whether data-movement node `node` writes into the memory of its first input (`update`, an
// in-place `scatter` or `scatter_add`): its output shares that memory and it writes
// node.bytes_written there (docs/sol-modes.md, "In-place updates").
bool writes_in_place(const Graph& graph, const Node& node);

}  // namespace solar
