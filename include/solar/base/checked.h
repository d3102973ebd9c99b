// Overflow-checked arithmetic for counts: iteration points, MACs, FLOPs, elements, bytes and
// their graph sums. Every count Solar reports is exact or refused, never wrapped (docs/ir.md
// §7-8): a count is formed with these functions, and one that does not fit in int64 is a
// UserError of kind `overflow` naming the node (or the graph total) and the quantity.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "solar/base/error.h"

namespace solar {

// The largest count Solar carries: 2^63 - 1.
constexpr int64_t kMaxCount = std::numeric_limits<int64_t>::max();

// a + b, a * b, or nullopt when the result does not fit in int64.
inline std::optional<int64_t> checked_add(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}
inline std::optional<int64_t> checked_mul(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

// a + b and a * b clamped to [INT64_MIN, kMaxCount]: for estimates that are compared with a
// limit (an execution budget, a capped read), where "too large" is all that matters.
inline int64_t saturating_add(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r))
    return b > 0 ? kMaxCount : std::numeric_limits<int64_t>::min();
  return r;
}
inline int64_t saturating_mul(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) {
    return (a < 0) != (b < 0) ? std::numeric_limits<int64_t>::min() : kMaxCount;
  }
  return r;
}

// Where a count is formed, for the error that refuses it: the source file, the location (a
// node's call site in model(), a parameter's annotation) and what the count belongs to
// ("node 'mm#0'", "model() parameter 'x'"); an empty subject is the whole graph (a sum over
// its nodes).
struct CountSite {
  std::string file;
  Loc loc;
  std::string subject;
};

// The UserError (kind `overflow`) for `quantity` (plural: "matrix FLOPs (2 x MACs)", "bytes
// of tensor 'x'") not fitting in int64 at `site`.
UserError count_overflow(const CountSite& site, const std::string& quantity);

// a + b and a * b, or throws the UserError that `error()` returns (built only on overflow):
//   n = count_add(n, node.macs, [&] { return count_overflow(site, "MACs"); });
template <typename MakeError>
int64_t count_add(int64_t a, int64_t b, MakeError&& error) {
  int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) throw error();
  return r;
}
template <typename MakeError>
int64_t count_mul(int64_t a, int64_t b, MakeError&& error) {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) throw error();
  return r;
}

// For counts that an earlier stage has already checked (a traced graph's per-node counts):
// a + b and a * b, or an InternalError, since a wrapped value there means Solar is wrong.
inline int64_t invariant_add(int64_t a, int64_t b, const char* what) {
  int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) {
    throw InternalError(std::string(what) +
                        " overflows int64 in a graph whose counts were checked");
  }
  return r;
}
inline int64_t invariant_mul(int64_t a, int64_t b, const char* what) {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) {
    throw InternalError(std::string(what) +
                        " overflows int64 in a graph whose counts were checked");
  }
  return r;
}

}  // namespace solar
