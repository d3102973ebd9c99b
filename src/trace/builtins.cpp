// Composition-layer builtins: shape rules and traffic rules of data-movement nodes
// (docs/ir.md, "Builtins"). Views (reshape, slice, select, split, broadcast, unfold,
// permute_view) move nothing; copies read their inputs and write their output once.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>

#include "solar/base/checked.h"
#include "solar/graph/attrs.h"
#include "solar/graph/ops.h"
#include "solar/ir/printer.h"
#include "trace_context.h"

namespace solar::detail {
namespace {

class BuiltinCall {
 public:
  BuiltinCall(TraceContext& ctx, Builtin op, const std::string& name, const CallArgs& args, Loc loc)
      : ctx_(ctx), op_(op), name_(name), args_(args), loc_(loc) {}

  [[noreturn]] void fail(const std::string& msg, const std::string& hint = "") const {
    ctx_.fail(ErrorKind::kShape, loc_, name_ + "(): " + msg, hint);
  }

  const Value* kw(const std::string& key) const {
    for (const auto& [k, v] : args_.keywords)
      if (k == key) return &v;
    return nullptr;
  }
  // Positional argument i, or keyword `key`.
  const Value* arg(size_t i, const std::string& key) const {
    if (i < args_.positional.size()) return &args_.positional[i];
    return kw(key);
  }
  const Value& need(size_t i, const std::string& key) const {
    const Value* v = arg(i, key);
    if (!v) {
      ctx_.fail(ErrorKind::kCallArity, loc_, name_ + "() is missing argument '" + key + "'");
    }
    return *v;
  }
  TensorId tensor(size_t i, const std::string& key) const {
    const Value& v = need(i, key);
    if (v.kind != Value::Kind::kTensor) {
      ctx_.fail(
          ErrorKind::kType, loc_,
          name_ + "(): argument '" + key + "' must be a tensor, got " + value_kind_name(v.kind));
    }
    return v.tensor;
  }
  int64_t integer(size_t i, const std::string& key, int64_t fallback, bool required) const {
    const Value* v = arg(i, key);
    if (!v || v->kind == Value::Kind::kNone) {
      if (required) need(i, key);
      return fallback;
    }
    if (v->kind != Value::Kind::kInt) {
      ctx_.fail(ErrorKind::kType, loc_,
                name_ + "(): '" + key + "' must be an integer, got " + value_kind_name(v->kind));
    }
    return v->i;
  }
  std::string string(size_t i, const std::string& key) const {
    const Value& v = need(i, key);
    if (v.kind != Value::Kind::kStr) {
      ctx_.fail(ErrorKind::kType, loc_,
                name_ + "(): '" + key + "' must be a string, got " + value_kind_name(v.kind));
    }
    return v.s;
  }
  void no_extra_keywords(std::initializer_list<const char*> allowed, bool dim_sizes) const {
    for (const auto& [k, v] : args_.keywords) {
      bool ok = dim_sizes && v.kind == Value::Kind::kInt;
      for (const char* a : allowed) ok = ok || k == a;
      if (!ok) {
        ctx_.fail(ErrorKind::kCallArity, loc_, name_ + "() has no parameter named '" + k + "'");
      }
    }
  }

  // Resolves dim= (a name of x's dims, or an integer axis).
  size_t axis(const TensorInfo& t, size_t i, const std::string& key = "dim") const {
    const Value& v = need(i, key);
    if (v.kind == Value::Kind::kStr) {
      auto it = std::find(t.dims.begin(), t.dims.end(), v.s);
      if (it == t.dims.end()) {
        fail("tensor '" + t.name + "' has no dim '" + v.s + "'", "its dims are " + dims_text(t));
      }
      return static_cast<size_t>(it - t.dims.begin());
    }
    if (v.kind == Value::Kind::kInt) {
      int64_t a = v.i;
      const int64_t rank = static_cast<int64_t>(t.dims.size());
      if (a < 0) a += rank;
      if (a < 0 || a >= rank) {
        fail("axis " + std::to_string(v.i) + " out of range for '" + t.name + "' " + dims_text(t));
      }
      return static_cast<size_t>(a);
    }
    ctx_.fail(ErrorKind::kType, loc_, name_ + "(): dim must be a dim name or an integer axis");
  }

  static std::string dims_text(const TensorInfo& t) {
    std::string s = "(";
    for (size_t i = 0; i < t.dims.size(); ++i)
      s += (i ? ", " : "") + t.dims[i] + "=" + std::to_string(t.shape[i]);
    return s + ")";
  }

  static DimNames split_dims(const std::string& spec) {
    DimNames out;
    std::string cur;
    for (char c : spec) {
      if (c == ' ') continue;
      if (c == ',') {
        out.push_back(cur);
        cur.clear();
      } else {
        cur += c;
      }
    }
    if (!cur.empty() || !out.empty()) out.push_back(cur);
    return out;
  }

  // Sizes of new dims from keywords, else from a same-named dim of `like`.
  Shape sizes_for(const DimNames& dims, const TensorInfo* like, bool allow_infer,
                  int64_t elements) const {
    Shape shape(dims.size(), -1);
    for (size_t i = 0; i < dims.size(); ++i) {
      if (const Value* v = kw(dims[i])) {
        if (v->kind != Value::Kind::kInt || v->i <= 0) {
          fail("size of dim '" + dims[i] + "' must be a positive integer");
        }
        shape[i] = v->i;
      } else if (like) {
        auto it = std::find(like->dims.begin(), like->dims.end(), dims[i]);
        if (it != like->dims.end())
          shape[i] = like->shape[static_cast<size_t>(it - like->dims.begin())];
      }
    }
    const auto unknown = std::count(shape.begin(), shape.end(), -1);
    if (unknown == 1 && allow_infer) {
      int64_t known = 1;
      for (int64_t n : shape)
        if (n > 0) known = saturating_mul(known, n);  // above `elements`: no size divides
      auto it = std::find(shape.begin(), shape.end(), -1);
      if (known == 0 || elements % known != 0) {
        fail("cannot infer the size of dim '" + dims[static_cast<size_t>(it - shape.begin())] +
             "': " + std::to_string(elements) + " elements do not divide by " +
             std::to_string(known));
      }
      *it = elements / known;
    } else if (unknown > 0) {
      auto it = std::find(shape.begin(), shape.end(), -1);
      const std::string& d = dims[static_cast<size_t>(it - shape.begin())];
      fail("no size for new dim '" + d + "'", "pass it as a keyword: " + d + "=...");
    }
    return shape;
  }

  TensorId new_tensor(const std::string& label, DimNames dims, Shape shape, DType dtype,
                      TensorId view_of = -1, double sparsity = 0.0) {
    TensorInfo t;
    t.name = label;
    t.dims = ctx_.intern_dims(std::move(dims));
    t.shape = std::move(shape);
    t.dtype = dtype;
    t.sparsity = sparsity;
    t.storage = view_of >= 0 ? ctx_.tensor(view_of).storage : -1;
    return ctx_.add_tensor(std::move(t), loc_);
  }

  // Whether this builtin's outputs always alias its input (graph/ops.def).
  bool view() const { return builtin_info(op_).view; }

  // Adds the node; `copy` nodes read `read_bytes` per input and write their outputs.
  Value finish(TensorIds inputs, InputBytes read_bytes,
               const std::vector<std::pair<DimNames, Shape>>& outs, DType dtype, bool is_view,
               double sparsity = 0.0) {
    Node& node = ctx_.add_node(name_, NodeKind::kDataMovement, loc_, inputs);
    const NodeId id = node.id;
    const std::string node_name = node.name;
    std::vector<TensorId> outputs;
    for (size_t i = 0; i < outs.size(); ++i) {
      const std::string label = node_name + (outs.size() > 1 ? ".out" + std::to_string(i) : ".out");
      outputs.push_back(new_tensor(label, outs[i].first, outs[i].second,
                                   i < out_dtypes_.size() ? out_dtypes_[i] : dtype,
                                   is_view ? inputs.front() : -1, sparsity));
    }
    Node& n = ctx_.graph().nodes[static_cast<size_t>(id)];
    n.builtin = op_;
    n.attrs = std::move(attrs_);
    n.value = value_;
    n.flops = flops_;
    if (!is_view || inplace_written_ >= 0) n.input_bytes = std::move(read_bytes);
    ctx_.finish_node(n, outputs, /*writes_outputs=*/!is_view);
    if (inplace_written_ >= 0) n.bytes_written = inplace_written_;  // update: in place
    if (outputs.size() == 1 && op_ != Builtin::kSplit) return Value::of_tensor(outputs[0]);
    std::vector<Value> items;
    for (TensorId t : outputs) items.push_back(Value::of_tensor(t));
    return Value::of_seq(Value::Kind::kTuple, std::move(items));
  }

  TensorIds tensor_list(size_t i, const std::string& key) const {
    const Value& v = need(i, key);
    if (!v.is_seq() || v.items.empty()) {
      ctx_.fail(ErrorKind::kType, loc_,
                name_ + "(): '" + key + "' must be a non-empty list of tensors");
    }
    TensorIds out;
    for (const Value& item : v.items) {
      if (item.kind != Value::Kind::kTensor) {
        ctx_.fail(ErrorKind::kType, loc_, name_ + "(): '" + key + "' must hold only tensors");
      }
      out.push_back(item.tensor);
    }
    return out;
  }

  Value run() {
    switch (op_) {
      case Builtin::kReshape:
        return reshape();
      case Builtin::kPermute:
      case Builtin::kPermuteView:
        return permute();
      case Builtin::kSlice:
        return slice();
      case Builtin::kSelect:
        return select();
      case Builtin::kUnfold:
        return unfold();
      case Builtin::kSplit:
        return split();
      case Builtin::kConcat:
      case Builtin::kStack:
        return concat();
      case Builtin::kPad:
        return pad();
      case Builtin::kBroadcast:
        return broadcast();
      case Builtin::kGather:
        return gather();
      case Builtin::kTopk:
        return topk();
      case Builtin::kScatter:
      case Builtin::kScatterAdd:
        return scatter();
      case Builtin::kUpdate:
        return update();
      case Builtin::kApplyMask:
        return apply_mask();
      case Builtin::kCast:
        return cast();
      case Builtin::kBitcast:
        return bitcast();
      case Builtin::kConstant:
      case Builtin::kIota:
        return constant();
      case Builtin::kFft:
        return fft();
      case Builtin::kNone:
        break;
    }
    throw InternalError("builtin call without a builtin: '" + name_ + "'");
  }

  Value reshape() {
    const TensorId x = tensor(0, "x");
    const TensorInfo& t = ctx_.tensor(x);
    no_extra_keywords({"x", "dims"}, true);
    const auto dims = split_dims(string(1, "dims"));
    auto shape = sizes_for(dims, &t, /*allow_infer=*/true, t.elements());
    std::optional<int64_t> n = 1;
    for (int64_t size : shape) n = n ? checked_mul(*n, size) : n;
    if (n != t.elements()) {
      std::string s;
      for (size_t i = 0; i < dims.size(); ++i)
        s += (i ? ", " : "") + dims[i] + "=" + std::to_string(shape[i]);
      fail("cannot reshape '" + t.name + "' " + dims_text(t) + " (" + std::to_string(t.elements()) +
           " elements) to (" + s + ") (" +
           (n ? std::to_string(*n) : std::string("more than 2^63 - 1")) + " elements)");
    }
    return finish({x}, {0}, {{dims, shape}}, t.dtype, view(), t.sparsity);
  }

  Value permute() {
    const TensorId x = tensor(0, "x");
    const TensorInfo& t = ctx_.tensor(x);
    const Value& spec = need(1, "dims");
    std::vector<size_t> order;
    if (spec.kind == Value::Kind::kStr) {
      for (const auto& d : split_dims(spec.s)) {
        auto it = std::find(t.dims.begin(), t.dims.end(), d);
        if (it == t.dims.end()) fail("'" + t.name + "' has no dim '" + d + "'", dims_text(t));
        order.push_back(static_cast<size_t>(it - t.dims.begin()));
      }
    } else if (spec.is_seq()) {
      for (const Value& v : spec.items) {
        if (v.kind != Value::Kind::kInt || v.i < 0 || v.i >= static_cast<int64_t>(t.dims.size()))
          fail("permutation entries are axes of '" + t.name + "'");
        order.push_back(static_cast<size_t>(v.i));
      }
    }
    std::vector<size_t> sorted = order;
    std::sort(sorted.begin(), sorted.end());
    bool is_perm = sorted.size() == t.dims.size();
    for (size_t i = 0; is_perm && i < sorted.size(); ++i) is_perm = sorted[i] == i;
    if (!is_perm) fail("dims must be a permutation of " + dims_text(t));
    DimNames dims;
    Shape shape;
    bool identity = true;
    for (size_t i = 0; i < order.size(); ++i) {
      dims.push_back(t.dims[order[i]]);
      shape.push_back(t.shape[order[i]]);
      identity = identity && order[i] == i;
    }
    const std::vector<int64_t> from(order.begin(), order.end());
    attrs_ = DimMapAttrs{from}.flat();
    // permute_view: the same tensor with permuted strides (a front end's view of PyTorch's
    // permute/transpose returned as it is); permute copies.
    return finish({x}, {ctx_.read_bytes(x)}, {{dims, shape}}, t.dtype, identity || view(),
                  t.sparsity);
  }

  Value slice() {
    const TensorId x = tensor(0, "x");
    const TensorInfo& t = ctx_.tensor(x);
    no_extra_keywords({"x", "dim", "start", "stop", "step"}, false);
    const size_t a = axis(t, 1);
    const int64_t n = t.shape[a];
    int64_t start = integer(2, "start", 0, false);
    int64_t stop = integer(3, "stop", n, false);
    const int64_t step = integer(4, "step", 1, false);
    if (step <= 0) fail("step must be positive, got " + std::to_string(step));
    if (start < 0) start += n;
    if (stop < 0) stop += n;
    start = std::clamp<int64_t>(start, 0, n);
    stop = std::clamp<int64_t>(stop, 0, n);
    const int64_t len = stop > start ? (stop - start - 1) / step + 1 : 0;
    if (len == 0) fail("the slice of dim '" + t.dims[a] + "' is empty");
    auto shape = t.shape;
    shape[a] = len;
    attrs_ = SliceAttrs{a, start, step}.flat();
    return finish({x}, {0}, {{t.dims, shape}}, t.dtype, view(), t.sparsity);
  }

  Value select() {
    const TensorId x = tensor(0, "x");
    const TensorInfo& t = ctx_.tensor(x);
    no_extra_keywords({"x", "dim", "index"}, false);
    const size_t a = axis(t, 1);
    int64_t index = integer(2, "index", 0, true);
    if (index < 0) index += t.shape[a];
    if (index < 0 || index >= t.shape[a]) {
      fail("index " + std::to_string(index) + " out of range for dim '" + t.dims[a] + "' of size " +
           std::to_string(t.shape[a]));
    }
    DimNames dims = t.dims;
    auto shape = t.shape;
    dims.erase(dims.begin() + static_cast<std::ptrdiff_t>(a));
    shape.erase(shape.begin() + static_cast<std::ptrdiff_t>(a));
    attrs_ = SelectAttrs{a, index}.flat();
    return finish({x}, {0}, {{dims, shape}}, t.dtype, view(), t.sparsity);
  }

  // Sliding windows along `dim` (torch.Tensor.unfold): `dim` keeps its name and counts the
  // windows, (n - size) / step + 1; a new last dim `window` (default "W") runs over the `size`
  // elements of a window. A view: overlapping windows share the elements of x.
  Value unfold() {
    const TensorId x = tensor(0, "x");
    const TensorInfo& t = ctx_.tensor(x);
    no_extra_keywords({"x", "dim", "size", "step", "window"}, false);
    const size_t a = axis(t, 1);
    const int64_t size = integer(2, "size", 0, true);
    const int64_t step = integer(3, "step", 1, false);
    std::string window = "W";
    if (arg(4, "window")) window = string(4, "window");
    if (size <= 0 || step <= 0) {
      fail("size and step must be positive, got size=" + std::to_string(size) +
           ", step=" + std::to_string(step));
    }
    if (size > t.shape[a]) {
      fail("window size " + std::to_string(size) + " exceeds dim '" + t.dims[a] + "' of size " +
           std::to_string(t.shape[a]));
    }
    if (std::find(t.dims.begin(), t.dims.end(), window) != t.dims.end()) {
      fail("'" + t.name + "' already has a dim '" + window + "'",
           "name the window dim with window=\"...\"");
    }
    DimNames dims = t.dims;
    auto shape = t.shape;
    shape[a] = (t.shape[a] - size) / step + 1;
    dims.push_back(window);
    shape.push_back(size);
    attrs_ = UnfoldAttrs{a, step}.flat();
    return finish({x}, {0}, {{dims, shape}}, t.dtype, view(), t.sparsity);
  }

  Value split() {
    const TensorId x = tensor(0, "x");
    const TensorInfo& t = ctx_.tensor(x);
    const size_t a = axis(t, 1);
    const Value& sizes = need(2, "sizes");
    std::vector<int64_t> parts;
    if (sizes.kind == Value::Kind::kInt) {
      if (sizes.i <= 0) fail("chunk size must be positive");
      const int64_t chunks = (t.shape[a] - 1) / sizes.i + 1;
      ctx_.check_values(chunks, loc_);  // one tensor per chunk
      for (int64_t c = 0; c < chunks; ++c)
        parts.push_back(std::min(sizes.i, t.shape[a] - c * sizes.i));
    } else if (sizes.is_seq()) {
      for (const Value& v : sizes.items) {
        if (v.kind != Value::Kind::kInt || v.i <= 0) fail("sizes must be positive integers");
        parts.push_back(v.i);
      }
    }
    int64_t total = 0;
    for (int64_t p : parts) total = saturating_add(total, p);
    if (total != t.shape[a]) {
      fail("sizes add up to " +
           (total == kMaxCount ? std::string("more than 2^63 - 1") : std::to_string(total)) +
           " but dim '" + t.dims[a] + "' has size " + std::to_string(t.shape[a]));
    }
    std::vector<std::pair<DimNames, Shape>> outs;
    SplitAttrs split{a, {}};
    int64_t offset = 0;
    for (int64_t p : parts) {
      auto shape = t.shape;
      shape[a] = p;
      outs.push_back({t.dims, shape});
      split.offsets.push_back(offset);
      offset += p;
    }
    attrs_ = split.flat();
    return finish({x}, {0}, outs, t.dtype, view(), t.sparsity);
  }

  Value concat() {
    const auto xs = tensor_list(0, "tensors");
    const TensorInfo& first = ctx_.tensor(xs[0]);
    // One output dtype: the inputs must agree (no implicit promotion; the copy is bytewise).
    for (TensorId x : xs) {
      const TensorInfo& t = ctx_.tensor(x);
      if (t.dtype != first.dtype) {
        ctx_.fail(ErrorKind::kType, loc_,
                  name_ + "(): the tensors must have one dtype, but '" + first.name + "' is " +
                      dtype_name(first.dtype) + " and '" + t.name + "' is " + dtype_name(t.dtype),
                  std::string("cast them to one dtype first: cast(") + t.name + ", \"" +
                      dtype_name(first.dtype) + "\")");
      }
    }
    DimNames dims = first.dims;
    Shape shape = first.shape;
    size_t a = 0;
    if (op_ == Builtin::kStack) {
      const Value* d = arg(1, "dim");
      const std::string new_dim = d && d->kind == Value::Kind::kStr ? d->s : "L";
      const int64_t at = integer(2, "axis", 0, false);
      if (at < 0 || at > static_cast<int64_t>(dims.size())) fail("axis out of range");
      a = static_cast<size_t>(at);
      dims.insert(dims.begin() + at, new_dim);
      shape.insert(shape.begin() + at, static_cast<int64_t>(xs.size()));
    } else {
      a = axis(first, 1);
      shape[a] = 0;
    }
    InputBytes reads;
    for (TensorId x : xs) {
      const TensorInfo& t = ctx_.tensor(x);
      bool same = t.shape.size() == first.shape.size();
      for (size_t i = 0; same && i < t.shape.size(); ++i)
        same = op_ == Builtin::kStack || i == a ? true : t.shape[i] == first.shape[i];
      if (op_ == Builtin::kStack) same = same && t.shape == first.shape;
      if (!same) {
        fail("shapes differ: '" + first.name + "' " + dims_text(first) + " and '" + t.name + "' " +
             dims_text(t));
      }
      if (op_ == Builtin::kConcat) {
        shape[a] = count_add(shape[a], t.shape[a], [&] {
          return count_overflow({ctx_.program().file, loc_, name_ + "()"},
                                "size of dim '" + dims[a] + "'");
        });
      }
      reads.push_back(ctx_.read_bytes(x));
    }
    attrs_ = AxisAttrs{a}.flat();
    return finish(xs, reads, {{dims, shape}}, first.dtype, view());
  }

  Value pad() {
    const TensorId x = tensor(0, "x");
    const TensorInfo& t = ctx_.tensor(x);
    no_extra_keywords({"x", "dim", "before", "after", "value"}, false);
    const size_t a = axis(t, 1);
    const int64_t before = integer(2, "before", 0, false);
    const int64_t after = integer(3, "after", 0, false);
    if (before < 0 || after < 0) fail("padding must be non-negative");
    auto shape = t.shape;
    const std::optional<int64_t> grown = checked_add(shape[a], before);
    const std::optional<int64_t> size = grown ? checked_add(*grown, after) : grown;
    if (!size) {
      throw count_overflow({ctx_.program().file, loc_, "pad()"}, "size of dim '" + t.dims[a] + "'");
    }
    shape[a] = *size;
    attrs_ = PadAttrs{a, before, after}.flat();
    if (const Value* v = arg(4, "value")) {
      if (!v->is_number()) ctx_.fail(ErrorKind::kType, loc_, "pad(): value must be a number");
      value_ = v->as_double();
    }
    return finish({x}, {ctx_.read_bytes(x)}, {{t.dims, shape}}, t.dtype, view());
  }

  Value broadcast() {
    const TensorId x = tensor(0, "x");
    const TensorInfo& t = ctx_.tensor(x);
    no_extra_keywords({"x", "dims"}, true);
    const auto dims = split_dims(string(1, "dims"));
    // x's dims appear in the target in the same order; new dims and size-1 dims get sizes.
    size_t next = 0;
    for (const auto& d : t.dims) {
      auto it = std::find(dims.begin() + static_cast<std::ptrdiff_t>(next), dims.end(), d);
      if (it == dims.end()) {
        fail("dim '" + d + "' of '" + t.name + "' is missing from the target, or out of order",
             "broadcast keeps the input's dims in order and adds new ones");
      }
      next = static_cast<size_t>(it - dims.begin()) + 1;
    }
    auto shape = sizes_for(dims, &t, false, 0);
    for (size_t i = 0; i < t.dims.size(); ++i) {
      const size_t j =
          static_cast<size_t>(std::find(dims.begin(), dims.end(), t.dims[i]) - dims.begin());
      if (t.shape[i] != 1 && shape[j] != t.shape[i]) {
        fail("cannot broadcast dim '" + t.dims[i] + "' of size " + std::to_string(t.shape[i]) +
                 " to " + std::to_string(shape[j]),
             "only size-1 and new dims expand");
      }
    }
    std::vector<int64_t> from;
    for (const auto& d : dims) {
      auto it = std::find(t.dims.begin(), t.dims.end(), d);
      from.push_back(it == t.dims.end() ? -1 : static_cast<int64_t>(it - t.dims.begin()));
    }
    attrs_ = DimMapAttrs{from}.flat();
    return finish({x}, {0}, {{dims, shape}}, t.dtype, view(), t.sparsity);
  }

  // gather's and scatter's index: integer or bool values (positions).
  void integer_index(const TensorInfo& it) const {
    if (dtype_is_float(it.dtype)) {
      ctx_.fail(ErrorKind::kType, loc_,
                name_ + "(): index '" + it.name + "' must have an integer dtype, got " +
                    dtype_name(it.dtype));
    }
  }

  Value gather() {
    const TensorId table = tensor(0, "table");
    const TensorId index = tensor(1, "index");
    const TensorInfo& tt = ctx_.tensor(table);
    const TensorInfo& it = ctx_.tensor(index);
    const size_t a = axis(tt, 2);
    integer_index(it);
    DimNames dims = it.dims;
    Shape shape = it.shape;
    int64_t row_elements = 1;
    for (size_t i = 0; i < tt.dims.size(); ++i) {
      if (i == a) continue;
      dims.push_back(tt.dims[i]);
      shape.push_back(tt.shape[i]);
      row_elements *= tt.shape[i];  // at most the table's elements
    }
    // `distinct=`: the fewest distinct rows the index holds, when the program knows it (the
    // indices of a top-k); the bound then fetches only those (docs/ir.md, gather).
    const int64_t distinct = integer(3, "distinct", 0, false);
    const int64_t most = std::min(it.elements(), tt.shape[a]);
    if (arg(3, "distinct") && (distinct < 1 || distinct > most)) {
      fail("distinct = " + std::to_string(distinct) + " must be between 1 and " +
           std::to_string(most) + " (the index's elements and the table's rows along dim '" +
           tt.dims[a] + "', the fewer)");
    }
    const int64_t fetched = distinct > 0 ? distinct : it.elements();
    // The rows fetched, capped below at the table's bytes: "more than int64" is "all of it".
    const int64_t rows =
        checked_dtype_bytes(tt.dtype, saturating_mul(row_elements, fetched)).value_or(kMaxCount);
    attrs_ = GatherAttrs{a, distinct}.flat();
    return finish({table, index}, {std::min(rows, ctx_.read_bytes(table)), ctx_.read_bytes(index)},
                  {{dims, shape}}, tt.dtype, view());
  }

  // The k largest (or smallest) elements along `dim` and their positions (torch.topk):
  // values in x's dtype, indices int64, both with k along `dim`, sorted best first.
  Value topk() {
    const TensorId x = tensor(0, "x");
    const TensorInfo& t = ctx_.tensor(x);
    no_extra_keywords({"x", "k", "dim", "largest"}, false);
    const int64_t k = integer(1, "k", 0, true);
    const size_t a = axis(t, 2);
    const int64_t largest = integer(3, "largest", 1, false);
    if (k < 1 || k > t.shape[a]) {
      fail("k = " + std::to_string(k) + " must be between 1 and the size of dim '" + t.dims[a] +
           "' (" + std::to_string(t.shape[a]) + ")");
    }
    if (largest != 0 && largest != 1) fail("largest must be 0 or 1");
    auto shape = t.shape;
    shape[a] = k;
    attrs_ = TopkAttrs{a, k, largest != 0}.flat();
    out_dtypes_ = {t.dtype, DType::kInt64};
    return finish({x}, {ctx_.read_bytes(x)}, {{t.dims, shape}, {t.dims, shape}}, t.dtype, view());
  }

  // torch.scatter along `dim`: a copy of base in which element p of index (p along `dim`
  // replaced by index[p]) takes src[p]. index and src have base's shape except along `dim`.
  // Reads src, index and the base elements no index overwrites (at least base minus index
  // elements: duplicates overwrite fewer); writes the output.
  // scatter: element p of src overwrites the base element index[p] points at; scatter_add:
  // adds to it (torch.scatter_add: every src element is added, duplicates included).
  Value scatter() {
    const bool add = op_ == Builtin::kScatterAdd;
    const TensorId base = tensor(0, "base");
    const TensorId index = tensor(1, "index");
    const TensorId src = tensor(2, "src");
    no_extra_keywords({"base", "index", "src", "dim", "inplace"}, false);
    const TensorInfo& bt = ctx_.tensor(base);
    const TensorInfo& it = ctx_.tensor(index);
    const TensorInfo& st = ctx_.tensor(src);
    const size_t a = axis(bt, 3);
    const int64_t inplace = integer(4, "inplace", 0, false);
    if (inplace != 0 && inplace != 1) fail("inplace must be 0 or 1");
    integer_index(it);
    if (add && bt.dtype == DType::kBool) {
      ctx_.fail(ErrorKind::kType, loc_,
                "scatter_add(): base '" + bt.name + "' is bool, which has no addition",
                "cast it to an integer or float dtype first");
    }
    if (st.dtype != bt.dtype) {
      ctx_.fail(ErrorKind::kType, loc_,
                name_ + "(): src '" + st.name + "' is " + dtype_name(st.dtype) + " but base '" +
                    bt.name + "' is " + dtype_name(bt.dtype),
                "cast src to the base's dtype first");
    }
    bool same = it.shape.size() == bt.shape.size() && st.shape == it.shape;
    for (size_t d = 0; same && d < bt.shape.size(); ++d)
      same = d == a || it.shape[d] == bt.shape[d];
    if (!same) {
      fail("index " + dims_text(it) + " and src " + dims_text(st) + " must have base's shape " +
           dims_text(bt) + " except along dim '" + bt.dims[a] + "'");
    }
    // scatter reads the base elements no index overwrites (at least base minus index
    // elements: duplicates overwrite fewer); scatter_add reads every base element (each is
    // copied or added to) and adds each src element once.
    // In place (`inplace=1`: into base's memory, as index_put_ / index_copy_ run in eager
    // PyTorch): scatter reads nothing of base, scatter_add the elements it adds to (at most
    // one per index element), and each writes one element per index element.
    const int64_t kept =
        inplace ? (add ? std::min(it.elements(), bt.elements()) : 0)
                : (add ? bt.elements() : std::max<int64_t>(0, bt.elements() - it.elements()));
    const int64_t base_read =
        std::min(checked_dtype_bytes(bt.dtype, kept).value_or(kMaxCount), ctx_.read_bytes(base));
    if (add) flops_.add = it.elements();
    attrs_ = AxisAttrs{a, inplace != 0}.flat();
    if (inplace) {
      inplace_written_ =
          std::min(checked_dtype_bytes(bt.dtype, it.elements()).value_or(kMaxCount), bt.bytes());
    }
    return finish({base, index, src}, {base_read, ctx_.read_bytes(index), ctx_.read_bytes(src)},
                  {{bt.dims, bt.shape}}, bt.dtype, inplace != 0 || view());
  }

  // base with src written over elements start, start + step, ... of `dim` (torch's
  // slice_scatter), in place: the result shares base's memory, so the node reads src and
  // writes src's elements, as an in-place slice assignment (`cache[:, p] = k`) does in eager
  // PyTorch; it reads nothing of base (docs/ir.md, update).
  Value update() {
    const TensorId base = tensor(0, "base");
    const TensorId src = tensor(1, "src");
    no_extra_keywords({"base", "src", "dim", "start", "step"}, false);
    const TensorInfo& bt = ctx_.tensor(base);
    const TensorInfo& st = ctx_.tensor(src);
    const size_t a = axis(bt, 2);
    const int64_t start = integer(3, "start", 0, false);
    const int64_t step = integer(4, "step", 1, false);
    if (st.dtype != bt.dtype) {
      ctx_.fail(ErrorKind::kType, loc_,
                "update(): src '" + st.name + "' is " + dtype_name(st.dtype) + " but base '" +
                    bt.name + "' is " + dtype_name(bt.dtype),
                "cast src to the base's dtype first");
    }
    bool same = st.shape.size() == bt.shape.size();
    for (size_t d = 0; same && d < bt.shape.size(); ++d)
      same = d == a || st.shape[d] == bt.shape[d];
    if (!same) {
      fail("src " + dims_text(st) + " must have base's shape " + dims_text(bt) +
           " except along dim '" + bt.dims[a] + "'");
    }
    const int64_t n = st.shape[a];
    if (step < 1) fail("step must be at least 1");
    // The last element written, start + step (n - 1), must lie in base (no overflow: n and
    // the sizes are at most 2^63 - 1, checked as a product).
    const std::optional<int64_t> last =
        n == 0 ? std::optional<int64_t>(start) : checked_mul(step, n - 1);
    if (start < 0 || start > bt.shape[a] || !last || (n > 0 && (*last > bt.shape[a] - 1 - start))) {
      fail("src's " + std::to_string(n) + " elements along dim '" + bt.dims[a] + "' from " +
           std::to_string(start) + " in steps of " + std::to_string(step) +
           " do not fit in base's " + std::to_string(bt.shape[a]));
    }
    // Writing back base's own elements at the same place (functionalisation's write-back of
    // `y[:, 1:3] += 1`, whose add already updated y) changes nothing: the result is base.
    const TensorInfo& sv = ctx_.tensor(src);
    if (sv.producer != kNoNode) {
      const Node& p = ctx_.graph().nodes[static_cast<size_t>(sv.producer)];
      if (p.builtin == Builtin::kSlice && p.inputs.at(0) == base) {
        const SliceAttrs s = SliceAttrs::of(p);
        if (s.axis == a && s.start == start && s.step == step) return Value::of_tensor(base);
      }
    }
    attrs_ = SliceAttrs{a, start, step}.flat();
    inplace_written_ = checked_dtype_bytes(bt.dtype, st.elements()).value_or(kMaxCount);
    return finish({base, src}, {0, ctx_.read_bytes(src)}, {{bt.dims, bt.shape}}, bt.dtype, true,
                  bt.sparsity);
  }

  Value apply_mask() {
    const TensorId x = tensor(0, "x");
    const TensorId m = tensor(1, "mask");
    const TensorInfo& t = ctx_.tensor(x);
    const TensorInfo& mt = ctx_.tensor(m);
    if (t.shape != mt.shape) {
      fail("mask shape " + dims_text(mt) + " differs from '" + t.name + "' " + dims_text(t));
    }
    const double s = 1.0 - (1.0 - t.sparsity) * (1.0 - mt.sparsity);
    return finish({x, m}, {ctx_.read_bytes(x), ctx_.read_bytes(m)}, {{t.dims, t.shape}}, t.dtype,
                  view(), s);
  }

  Value cast() {
    const TensorId x = tensor(0, "x");
    const TensorInfo& t = ctx_.tensor(x);
    const std::string d = string(1, "dtype");
    auto dtype = parse_dtype(d);
    if (!dtype) {
      ctx_.fail(ErrorKind::kUnknownDtype, loc_, "cast(): unknown dtype \"" + d + "\"",
                "use one of: " + all_dtype_names());
    }
    return finish({x}, {ctx_.read_bytes(x)}, {{t.dims, t.shape}}, *dtype, view());
  }

  // The bytes of x read as another dtype (PyTorch's `view(dtype)`): a view. Between dtypes
  // of different sizes the last dim's size scales by the ratio (4 uint8 are 1 int32).
  Value bitcast() {
    const TensorId x = tensor(0, "x");
    const TensorInfo& t = ctx_.tensor(x);
    no_extra_keywords({"x", "dtype"}, false);
    const std::string d = string(1, "dtype");
    auto dtype = parse_dtype(d);
    if (!dtype) {
      ctx_.fail(ErrorKind::kUnknownDtype, loc_, "bitcast(): unknown dtype \"" + d + "\"",
                "use one of: " + all_dtype_names());
    }
    // Sub-byte and tf32 values have no storage of their own bits (one nvfp4 or int4 value per
    // byte, tf32 in fp32's), and a byte other than 0 or 1 is no bool. The exception is packed
    // FP4: a uint8 byte holds two nvfp4 codes, the first in its low nibble (PyTorch's
    // float4_e2m1fn_x2, the OCP MX and NVFP4 packing), and the two read each other's bytes.
    auto stored_as_is = [](DType dt) {
      return dt != DType::kTf32 && dt != DType::kNvfp4 && dt != DType::kInt4;
    };
    const bool packed_fp4 = (t.dtype == DType::kUint8 && *dtype == DType::kNvfp4) ||
                            (t.dtype == DType::kNvfp4 && *dtype == DType::kUint8);
    if (!packed_fp4 &&
        (!stored_as_is(t.dtype) || !stored_as_is(*dtype) || *dtype == DType::kBool)) {
      ctx_.fail(ErrorKind::kType, loc_,
                "bitcast(): cannot reinterpret " + std::string(dtype_name(t.dtype)) + " as " +
                    dtype_name(*dtype),
                "bitcast reads whole bytes as fp64, fp32, bf16, fp16, fp8_e4m3, fp8_e5m2 or an "
                "integer dtype (and bool as bytes), and uint8 bytes as two nvfp4 codes each; use "
                "cast() to convert values");
    }
    Shape shape = t.shape;
    const int from = dtype_bits(t.dtype), to = dtype_bits(*dtype);
    if (from != to) {
      // Whole bytes (or a byte and a nibble): the sizes are 4, 8, 16, 32 or 64 bits, so one
      // divides the other.
      const int64_t last = shape.empty() ? 0 : shape.back();
      if (shape.empty() || (from < to && last % (to / from) != 0)) {
        fail("cannot reinterpret '" + t.name + "' " + dims_text(t) + " of " + dtype_name(t.dtype) +
                 " as " + dtype_name(*dtype) +
                 (shape.empty() ? std::string(": it has no dims")
                                : ": its last dim holds " + std::to_string(last) +
                                      " elements, not a multiple of " + std::to_string(to / from)),
             "bitcast between dtypes of different sizes groups or splits the last dim's elements");
      }
      // Splitting multiplies the last size; the bytes, and so the new count of bytes, fit.
      shape.back() = from < to ? last / (to / from) : last * (from / to);
    }
    return finish({x}, {0}, {{t.dims, shape}}, *dtype, view());
  }

  Value constant() {
    const size_t spec_pos = op_ == Builtin::kConstant ? 1 : 0;
    const auto dims = split_dims(string(spec_pos, "dims"));
    auto shape = sizes_for(dims, nullptr, false, 0);
    DType dtype = op_ == Builtin::kIota ? DType::kInt64 : DType::kFp32;
    if (const Value* d = kw("dtype")) {
      auto parsed = d->kind == Value::Kind::kStr ? parse_dtype(d->s) : std::nullopt;
      if (!parsed) {
        ctx_.fail(ErrorKind::kUnknownDtype, loc_, name_ + "(): unknown dtype",
                  "use one of: " + all_dtype_names());
      }
      dtype = *parsed;
    }
    if (op_ == Builtin::kIota && dims.size() != 1)
      fail("iota makes a 1-D tensor: iota(\"S\", S=128)");
    if (op_ == Builtin::kConstant) {
      const Value& v = need(0, "value");
      if (!v.is_number()) ctx_.fail(ErrorKind::kType, loc_, "constant(): value must be a number");
      value_ = v.as_double();
    }
    return finish({}, {}, {{dims, shape}}, dtype, view());
  }

  // A discrete Fourier transform along `dim` (torch.fft's _fft_r2c, _fft_c2r, _fft_c2c over
  // one dim): complex values are pairs of reals in a last dim of size 2. r2c: x real, the
  // transform as long as x's dim, its n/2 + 1 lowest bins (`onesided=0`: all n); c2r: the n
  // real values (`n=`) of a one-sided spectrum of n/2 + 1 bins; c2c: the same length,
  // `inverse=1` for the positive exponent. Every output is multiplied by `scale`. Reads x,
  // writes the output, and does fft_flops per transform (vector work: docs/sol-modes.md).
  Value fft() {
    const TensorId x = tensor(0, "x");
    const TensorInfo& t = ctx_.tensor(x);
    no_extra_keywords({"x", "dim", "kind", "n", "inverse", "onesided", "scale"}, false);
    const std::string kind = string(2, "kind");
    FftAttrs at;
    if (kind == "r2c") {
      at.kind = FftKind::kR2c;
    } else if (kind == "c2r") {
      at.kind = FftKind::kC2r;
    } else if (kind == "c2c") {
      at.kind = FftKind::kC2c;
    } else {
      fail("kind \"" + kind + "\" is none of \"r2c\", \"c2r\", \"c2c\"");
    }
    if (t.dtype != DType::kFp32 && t.dtype != DType::kFp64) {
      ctx_.fail(ErrorKind::kType, loc_,
                "fft(): '" + t.name + "' is " + dtype_name(t.dtype) + "; fft takes fp32 or fp64",
                "cast it first");
    }
    at.axis = axis(t, 1);
    const bool pairs = at.kind != FftKind::kR2c;
    if (pairs && (t.shape.empty() || t.shape.back() != 2 || at.axis + 1 == t.shape.size())) {
      fail(
          "a complex input holds (real, imaginary) pairs in a last dim of size 2, and the "
          "transform runs along another dim; '" +
          t.name + "' is " + dims_text(t));
    }
    const int64_t length = t.shape[at.axis];
    const int64_t inverse = integer(4, "inverse", at.kind == FftKind::kC2r ? 1 : 0, false);
    const int64_t onesided = integer(5, "onesided", 1, false);
    if ((inverse != 0 && inverse != 1) || (onesided != 0 && onesided != 1))
      fail("inverse and onesided must be 0 or 1");
    at.inverse = inverse != 0;
    at.onesided = onesided != 0;
    if (at.kind == FftKind::kR2c && at.inverse) fail("an r2c transform is a forward one");
    if (at.kind == FftKind::kC2r && !at.inverse) fail("a c2r transform is an inverse one");
    at.n = at.kind == FftKind::kC2r ? integer(3, "n", 0, true) : length;
    if (at.kind != FftKind::kC2r && arg(3, "n") && integer(3, "n", 0, false) != length)
      fail("n must be the length of dim '" + t.dims[at.axis] + "' (" + std::to_string(length) +
           "): pad or slice x first");
    if (at.kind == FftKind::kC2r && (at.n < 1 || at.n / 2 + 1 != length)) {
      fail("a c2r transform of n = " + std::to_string(at.n) + " reads n/2 + 1 bins, but dim '" +
           t.dims[at.axis] + "' holds " + std::to_string(length));
    }
    if (at.n < 1) fail("dim '" + t.dims[at.axis] + "' is empty");
    at.scale = 1.0;
    if (const Value* v = arg(6, "scale")) {
      if (!v->is_number() || !std::isfinite(v->as_double())) fail("scale must be a finite number");
      at.scale = v->as_double();
    }
    DimNames dims = t.dims;
    Shape shape = t.shape;
    if (at.kind == FftKind::kR2c) {
      shape[at.axis] = at.onesided ? at.n / 2 + 1 : at.n;
      dims.push_back("ri");
      shape.push_back(2);
    } else if (at.kind == FftKind::kC2r) {
      shape[at.axis] = at.n;
      dims.pop_back();
      shape.pop_back();
    }
    const int64_t transforms = t.elements() / (length * (pairs ? 2 : 1));
    flops_.add = saturating_mul(transforms, fft_flops(at.n, at.kind != FftKind::kC2c));
    value_ = at.scale;
    attrs_ = at.flat();
    return finish({x}, {ctx_.read_bytes(x)}, {{dims, shape}}, t.dtype, view());
  }

 private:
  TraceContext& ctx_;
  Builtin op_;
  const std::string& name_;
  const CallArgs& args_;
  Loc loc_;
  NodeAttrs attrs_;               // execution attributes of the node (graph.h, Node::attrs)
  int64_t inplace_written_ = -1;  // update: the bytes it writes into base's memory
  FlopCounts flops_;  // its arithmetic (scatter_add's adds, fft's; the other builtins do none)
  double value_ = 0.0;
  std::vector<DType> out_dtypes_;  // per output, where they differ (topk: values, int64 indices)
};

}  // namespace

Value call_graph_builtin(TraceContext& ctx, const std::string& name, const CallArgs& args,
                         Loc loc) {
  const std::optional<Builtin> op = find_builtin(name);
  if (!op) ctx.fail(ErrorKind::kUnknownBuiltin, loc, "unknown function '" + name + "'");
  return BuiltinCall(ctx, *op, name, args, loc).run();
}

}  // namespace solar::detail
