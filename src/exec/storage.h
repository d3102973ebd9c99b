// Element load/store in the executor's storage formats (private to src/exec).
#pragma once

#include <cstdint>

#include "solar/base/dtype.h"

namespace solar::detail {

// The value of element `i` of an array of `dtype` at `data`, as a double.
double load_element(DType dtype, const void* data, int64_t i);
// Stores `v` into element `i`, rounded to `dtype` (round to nearest even; integers truncate
// toward zero and saturate; NaN stores 0) — exec/numeric.h.
void store_element(DType dtype, void* data, int64_t i, double v);

}  // namespace solar::detail
