// A number known before execution: an int (sizes, strides) or a float (eps).
#pragma once

#include <cstdint>

namespace solar {

struct Scalar {
  bool is_int = true;
  int64_t i = 0;
  double f = 0.0;
  double as_double() const { return is_int ? static_cast<double>(i) : f; }
  static Scalar of_int(int64_t v) { return Scalar{true, v, 0.0}; }
  static Scalar of_float(double v) { return Scalar{false, 0, v}; }
};

}  // namespace solar
