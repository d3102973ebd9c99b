#include "solar/graph/attrs.h"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <string>

#include "solar/base/error.h"
#include "solar/graph/ops.h"

namespace solar {
namespace {

// The node's flat attributes, after checking that it is one of `ops` and holds at least
// `count` of them (exactly `count` unless `more` allows a tail).
const NodeAttrs& checked(const Node& node, std::initializer_list<Builtin> ops, size_t count,
                         bool more = false) {
  SOLAR_INTERNAL_CHECK(std::find(ops.begin(), ops.end(), node.builtin) != ops.end(),
                       "node '" + node.name + "' (" + builtin_name(node.builtin) +
                           ") read as another builtin's attributes");
  const size_t n = node.attrs.size();
  SOLAR_INTERNAL_CHECK(more ? n >= count : n == count,
                       "node '" + node.name + "' holds " + std::to_string(n) + " attributes, " +
                           builtin_name(node.builtin) + " has " + std::to_string(count) +
                           (more ? " or more" : ""));
  return node.attrs;
}

size_t axis_of(const Node& node, int64_t a) {
  SOLAR_INTERNAL_CHECK(a >= 0, "node '" + node.name + "' has a negative axis");
  return static_cast<size_t>(a);
}

}  // namespace

DimMapAttrs DimMapAttrs::of(const Node& node) {
  return {checked(node, {Builtin::kPermute, Builtin::kPermuteView, Builtin::kBroadcast}, 0, true)};
}

AxisAttrs AxisAttrs::of(const Node& node) {
  const auto& a = checked(
      node, {Builtin::kConcat, Builtin::kStack, Builtin::kScatter, Builtin::kScatterAdd}, 1, true);
  return {axis_of(node, a[0]), a.size() > 1 && a[1] != 0};
}

SliceAttrs SliceAttrs::of(const Node& node) {
  const auto& a = checked(node, {Builtin::kSlice, Builtin::kUpdate}, 3);
  return {axis_of(node, a[0]), a[1], a[2]};
}

SelectAttrs SelectAttrs::of(const Node& node) {
  const auto& a = checked(node, {Builtin::kSelect}, 2);
  return {axis_of(node, a[0]), a[1]};
}

UnfoldAttrs UnfoldAttrs::of(const Node& node) {
  const auto& a = checked(node, {Builtin::kUnfold}, 2);
  return {axis_of(node, a[0]), a[1]};
}

SplitAttrs SplitAttrs::of(const Node& node) {
  const auto& a = checked(node, {Builtin::kSplit}, 1, true);
  return {axis_of(node, a[0]), std::vector<int64_t>(a.begin() + 1, a.end())};
}

NodeAttrs SplitAttrs::flat() const {
  NodeAttrs out = {static_cast<int64_t>(axis)};
  out.insert(out.end(), offsets.begin(), offsets.end());
  return out;
}

PadAttrs PadAttrs::of(const Node& node) {
  const auto& a = checked(node, {Builtin::kPad}, 3);
  return {axis_of(node, a[0]), a[1], a[2], node.value};
}

GatherAttrs GatherAttrs::of(const Node& node) {
  const auto& a = checked(node, {Builtin::kGather}, 2);
  return {axis_of(node, a[0]), a[1]};
}

FftAttrs FftAttrs::of(const Node& node) {
  const auto& a = checked(node, {Builtin::kFft}, 5);
  SOLAR_INTERNAL_CHECK(a[1] >= 0 && a[1] <= 2, "node '" + node.name + "' has no fft kind");
  return {axis_of(node, a[0]), static_cast<FftKind>(a[1]), a[2], a[3] != 0, a[4] != 0, node.value};
}

TopkAttrs TopkAttrs::of(const Node& node) {
  const auto& a = checked(node, {Builtin::kTopk}, 3);
  return {axis_of(node, a[0]), a[1], a[2] != 0};
}

// S. G. Johnson and M. Frigo, "A modified split-radix FFT with fewer arithmetic operations",
// IEEE Trans. Signal Processing 55(1), 111-119 (2007), the lowest published counts for
// n = 2^m: complex data (34/9) n m - (124/27) n - 2m - (2/9)(-1)^m m + (16/27)(-1)^m + 8,
// real data (17/9) n m - (89/27) n - m - (1/9)(-1)^m m + (8/27)(-1)^m + 2. Taken here with
// m = log2(n) for any n and the sign (-1)^m = +1, which gives the smaller count from m = 3 on
// (and is clamped at 0 below): a count no known algorithm undercuts, as a bound needs; other
// lengths cost more with every known algorithm (mixed radix, Bluestein), so the power-of-two
// formula at a fractional m stays below them.
int64_t fft_flops(int64_t n, bool real_data) {
  if (n <= 1) return 0;
  const double x = static_cast<double>(n), m = std::log2(x);
  const double flops = real_data ? 17.0 / 9 * x * m - 89.0 / 27 * x - 10.0 / 9 * m + 8.0 / 27 + 2
                                 : 34.0 / 9 * x * m - 124.0 / 27 * x - 20.0 / 9 * m + 16.0 / 27 + 8;
  // floor() after a margin far below one operation for float rounding: the count at
  // n = 16 is 168 exactly, not 167.99...
  return flops <= 0 ? 0 : static_cast<int64_t>(std::floor(flops + 1e-6));
}

}  // namespace solar
