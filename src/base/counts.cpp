#include "solar/base/counts.h"

namespace solar {

int64_t FlopCounts::total() const {
  int64_t n = add;
  for (int64_t k : {mul, div, transcendental, compare, other}) n = invariant_add(n, k, "FLOPs");
  return n;
}

FlopCounts& FlopCounts::operator+=(const FlopCounts& o) {
  detail::each_flop_kind(*this, o, [](int64_t& a, int64_t b, const char*) {
    a = invariant_add(a, b, "FLOPs of a kind");
  });
  return *this;
}

const char* reduce_op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::kNone:
      return "none";
    case ReduceOp::kAdd:
      return "+";
    case ReduceOp::kMul:
      return "*";
    case ReduceOp::kMax:
      return "max";
    case ReduceOp::kMin:
      return "min";
  }
  return "none";
}

}  // namespace solar
