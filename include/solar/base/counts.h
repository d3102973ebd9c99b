// Counting types shared by every stage: non-MAC FLOPs by kind (the checker derives them per
// point of a loop nest, lifting scales them by iteration-space sizes, the graph sums them
// per node), how a nest accumulates (ReduceOp), and the overflow-checked sums and scalings
// of FLOP counts (base/checked.h: exact or a UserError of kind `overflow`).
#pragma once

#include <cstdint>

#include "solar/base/checked.h"

namespace solar {

// Non-MAC arithmetic, counted per point of the iteration space and per operator.
struct FlopCounts {
  int64_t add = 0;             // + -  (also += accumulation outside a MAC)
  int64_t mul = 0;             // *    (also *= and factors beyond a MAC's two)
  int64_t div = 0;             // / // %
  int64_t transcendental = 0;  // exp log log1p expm1 sqrt rsqrt tanh sigmoid erf sin cos pow **
  int64_t compare = 0;         // max min comparisons select abs, max/min reductions
  int64_t other = 0;           // floor ceil round cast

  int64_t total() const;  // the sum of the kinds
  // Kind by kind; for counts known to fit (an InternalError otherwise).
  FlopCounts& operator+=(const FlopCounts& o);
};

// `into` += `o` kind by kind; `per_point` scaled by `points`; `f.total()`. When a result does
// not fit in int64, the UserError `error(kind)` returns is thrown ("add", ...; "total").
template <typename MakeError>
void add_flops(FlopCounts& into, const FlopCounts& o, MakeError&& error);
template <typename MakeError>
FlopCounts scale_flops(const FlopCounts& per_point, int64_t points, MakeError&& error);
template <typename MakeError>
int64_t checked_flops_total(const FlopCounts& f, MakeError&& error);

enum class ReduceOp : uint8_t { kNone, kAdd, kMul, kMax, kMin };
const char* reduce_op_name(ReduceOp op);

// ---------------------------------------------------------------- templates declared above

namespace detail {
// Calls f(field of into, field of o, kind name) for each kind.
template <typename F>
void each_flop_kind(FlopCounts& into, const FlopCounts& o, F&& f) {
  f(into.add, o.add, "add");
  f(into.mul, o.mul, "mul");
  f(into.div, o.div, "div");
  f(into.transcendental, o.transcendental, "transcendental");
  f(into.compare, o.compare, "compare");
  f(into.other, o.other, "other");
}
}  // namespace detail

template <typename MakeError>
void add_flops(FlopCounts& into, const FlopCounts& o, MakeError&& error) {
  detail::each_flop_kind(into, o, [&](int64_t& a, int64_t b, const char* kind) {
    a = count_add(a, b, [&] { return error(kind); });
  });
}

template <typename MakeError>
FlopCounts scale_flops(const FlopCounts& per_point, int64_t points, MakeError&& error) {
  FlopCounts out;
  detail::each_flop_kind(out, per_point, [&](int64_t& a, int64_t b, const char* kind) {
    a = count_mul(b, points, [&] { return error(kind); });
  });
  return out;
}

template <typename MakeError>
int64_t checked_flops_total(const FlopCounts& f, MakeError&& error) {
  int64_t n = f.add;
  for (int64_t k : {f.mul, f.div, f.transcendental, f.compare, f.other})
    n = count_add(n, k, [&] { return error("total"); });
  return n;
}

}  // namespace solar
