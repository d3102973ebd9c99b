// Typed attributes of the builtins (graph/ops.def). A node stores them flat, as integers in
// Node::attrs (and a number in Node::value), so graphs copy, hash and serialise as plain
// data; stages read and write them only through these structs. `of(node)` reads a node's
// attributes, checking its builtin and their count (InternalError: the tracer wrote them);
// `flat()` is what the tracer stores.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "solar/graph/graph.h"

namespace solar {

// permute, permute_view: the input dim of each output dim. broadcast: the input dim each
// output dim reads, or -1 for a new dim. `from` views the node's attributes (of(): the
// analysis reads it per operand, so it copies nothing) or the vector the tracer builds.
struct DimMapAttrs {
  std::span<const int64_t> from;
  static DimMapAttrs of(const Node& node);
  NodeAttrs flat() const { return {from.begin(), from.end()}; }
};

// concat, stack, scatter, scatter_add: the axis they join, stack or write along; scatter and
// scatter_add also whether they write in place (`inplace=1`: into base's memory).
struct AxisAttrs {
  size_t axis = 0;
  bool inplace = false;
  static AxisAttrs of(const Node& node);
  NodeAttrs flat() const {
    if (inplace) return {static_cast<int64_t>(axis), 1};
    return {static_cast<int64_t>(axis)};
  }
};

// slice: elements start, start + step, ... of `axis` (update: the elements it writes).
struct SliceAttrs {
  size_t axis = 0;
  int64_t start = 0, step = 1;
  static SliceAttrs of(const Node& node);
  NodeAttrs flat() const { return {static_cast<int64_t>(axis), start, step}; }
};

// select: element `index` of `axis`, which the output drops.
struct SelectAttrs {
  size_t axis = 0;
  int64_t index = 0;
  static SelectAttrs of(const Node& node);
  NodeAttrs flat() const { return {static_cast<int64_t>(axis), index}; }
};

// unfold: windows along `axis`, each `step` after the last (the window is the last dim).
struct UnfoldAttrs {
  size_t axis = 0;
  int64_t step = 1;
  static UnfoldAttrs of(const Node& node);
  NodeAttrs flat() const { return {static_cast<int64_t>(axis), step}; }
};

// split: the offset along `axis` of each output.
struct SplitAttrs {
  size_t axis = 0;
  std::vector<int64_t> offsets;
  static SplitAttrs of(const Node& node);
  NodeAttrs flat() const;
};

// pad: `before` and `after` elements of value `fill` around `axis` (fill is Node::value).
struct PadAttrs {
  size_t axis = 0;
  int64_t before = 0, after = 0;
  double fill = 0.0;
  static PadAttrs of(const Node& node);
  NodeAttrs flat() const { return {static_cast<int64_t>(axis), before, after}; }
};

// gather: rows of `axis`; `distinct` rows are fetched (0: as many as there are indices).
struct GatherAttrs {
  size_t axis = 0;
  int64_t distinct = 0;
  static GatherAttrs of(const Node& node);
  NodeAttrs flat() const { return {static_cast<int64_t>(axis), distinct}; }
};

// topk: the k largest (or smallest) elements along `axis`.
struct TopkAttrs {
  size_t axis = 0;
  int64_t k = 1;
  bool largest = true;
  static TopkAttrs of(const Node& node);
  NodeAttrs flat() const { return {static_cast<int64_t>(axis), k, largest ? 1 : 0}; }
};

}  // namespace solar
