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

// fft: a discrete Fourier transform along `axis` (docs/ir.md, fft). Complex values are pairs
// of reals in a last dim of size 2. `kind`: r2c (real input, its spectrum: n/2 + 1 bins, or
// all n when not `onesided`), c2r (the n real values of a one-sided spectrum's inverse), c2c
// (`inverse` picks the sign). `n` is the transform's length; the factor every output is
// multiplied by is Node::value.
enum class FftKind : int64_t { kR2c = 0, kC2r = 1, kC2c = 2 };
struct FftAttrs {
  size_t axis = 0;
  FftKind kind = FftKind::kR2c;
  int64_t n = 1;
  bool inverse = false;
  bool onesided = true;
  double scale = 1.0;
  static FftAttrs of(const Node& node);
  NodeAttrs flat() const {
    return {static_cast<int64_t>(axis), static_cast<int64_t>(kind), n, inverse ? 1 : 0,
            onesided ? 1 : 0};
  }
};

// The fewest real additions and multiplications known for a DFT of n points, complex or
// real data (S. G. Johnson and M. Frigo's modified split radix; attrs.cpp).
int64_t fft_flops(int64_t n, bool real_data);

}  // namespace solar
