#include "solar/graph/attrs.h"

#include <algorithm>
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

TopkAttrs TopkAttrs::of(const Node& node) {
  const auto& a = checked(node, {Builtin::kTopk}, 3);
  return {axis_of(node, a[0]), a[1], a[2] != 0};
}

}  // namespace solar
