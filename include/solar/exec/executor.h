// Executor: runs a checked program on concrete arrays (docs/execution.md). It walks the einsum
// graph that the tracer built for the inputs' shapes, so execution and analysis see the same
// program: kernels run as loop nests (the interpreter, the reference; or native code compiled
// from the IR), builtins run natively. Storage formats and rounding: exec/numeric.h.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "solar/base/dtype.h"
#include "solar/einsum/graph.h"
#include "solar/ir/program.h"

namespace solar {

// A dense, row-major array in the executor's storage format for its dtype: fp64/int64 8
// bytes, fp32/tf32/int32 4, bf16/fp16/int16 2, fp8/int8/uint8/bool/int4/nvfp4 1 (one code per
// byte; the analysis still counts nvfp4/int4 as half a byte).
struct Array {
  DType dtype = DType::kFp32;
  std::vector<int64_t> shape;
  void* data = nullptr;
  std::shared_ptr<void> owner;  // keeps `data` alive (a buffer of ours, or a NumPy array)

  int64_t elements() const;
  int64_t nbytes() const;
  // Element `i` (row-major) as a double; element `i` set to `v` rounded to the dtype as
  // every store rounds (round_to_dtype). No bounds check: 0 <= i < elements().
  double load(int64_t i) const;
  void store(int64_t i, double v);
  // A new zero-filled array.
  static Array allocate(DType dtype, std::vector<int64_t> shape);
};

// Executor storage bytes per element (see Array).
int storage_bytes(DType dtype);

// `v` stored in `dtype`'s format and loaded back: the rounding every store applies
// (exec/numeric.h; docs/numeric-formats.md).
double round_to_dtype(DType dtype, double v);

enum class Backend { kInterpreter, kNative };

struct ExecOptions {
  Backend backend = Backend::kInterpreter;
  // Check every tensor access against its shape; an out-of-range index is a UserError
  // (kind kBounds) naming the kernel, the source line, the index values and the shape.
  bool bounds_check = true;
  // Set from another thread (or a signal handler) to stop at the next loop iteration; the
  // executor then throws Interrupted.
  const std::atomic<bool>* cancel = nullptr;
  // Native backend: where compiled kernels are cached, the compiler, and the include dir
  // holding solar/exec/numeric.h.
  std::string cache_dir;
  std::string compiler = "c++";
  std::string include_dir;
  int threads = 0;  // 0: all cores
  // Native backend: when the compiler is missing or fails, run kernels in the interpreter
  // instead of failing (false: report the compiler's error).
  bool fallback_to_interpreter = true;
};

// Thrown when ExecOptions::cancel was set.
class Interrupted : public std::runtime_error {
 public:
  Interrupted() : std::runtime_error("execution interrupted") {}
};

// What executing the graph will cost, for budgets: peak bytes of live arrays and the number
// of loop iterations times operations per iteration.
struct ExecCost {
  int64_t peak_bytes = 0;
  int64_t operations = 0;  // Σ over nests of points × (1 + operators per point)
};
ExecCost estimate_cost(const Graph& graph);

// Runs the graph on `inputs` (one per graph input, in order; shapes and dtypes must match the
// graph's, a mismatch is a UserError naming the parameter and both shapes). Returns the
// graph outputs in order.
std::vector<Array> execute(const Program& program, const Graph& graph,
                           const std::vector<Array>& inputs, const ExecOptions& options);

}  // namespace solar
