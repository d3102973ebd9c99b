// Executor: runs a checked program on concrete arrays (docs/execution.md). It walks the einsum
// graph that the tracer built for the inputs' shapes, so execution and analysis see the same
// program: kernels run as loop nests (the interpreter, the reference; or native code compiled
// from the IR), builtins run natively. Storage formats and rounding: exec/numeric.h.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "solar/base/dtype.h"
#include "solar/graph/graph.h"
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

const char* backend_name(Backend backend);

// The native backend's state, owned by the caller (no process-wide state): the kernels this
// session has loaded (by cache directory and source hash) and, once a kernel could not be compiled
// with ExecOptions::fallback_to_interpreter set, why (later calls then run in the interpreter
// without trying again). A session may serve several executions, one after another or from
// several threads; without one, each execution uses a session of its own.
class NativeSession {
 public:
  NativeSession();
  ~NativeSession();  // unloads the kernels it loaded
  NativeSession(const NativeSession&) = delete;
  NativeSession& operator=(const NativeSession&) = delete;

  // Why the native backend failed in this session ("" while it has not).
  std::string unavailable() const;

  struct Impl;
  Impl& impl() { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

struct ExecOptions {
  Backend backend = Backend::kInterpreter;
  // Check every tensor access against its shape; an out-of-range index is a UserError
  // (kind kBounds) naming the kernel, the source line, the index values and the shape.
  bool bounds_check = true;
  // Set from another thread (or a signal handler) to stop soon (native code polls it every
  // few thousand loop iterations and between GEMM blocks, the interpreter every 64 rows, the
  // compiler is killed); the executor then throws Interrupted.
  const std::atomic<bool>* cancel = nullptr;
  // Called on the calling thread before work that may take long (possibly more than once):
  // compiling a kernel, an interpreted kernel call (the first of an interpreter run, each
  // native call that falls back), and the node with which the run's work (loop points and
  // FLOPs of its kernel calls, elements its builtins write) passes 2^26. A caller that
  // sets `cancel` from a thread of its own (the Python binding's Ctrl-C watcher) starts
  // that thread here, so a short run starts none. Null: nothing is called.
  std::function<void()> before_long_work;
  // Native backend: where compiled kernels are cached (default, per user:
  // $XDG_CACHE_HOME/solar/kernels or ~/.cache/solar/kernels; created 0700, refused when
  // others may write it: docs/execution.md, The cache), the
  // compiler command (words separated by spaces, run without a shell), and the include dir
  // holding solar/exec/numeric.h.
  std::string cache_dir;
  std::string compiler = "c++";
  std::string include_dir;
  int threads = 0;  // 0: all cores
  // Native backend: when a kernel cannot be compiled or loaded (kind kCompile), run it and
  // every later kernel of the session in the interpreter instead of failing; ExecReport then
  // says so. Off by default: the error names the compiler and carries its message.
  bool fallback_to_interpreter = false;
  // Loaded kernels and fallback state; null: a session for this execution only.
  NativeSession* session = nullptr;
};

// What an execution did: the backend that ran its kernel calls (the interpreter as soon as
// one native call fell back), how many calls each backend ran, and why the native backend
// was not used for some ("" when it was used for every call asked of it).
struct ExecReport {
  Backend backend = Backend::kInterpreter;
  int64_t native_calls = 0;
  int64_t interpreted_calls = 0;
  std::string fallback_reason;
};

// Why the native backend cannot run here, checked without compiling anything: the compiler
// command is not found or not executable, or the cache directory cannot be created or
// written. "" when both look usable (a compile can still fail: kind kCompile).
std::string native_unavailable_reason(const ExecOptions& options);

// The x86 features that decide which OpenBLAS core runs the executor's GEMMs.
struct CpuFeatures {
  bool avx = false, avx2 = false, fma = false;
  bool avx512f = false, avx512bw = false, avx512dq = false, avx512vl = false, avx512cd = false;
};

// The OpenBLAS core (OPENBLAS_CORETYPE) for a CPU with these features, set before OpenBLAS
// first loads unless the user set one (the native backend does so before it loads its first
// kernel, docs/execution.md): SkylakeX with AVX-512 (F, BW, DQ, VL, CD), Haswell
// with AVX2 and FMA, Sandybridge with AVX; null below that (OpenBLAS's own choice).
const char* openblas_core_for(const CpuFeatures& cpu);

// Thrown when ExecOptions::cancel was set.
class Interrupted : public std::runtime_error {
 public:
  Interrupted() : std::runtime_error("execution interrupted") {}
};

// What executing the graph will cost, for budgets: peak bytes of live arrays and the number
// of loop iterations times operations per iteration. With `packed_gemms` (the native backend,
// whose GEMM path runs with bounds checks too where they are proven when the kernel is
// generated), a contraction nest also holds its packed operands and result while it runs
// ((|A| + |B| + |C|) x 4 or 8 bytes), counted in the peak.
struct ExecCost {
  int64_t peak_bytes = 0;
  int64_t operations = 0;  // Σ over nests of points × (1 + operators per point)
  // MACs of the contraction nests the native backend may run as GEMMs:
  // every MAC nest except those whose output is written at an affine position (the scatter
  // form of a transposed convolution, an output dim such as (H+R)), which stay scalar loops.
  int64_t gemm_macs = 0;
};
ExecCost estimate_cost(const Graph& graph, bool packed_gemms = false);

// Runs the graph on `inputs` (one per graph input, in order; shapes and dtypes must match the
// graph's, a mismatch is a UserError naming the parameter and both shapes). Returns the
// graph outputs in order; `report`, when given, receives which backend ran each call.
std::vector<Array> execute(const Program& program, const Graph& graph,
                           const std::vector<Array>& inputs, const ExecOptions& options,
                           ExecReport* report = nullptr);

}  // namespace solar
