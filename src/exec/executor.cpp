// Executor: walks the einsum graph in order, running kernels (interpreter or native code)
// and builtins on concrete arrays.
#include "solar/exec/executor.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <kissfft/kissfft.hh>
#include <new>
#include <numeric>
#include <optional>

#include "interpreter.h"
#include "native.h"
#include "solar/base/checked.h"
#include "solar/einsum/lift.h"
#include "solar/graph/attrs.h"
#include "storage.h"

namespace solar {

int storage_bytes(DType dtype) {
  switch (dtype) {
    case DType::kFp64:
    case DType::kInt64:
      return 8;
    case DType::kFp32:
    case DType::kTf32:
    case DType::kInt32:
      return 4;
    case DType::kBf16:
    case DType::kFp16:
    case DType::kInt16:
      return 2;
    default:
      return 1;
  }
}

int64_t Array::elements() const {
  int64_t n = 1;
  for (int64_t s : shape) n = invariant_mul(n, s, "array elements");
  return n;
}

int64_t Array::nbytes() const {
  return invariant_mul(elements(), storage_bytes(dtype), "array bytes");
}

Array Array::allocate(DType dtype, std::vector<int64_t> shape) {
  Array a;
  a.dtype = dtype;
  a.shape = std::move(shape);
  for (int64_t s : a.shape) SOLAR_INTERNAL_CHECK(s >= 0, "an array with a negative size");
  const size_t n = static_cast<size_t>(std::max<int64_t>(a.nbytes(), 1));
  // 64-byte alignment suits vector loads in compiled kernels. It is done by hand over
  // malloc: glibc serves aligned requests (aligned new, posix_memalign) above its mmap
  // threshold with a fresh mmap every time, so each call of a kernel with a large output
  // page-faulted all of it in again (1,568 faults for a 6.4 MB output, about a third of the
  // depthwise convolution's call); plain malloc raises the threshold after the first free and
  // reuses the block.
  constexpr size_t kAlign = 64;
  void* raw = std::malloc(n + kAlign);
  if (!raw) throw std::bad_alloc();
  const auto addr = reinterpret_cast<std::uintptr_t>(raw);
  auto* p = reinterpret_cast<std::byte*>((addr + kAlign - 1) & ~(std::uintptr_t{kAlign} - 1));
  std::memset(p, 0, n);
  a.owner = std::shared_ptr<void>(p, [raw](void*) { std::free(raw); });
  a.data = p;
  return a;
}

namespace {

std::string shape_text(std::span<const int64_t> shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

// Row-major strides in elements.
std::vector<int64_t> strides_of(const std::vector<int64_t>& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;) s[d - 1] = s[d] * shape[d];
  return s;
}

// out[i...] = in[base + Σ i_d * in_stride[d]] for every index of `out` (same dtype).
void strided_copy(const Array& in, int64_t base, const std::vector<int64_t>& in_stride,
                  Array& out) {
  const int es = storage_bytes(in.dtype);
  const auto* src = static_cast<const std::byte*>(in.data);
  auto* dst = static_cast<std::byte*>(out.data);
  const size_t rank = out.shape.size();
  const int64_t n = out.elements();
  std::vector<int64_t> idx(rank, 0);
  int64_t at = base;
  for (int64_t k = 0; k < n; ++k) {
    std::memcpy(dst + k * es, src + at * es, static_cast<size_t>(es));
    for (size_t d = rank; d-- > 0;) {
      at += in_stride[d];
      if (++idx[d] < out.shape[d]) break;
      at -= in_stride[d] * out.shape[d];
      idx[d] = 0;
    }
  }
}

class GraphRun {
 public:
  GraphRun(const Program& program, const Graph& graph, const ExecOptions& options,
           NativeSession& session, ExecReport& report)
      : program_(program),
        graph_(graph),
        options_(options),
        session_(session),
        report_(report),
        values_(graph.tensors.size()) {}

  std::vector<Array> run(const std::vector<Array>& inputs) {
    bind_inputs(inputs);
    std::vector<int> remaining(graph_.tensors.size(), 0);
    for (const Node& n : graph_.nodes)
      for (TensorId t : n.inputs) ++remaining[static_cast<size_t>(t)];
    for (const Node& node : graph_.nodes) {
      if (options_.cancel && options_.cancel->load(std::memory_order_relaxed)) throw Interrupted();
      note_work(node);
      if (node.kind == NodeKind::kEinsum) {
        run_kernel(node);
      } else {
        run_builtin(node);
      }
      // Free intermediates once their last reader ran.
      for (TensorId t : node.inputs) {
        const TensorInfo& info = graph_.tensors[static_cast<size_t>(t)];
        if (--remaining[static_cast<size_t>(t)] == 0 && !info.is_output && info.producer != kNoNode)
          values_[static_cast<size_t>(t)] = Array{};
      }
    }
    std::vector<Array> out;
    for (TensorId t : graph_.outputs) out.push_back(values_[static_cast<size_t>(t)]);
    return out;
  }

 private:
  // Adds the node's work to the run's; before the node with which it passes kLongWork, or
  // before the first interpreted kernel call, tells the caller (ExecOptions::
  // before_long_work), once per run.
  void note_work(const Node& node) {
    if (!options_.before_long_work || told_) return;
    int64_t w = 0;
    if (node.kind == NodeKind::kEinsum) {
      for (size_t e = 0; e < node.einsum_count(); ++e)
        w = saturating_add(w, (*node.einsums)[e].points);
      w = saturating_add(w, node.total_flops());
    } else {
      for (TensorId t : node.outputs)
        w = saturating_add(w, graph_.tensors[static_cast<size_t>(t)].elements());
    }
    work_ = saturating_add(work_, w);
    const bool interpreted = node.kind == NodeKind::kEinsum && options_.backend != Backend::kNative;
    if (work_ > kLongWork || interpreted) {
      told_ = true;
      options_.before_long_work();
    }
  }

  [[noreturn]] void input_error(const std::string& msg) const {
    throw UserError(ErrorKind::kInput, program_.file, {}, msg);
  }

  void bind_inputs(const std::vector<Array>& inputs) {
    if (inputs.size() != graph_.inputs.size()) {
      input_error("model() takes " + std::to_string(graph_.inputs.size()) + " inputs, got " +
                  std::to_string(inputs.size()));
    }
    for (size_t i = 0; i < inputs.size(); ++i) {
      const TensorInfo& t = graph_.tensors[static_cast<size_t>(graph_.inputs[i])];
      const Array& a = inputs[i];
      if (!std::ranges::equal(a.shape, t.shape)) {
        input_error("input '" + t.name + "' must have shape " + shape_text(t.shape) + " (" +
                    [&] {
                      std::string d;
                      for (size_t k = 0; k < t.dims.size(); ++k) d += (k ? "," : "") + t.dims[k];
                      return d;
                    }() +
                    "), got " + shape_text(a.shape));
      }
      if (a.dtype != t.dtype) {
        input_error("input '" + t.name + "' must have dtype " + dtype_name(t.dtype) + ", got " +
                    dtype_name(a.dtype));
      }
      if (!a.data && a.nbytes() > 0) input_error("input '" + t.name + "' has no data");
      values_[static_cast<size_t>(graph_.inputs[i])] = a;
    }
  }

  const Array& value(TensorId t) const { return values_[static_cast<size_t>(t)]; }
  Array new_output(const Node& node, size_t i) {
    const TensorInfo& t = graph_.tensors[static_cast<size_t>(node.outputs[i])];
    Array a = Array::allocate(t.dtype, {t.shape.begin(), t.shape.end()});
    values_[static_cast<size_t>(node.outputs[i])] = a;
    return a;
  }

  void run_kernel(const Node& node) {
    const Kernel& k = program_.kernels[static_cast<size_t>(node.kernel)];
    KernelCall call;
    call.kernel = &k;
    call.name = node.name;
    call.loc = node.loc;
    call.tensor_args.assign(k.params.size(), nullptr);
    call.scalar_args.assign(node.scalar_args.begin(), node.scalar_args.end());
    std::vector<Array> tensors(k.tensors.size());
    size_t next_input = 0;
    for (size_t p = 0; p < k.params.size(); ++p) {
      if (k.params[p].kind != ParamKind::kTensor) continue;
      const TensorId t = node.inputs[next_input++];
      call.tensor_args[p] = &graph_.tensors[static_cast<size_t>(t)];
      tensors[static_cast<size_t>(k.params[p].tensor)] = value(t);
    }
    const LiftedCall lifted = lift_call(program_, call);
    for (size_t t = 0; t < k.tensors.size(); ++t) {
      const KernelTensor& kt = k.tensors[t];
      if (kt.is_param) continue;
      Array a = Array::allocate(kt.dtype, lifted.tensor_shapes[t]);
      if (kt.fill != 0.0) {
        const int64_t n = a.elements();
        for (int64_t e = 0; e < n; ++e) detail::store_element(a.dtype, a.data, e, kt.fill);
      }
      tensors[t] = std::move(a);
    }
    if (options_.backend == Backend::kNative) {
      detail::run_native_kernel(program_, k, lifted, call.scalar_args, tensors, options_, node.name,
                                session_, report_);
    } else {
      detail::interpret_kernel(program_, k, lifted, call.scalar_args, tensors, options_, node.name);
      ++report_.interpreted_calls;
    }
    for (size_t r = 0; r < k.returns.size(); ++r)
      values_[static_cast<size_t>(node.outputs[r])] = tensors[static_cast<size_t>(k.returns[r])];
  }

  void run_builtin(const Node& node) {
    const Builtin op = node.builtin;
    // Every copy below is bytewise in the inputs' storage format and sized by the graph's
    // shapes: each input array must be what the graph says (the tracer makes a copying
    // builtin's output dtype that of its inputs; concat and stack require one dtype).
    for (TensorId t : node.inputs) {
      const TensorInfo& info = graph_.tensors[static_cast<size_t>(t)];
      const Array& a = value(t);
      SOLAR_INTERNAL_CHECK(
          a.dtype == info.dtype && std::ranges::equal(a.shape, info.shape) &&
              (a.data || a.elements() == 0),
          "builtin '" + node.name + "' input '" + info.name + "' differs from the graph's tensor");
    }
    const Array& x = node.inputs.empty() ? empty_ : value(node.inputs[0]);
    const DType out_dtype = node.outputs.empty()
                                ? DType::kFp32
                                : graph_.tensors[static_cast<size_t>(node.outputs[0])].dtype;
    const bool converts = builtin_info(op).converts;
    SOLAR_INTERNAL_CHECK(converts || node.inputs.empty() || x.dtype == out_dtype,
                         "builtin '" + node.name + "' would copy " + dtype_name(x.dtype) +
                             " into " + dtype_name(out_dtype));
    if (op == Builtin::kBitcast && (x.dtype == DType::kNvfp4 || out_dtype == DType::kNvfp4)) {
      // Packed FP4 (the tracer allows only uint8 <-> nvfp4): byte j holds codes 2j (low
      // nibble) and 2j + 1; an nvfp4 array stores one code per byte.
      Array out = new_output(node, 0);
      const auto* in = static_cast<const uint8_t*>(x.data);
      auto* to = static_cast<uint8_t*>(out.data);
      if (x.dtype == DType::kUint8) {
        for (int64_t j = 0; j < x.elements(); ++j) {
          to[2 * j] = in[j] & 0x0Fu;
          to[2 * j + 1] = static_cast<uint8_t>(in[j] >> 4);
        }
      } else {
        for (int64_t j = 0; j < out.elements(); ++j)
          to[j] = static_cast<uint8_t>((in[2 * j] & 0x0Fu) | (in[2 * j + 1] & 0x0Fu) << 4);
      }
      return;
    }
    if (op == Builtin::kReshape || op == Builtin::kBitcast) {
      Array a = x;
      a.dtype = out_dtype;  // a bitcast reads the same bytes as another dtype
      const Shape& shape = graph_.tensors[static_cast<size_t>(node.outputs[0])].shape;
      a.shape.assign(shape.begin(), shape.end());
      values_[static_cast<size_t>(node.outputs[0])] = a;
      return;
    }
    const std::vector<int64_t> in_stride = x.data ? strides_of(x.shape) : std::vector<int64_t>{};
    if (op == Builtin::kPermute || op == Builtin::kPermuteView) {
      Array out = new_output(node, 0);
      std::vector<int64_t> s;
      for (int64_t d : DimMapAttrs::of(node).from) s.push_back(in_stride[static_cast<size_t>(d)]);
      strided_copy(x, 0, s, out);
    } else if (op == Builtin::kSlice) {
      Array out = new_output(node, 0);
      const SliceAttrs at = SliceAttrs::of(node);
      std::vector<int64_t> s = in_stride;
      s[at.axis] *= at.step;
      strided_copy(x, at.start * in_stride[at.axis], s, out);
    } else if (op == Builtin::kSelect) {
      Array out = new_output(node, 0);
      const SelectAttrs at = SelectAttrs::of(node);
      std::vector<int64_t> s = in_stride;
      s.erase(s.begin() + static_cast<std::ptrdiff_t>(at.axis));
      strided_copy(x, at.index * in_stride[at.axis], s, out);
    } else if (op == Builtin::kUnfold) {  // windows: dim a advances by step, the last dim by 1
      Array out = new_output(node, 0);
      const UnfoldAttrs at = UnfoldAttrs::of(node);
      std::vector<int64_t> s = in_stride;
      s[at.axis] *= at.step;
      s.push_back(in_stride[at.axis]);
      strided_copy(x, 0, s, out);
    } else if (op == Builtin::kSplit) {
      const SplitAttrs at = SplitAttrs::of(node);
      SOLAR_INTERNAL_CHECK(at.offsets.size() == node.outputs.size(),
                           "split '" + node.name + "' has an offset per output");
      for (size_t i = 0; i < node.outputs.size(); ++i) {
        Array out = new_output(node, i);
        strided_copy(x, at.offsets[i] * in_stride[at.axis], in_stride, out);
      }
    } else if (op == Builtin::kConcat || op == Builtin::kStack) {
      Array out = new_output(node, 0);
      const size_t a = AxisAttrs::of(node).axis;
      const std::vector<int64_t> out_stride = strides_of(out.shape);
      int64_t offset = 0;
      for (TensorId t : node.inputs) {
        const Array& part = value(t);
        SOLAR_INTERNAL_CHECK(part.dtype == out.dtype,
                             "concat/stack '" + node.name + "' of tensors of different dtypes");
        // `part` fills the region of `out` that starts at `offset` along axis a.
        std::vector<int64_t> dst_stride = out_stride;
        if (op == Builtin::kStack)
          dst_stride.erase(dst_stride.begin() + static_cast<std::ptrdiff_t>(a));
        Array region = out;
        region.data =
            static_cast<std::byte*>(out.data) + offset * out_stride[a] * storage_bytes(out.dtype);
        scatter_copy(part, region, dst_stride);
        offset += op == Builtin::kStack ? 1 : part.shape[a];
      }
    } else if (op == Builtin::kPad) {
      Array out = new_output(node, 0);
      const PadAttrs at = PadAttrs::of(node);
      const int64_t n = out.elements();
      for (int64_t e = 0; e < n; ++e) detail::store_element(out.dtype, out.data, e, at.fill);
      // Write x into the interior: a strided view of out.
      const std::vector<int64_t> os = strides_of(out.shape);
      Array interior = out;
      interior.shape = x.shape;
      const int es = storage_bytes(x.dtype);
      interior.data = static_cast<std::byte*>(out.data) + at.before * os[at.axis] * es;
      scatter_copy(x, interior, os);
    } else if (op == Builtin::kUpdate) {
      // base, then src over elements start, start + step, ... of the axis (out of place
      // here: the analysis, not the executor, counts it as in place).
      Array out = new_output(node, 0);
      const Array& src = value(node.inputs[1]);
      const SliceAttrs at = SliceAttrs::of(node);
      if (x.nbytes() > 0) std::memcpy(out.data, x.data, static_cast<size_t>(x.nbytes()));
      std::vector<int64_t> os = strides_of(out.shape);
      Array region = out;
      region.shape = src.shape;
      region.data =
          static_cast<std::byte*>(out.data) + at.start * os[at.axis] * storage_bytes(out.dtype);
      os[at.axis] *= at.step;
      scatter_copy(src, region, os);
    } else if (op == Builtin::kBroadcast) {
      Array out = new_output(node, 0);
      std::vector<int64_t> s;
      for (const int64_t from : DimMapAttrs::of(node).from) {
        s.push_back(from < 0 || x.shape[static_cast<size_t>(from)] == 1
                        ? 0
                        : in_stride[static_cast<size_t>(from)]);
      }
      strided_copy(x, 0, s, out);
    } else if (op == Builtin::kGather) {
      gather(node);
    } else if (op == Builtin::kTopk) {
      topk(node);
    } else if (op == Builtin::kScatter || op == Builtin::kScatterAdd) {
      scatter(node);
    } else if (op == Builtin::kFft) {
      fft(node);
    } else if (op == Builtin::kApplyMask) {
      Array out = new_output(node, 0);
      const Array& m = value(node.inputs[1]);
      const int64_t n = out.elements();
      for (int64_t e = 0; e < n; ++e) {
        const double keep = detail::load_element(m.dtype, m.data, e);
        detail::store_element(out.dtype, out.data, e,
                              keep != 0.0 ? detail::load_element(x.dtype, x.data, e) : 0.0);
      }
    } else if (op == Builtin::kCast) {
      Array out = new_output(node, 0);
      const int64_t n = out.elements();
      for (int64_t e = 0; e < n; ++e)
        detail::store_element(out.dtype, out.data, e, detail::load_element(x.dtype, x.data, e));
    } else if (op == Builtin::kConstant || op == Builtin::kIota) {
      Array out = new_output(node, 0);
      const int64_t n = out.elements();
      for (int64_t e = 0; e < n; ++e)
        detail::store_element(out.dtype, out.data, e,
                              op == Builtin::kIota ? static_cast<double>(e) : node.value);
    } else {
      throw InternalError("executor: no implementation for builtin '" + node.op + "'");
    }
  }

  // Writes `src` (contiguous) into `dst` whose element strides are `dst_stride`.
  static void scatter_copy(const Array& src, Array& dst, const std::vector<int64_t>& dst_stride) {
    const int es = storage_bytes(src.dtype);
    const int64_t n = src.elements();
    std::vector<int64_t> idx(src.shape.size(), 0);
    int64_t at = 0;
    for (int64_t k = 0; k < n; ++k) {
      std::memcpy(static_cast<std::byte*>(dst.data) + at * es,
                  static_cast<const std::byte*>(src.data) + k * es, static_cast<size_t>(es));
      for (size_t d = src.shape.size(); d-- > 0;) {
        at += dst_stride[d];
        if (++idx[d] < src.shape[d]) break;
        at -= dst_stride[d] * src.shape[d];
        idx[d] = 0;
      }
    }
  }

  // Element i of a gather's or scatter's index: a position along dim `a` of `rows`, or a
  // `bounds` error naming the node.
  int64_t index_value(const Node& node, const Array& index, int64_t i, size_t a,
                      int64_t rows) const {
    const int64_t r = static_cast<int64_t>(detail::load_element(index.dtype, index.data, i));
    if (r < 0 || r >= rows) {
      throw UserError(ErrorKind::kBounds, program_.file, node.loc,
                      node.op + " (" + node.name + "): index value " + std::to_string(r) +
                          " at position " + std::to_string(i) + " is out of range for dim " +
                          std::to_string(a) + " of size " + std::to_string(rows),
                      "indices must lie in [0, " + std::to_string(rows) + ")");
    }
    return r;
  }

  void gather(const Node& node) {
    const Array& table = value(node.inputs[0]);
    const Array& index = value(node.inputs[1]);
    Array out = new_output(node, 0);
    const size_t a = GatherAttrs::of(node).axis;
    int64_t pre = 1, post = 1;
    for (size_t d = 0; d < a; ++d) pre *= table.shape[d];
    for (size_t d = a + 1; d < table.shape.size(); ++d) post *= table.shape[d];
    const int64_t rows = table.shape[a];
    const int es = storage_bytes(table.dtype);
    const int64_t n = index.elements();
    for (int64_t i = 0; i < n; ++i) {
      const int64_t r = index_value(node, index, i, a, rows);
      for (int64_t p = 0; p < pre; ++p) {
        std::memcpy(static_cast<std::byte*>(out.data) + ((i * pre + p) * post) * es,
                    static_cast<const std::byte*>(table.data) + ((p * rows + r) * post) * es,
                    static_cast<size_t>(post * es));
      }
    }
  }

  // torch.scatter along its axis (the tracer checked the shapes and dtypes).
  void scatter(const Node& node) {
    const Array& base = value(node.inputs[0]);
    const Array& index = value(node.inputs[1]);
    const Array& src = value(node.inputs[2]);
    Array out = new_output(node, 0);
    std::memcpy(out.data, base.data, static_cast<size_t>(base.nbytes()));
    const size_t a = AxisAttrs::of(node).axis;
    int64_t post = 1;
    for (size_t d = a + 1; d < base.shape.size(); ++d) post *= base.shape[d];
    const int64_t rows = base.shape[a], n_index = index.shape[a];
    const int es = storage_bytes(base.dtype);
    const int64_t n = index.elements();
    const bool add = node.builtin == Builtin::kScatterAdd;
    for (int64_t i = 0; i < n; ++i) {
      const int64_t r = index_value(node, index, i, a, rows);
      const int64_t q = i % post, p = i / post / n_index;  // i = (p * n_index + j) * post + q
      const int64_t at = (p * rows + r) * post + q;
      if (add) {
        // In src order, rounded to the dtype after each add, as PyTorch's CPU kernel does:
        // added in double and rounded once, which equals the dtype's own add for fp32, fp16
        // and bf16 (53 >= 2p + 2 bits: double rounding is innocuous, Figueroa 1995).
        detail::store_element(out.dtype, out.data, at,
                              detail::load_element(out.dtype, out.data, at) +
                                  detail::load_element(src.dtype, src.data, i));
      } else {
        std::memcpy(static_cast<std::byte*>(out.data) + at * es,
                    static_cast<const std::byte*>(src.data) + i * es, static_cast<size_t>(es));
      }
    }
  }

  // The fft builtin (graph/attrs.h, FftAttrs), each transform by kissfft in double precision
  // (a maintained mixed-radix FFT for any length: Debian's libkissfft-dev, header only).
  // Complex values are pairs in the last dim; `post` counts the elements between the axis
  // and that dim (all of the rest for real data), so element j of transform (p, q) of a
  // complex array is the pair at ((p * length + j) * post + q) * 2.
  void fft(const Node& node) {
    const Array& x = value(node.inputs[0]);
    Array out = new_output(node, 0);
    const FftAttrs at = FftAttrs::of(node);
    const bool real_in = at.kind == FftKind::kR2c, real_out = at.kind == FftKind::kC2r;
    const int64_t n = at.n, in_length = x.shape[at.axis], out_length = out.shape[at.axis];
    int64_t pre = 1, post = 1;
    for (size_t d = 0; d < at.axis; ++d) pre *= x.shape[d];
    for (size_t d = at.axis + 1; d < x.shape.size() - (real_in ? 0 : 1); ++d) post *= x.shape[d];
    using Complex = std::complex<double>;
    const kissfft<double> plan(static_cast<size_t>(n), at.inverse);
    std::vector<Complex> in(static_cast<size_t>(n)), spectrum(static_cast<size_t>(n));
    auto load = [&](int64_t e) { return detail::load_element(x.dtype, x.data, e); };
    auto store = [&](int64_t e, double v) { detail::store_element(out.dtype, out.data, e, v); };
    for (int64_t p = 0; p < pre; ++p) {
      for (int64_t q = 0; q < post; ++q) {
        for (int64_t j = 0; j < in_length; ++j) {
          const int64_t e = (p * in_length + j) * post + q;
          in[static_cast<size_t>(j)] =
              real_in ? Complex(load(e), 0.0) : Complex(load(2 * e), load(2 * e + 1));
        }
        // c2r: the bins above n/2 are the conjugates of those below (a real signal's).
        for (int64_t k = in_length; real_out && k < n; ++k)
          in[static_cast<size_t>(k)] = std::conj(in[static_cast<size_t>(n - k)]);
        plan.transform(in.data(), spectrum.data());
        for (int64_t k = 0; k < out_length; ++k) {
          const Complex v = spectrum[static_cast<size_t>(k)] * at.scale;
          const int64_t e = (p * out_length + k) * post + q;
          if (real_out) {
            store(e, v.real());
          } else {
            store(2 * e, v.real());
            store(2 * e + 1, v.imag());
          }
        }
      }
    }
  }

  // torch.topk along its axis: the k largest (or with largest = false smallest) elements of
  // each row, best first, ties in index order; NaN ranks above every number, as in PyTorch.
  void topk(const Node& node) {
    const Array& x = value(node.inputs[0]);
    Array values = new_output(node, 0);
    Array indices = new_output(node, 1);
    const TopkAttrs attrs = TopkAttrs::of(node);
    const size_t a = attrs.axis;
    const int64_t k = attrs.k;
    const bool largest = attrs.largest;
    int64_t pre = 1, post = 1;
    for (size_t d = 0; d < a; ++d) pre *= x.shape[d];
    for (size_t d = a + 1; d < x.shape.size(); ++d) post *= x.shape[d];
    const int64_t n = x.shape[a];
    std::vector<double> row(static_cast<size_t>(n));
    std::vector<int64_t> order(static_cast<size_t>(n));
    auto before = [&](int64_t i, int64_t j) {
      const double u = row[static_cast<size_t>(i)], v = row[static_cast<size_t>(j)];
      // NaN ranks above every number (PyTorch): first when largest, last when smallest.
      if (std::isnan(u) || std::isnan(v))
        return largest ? std::isnan(u) && !std::isnan(v) : !std::isnan(u) && std::isnan(v);
      return largest ? u > v : u < v;
    };
    for (int64_t p = 0; p < pre; ++p) {
      for (int64_t q = 0; q < post; ++q) {
        for (int64_t j = 0; j < n; ++j) {
          row[static_cast<size_t>(j)] =
              detail::load_element(x.dtype, x.data, (p * n + j) * post + q);
          order[static_cast<size_t>(j)] = j;
        }
        std::stable_sort(order.begin(), order.end(), before);
        for (int64_t r = 0; r < k; ++r) {
          const int64_t j = order[static_cast<size_t>(r)];
          const int64_t at = (p * k + r) * post + q;
          detail::store_element(values.dtype, values.data, at, row[static_cast<size_t>(j)]);
          detail::store_element(indices.dtype, indices.data, at, static_cast<double>(j));
        }
      }
    }
  }

  const Program& program_;
  const Graph& graph_;
  const ExecOptions& options_;
  NativeSession& session_;
  ExecReport& report_;
  // 2^26 loop points and FLOPs: 0.13 s at the conservative rate the budget assumes for
  // native code (5e8 per second, python/solar/execution.py), so a run that never tells the
  // caller would have to be 8 times slower than that to take the second a Ctrl-C may take.
  static constexpr int64_t kLongWork = int64_t{1} << 26;
  int64_t work_ = 0;
  bool told_ = false;
  std::vector<Array> values_;
  Array empty_;
};

}  // namespace

namespace {

// Bytes the native GEMM path allocates for one contraction nest: each of A, B and C packed
// over the ranks it is indexed by, in fp64 for fp64 targets and fp32 otherwise (an upper
// bound: nests the path does not take allocate nothing).
int64_t packed_bytes(const Einsum& e) {
  if (e.macs <= 0 || e.inputs.size() != 2) return 0;
  auto elements = [&](const Operand& o) {
    int64_t n = 1;
    for (size_t r = 0; r < e.ranks.size(); ++r) {
      bool used = false;
      for (const auto& dim : o.projection)
        for (const ProjectionTerm& t : dim) used = used || t.rank == e.ranks[r];
      if (used) n *= e.rank_sizes[r];
    }
    return n;
  };
  const int64_t es = e.output_dtype == DType::kFp64 ? 8 : 4;
  return (elements(e.inputs[0]) + elements(e.inputs[1]) + elements(e.output)) * es;
}

// The output is written at an affine position in some dim (a sum of ranks, "(H+R)").
bool scatter_output(const Einsum& e) {
  for (const auto& dim : e.output.projection)
    if (dim.size() > 1) return true;
  return false;
}

}  // namespace

ExecCost estimate_cost(const Graph& graph, bool packed_gemms) {
  ExecCost cost;
  std::vector<int> remaining(graph.tensors.size(), 0);
  for (const Node& n : graph.nodes)
    for (TensorId t : n.inputs) ++remaining[static_cast<size_t>(t)];
  // Estimates for a budget: sums saturate at 2^63 - 1 (above any budget) instead of wrapping.
  // `live` is exact while it fits (each array's bytes fit: see Array); once saturated the
  // peak is already above every budget.
  auto array_bytes = [&](TensorId t) {
    const TensorInfo& info = graph.tensors[static_cast<size_t>(t)];
    return saturating_mul(info.elements(), storage_bytes(info.dtype));
  };
  int64_t live = 0;
  for (TensorId t : graph.inputs) live = saturating_add(live, array_bytes(t));
  cost.peak_bytes = live;
  for (const Node& n : graph.nodes) {
    for (TensorId t : n.outputs) live = saturating_add(live, array_bytes(t));
    int64_t scratch = 0;
    if (packed_gemms && n.einsums)
      for (const Einsum& e : *n.einsums) scratch = std::max(scratch, packed_bytes(e));
    cost.peak_bytes = std::max(cost.peak_bytes, saturating_add(live, scratch));
    for (TensorId t : n.inputs) {
      const TensorInfo& info = graph.tensors[static_cast<size_t>(t)];
      if (--remaining[static_cast<size_t>(t)] == 0 && !info.is_output && info.producer != kNoNode &&
          live < kMaxCount)
        live -= array_bytes(t);
    }
    if (n.einsums) {
      for (const Einsum& e : *n.einsums) {
        if (e.macs > 0 && !scatter_output(e))
          cost.gemm_macs = saturating_add(cost.gemm_macs, e.macs);
        cost.operations = saturating_add(
            cost.operations,
            saturating_add(saturating_mul(e.points, 1 + (e.macs > 0 ? 1 : 0)), e.flops.total()));
      }
    } else {
      for (TensorId t : n.outputs)
        cost.operations =
            saturating_add(cost.operations, graph.tensors[static_cast<size_t>(t)].elements());
    }
  }
  return cost;
}

std::vector<Array> execute(const Program& program, const Graph& graph,
                           const std::vector<Array>& inputs, const ExecOptions& options,
                           ExecReport* report) {
  ExecReport local_report;
  ExecReport& r = report ? *report : local_report;
  r = ExecReport{};
  r.backend = options.backend;
  std::optional<NativeSession> own;  // without the caller's: one for this execution
  NativeSession* session = options.session ? options.session : &own.emplace();
  return GraphRun(program, graph, options, *session, r).run(inputs);
}

}  // namespace solar
