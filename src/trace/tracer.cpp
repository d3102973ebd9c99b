// Tracer: evaluates the composition layer (model() and helpers) over shapes.
#include "solar/trace/tracer.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string_view>
#include <unordered_map>

#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"
#include "solar/base/checked.h"
#include "solar/einsum/lift.h"
#include "solar/ir/printer.h"
#include "solar/ir/static_eval.h"
#include "solar/sol/traffic.h"
#include "trace_context.h"

namespace solar {
namespace detail {

namespace {

// 1048576 -> "1,048,576".
std::string with_commas(int64_t n) {
  std::string digits = std::to_string(n);
  std::string out;
  const size_t first = digits[0] == '-' ? 1 : 0;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > first && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string shape_text(std::span<const int64_t> shape) {
  std::string s;
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? " x " : "") + std::to_string(shape[i]);
  return s.empty() ? "a scalar" : s;
}

// Approximate heap bytes of a tensor and of a node of the graph, for the memory cap.
// A tensor's dim names are shared (TraceContext::intern_dims): a trace holds a few lists.
int64_t approx_bytes(const TensorInfo& t) {
  return static_cast<int64_t>(sizeof(TensorInfo) + t.name.size() + 8 * t.shape.size());
}
int64_t approx_bytes(const Node& node) {
  return static_cast<int64_t>(sizeof(Node) + node.name.size() + node.op.size() +
                              12 * node.inputs.size() + 4 * node.outputs.size() +
                              4 * node.slot_tensors.size() + 8 * node.attrs.size() +
                              sizeof(Scalar) * node.scalar_args.size());
}

}  // namespace

TensorId TraceContext::add_tensor(TensorInfo info, Loc loc, bool is_parameter) {
  auto overflow = [&](const std::string& quantity) {
    const std::string subject =
        is_parameter ? "model() parameter '" + info.name + "'" : "tensor '" + info.name + "'";
    return count_overflow({program_.file, loc, subject}, quantity);
  };
  int64_t elements = 1;
  for (int64_t n : info.shape) {
    elements = count_mul(elements, n,
                         [&] { return overflow("elements (" + shape_text(info.shape) + ")"); });
  }
  if (!checked_dtype_bytes(info.dtype, elements)) {
    throw overflow("bytes (" + std::to_string(elements) + " elements of " + dtype_name(info.dtype) +
                   ")");
  }
  info.id = static_cast<TensorId>(graph_.tensors.size());
  if (info.storage < 0) info.storage = info.id;
  graph_.tensors.push_back(std::move(info));
  charge_graph_bytes(approx_bytes(graph_.tensors.back()), loc);
  return graph_.tensors.back().id;
}

SharedDims TraceContext::intern_dims(DimNames names) {
  auto it = interned_dims_.find(names);
  if (it != interned_dims_.end()) return it->second;
  SharedDims shared(std::make_shared<const DimNames>(names));
  interned_dims_.emplace(std::move(names), shared);
  return shared;
}

SharedDims TraceContext::dims_of(const KernelTensor& declared) {
  auto it = declared_dims_.find(&declared);
  if (it != declared_dims_.end()) return it->second;
  SharedDims shared = intern_dims(DimNames(declared.dims.begin(), declared.dims.end()));
  declared_dims_.emplace(&declared, shared);
  return shared;
}

std::string TraceContext::next_name(const std::string& op) {
  int& n = counters_[op];
  return op + "#" + std::to_string(n++);
}

Node& TraceContext::add_node(const std::string& op, NodeKind kind, Loc loc, TensorIds inputs) {
  if (static_cast<int64_t>(graph_.nodes.size()) >= limits_.max_nodes) {
    budget_error("builds more than " + with_commas(limits_.max_nodes) + " nodes", loc);
  }
  Node node;
  node.id = static_cast<NodeId>(graph_.nodes.size());
  node.name = next_name(op);
  node.op = op;
  node.kind = kind;
  node.loc = loc;
  node.inputs = std::move(inputs);
  node.input_bytes.assign(node.inputs.size(), 0);
  if (open_.active && open_.id < 0) {
    Unit unit;
    unit.id = static_cast<UnitId>(graph_.units.size());
    unit.name = open_.label + "#" + std::to_string(unit_counters_[open_.label]++);
    unit.label = open_.label;
    unit.loc = open_.loc;
    unit.declared = true;
    unit.fp32_math = open_.fp32_math;
    graph_.units.push_back(std::move(unit));
    open_.id = graph_.units.back().id;
  }
  if (open_.active) {
    node.unit = open_.id;
    node.fp32_math = open_.fp32_math;
    graph_.units[static_cast<size_t>(node.unit)].nodes.push_back(node.id);
  }
  graph_.nodes.push_back(std::move(node));
  return graph_.nodes.back();
}

void TraceContext::open_unit(const std::string& label, Loc loc, Fp32Math fp32_math) {
  if (open_.active) {
    fail(ErrorKind::kUnsupported, loc,
         "unit '" + label + "' opened inside unit '" + open_.label + "' (line " +
             std::to_string(open_.loc.line) + "): units do not nest",
         "a unit is one source operator; close the outer 'with' first");
  }
  open_ = OpenUnit{true, label, loc, fp32_math, -1};
}

void TraceContext::close_unit() { open_ = OpenUnit{}; }

void TraceContext::finish_node(Node& node, std::span<const TensorId> outputs, bool writes_outputs) {
  auto overflow = [&](const std::string& quantity) {
    return count_overflow({program_.file, node.loc, "node '" + node.name + "'"}, quantity);
  };
  node.outputs.assign(outputs.begin(), outputs.end());
  set_unfused_traffic(graph_, node, writes_outputs, overflow);
  const int64_t matrix =
      count_mul(node.macs, 2, [&] { return overflow("matrix FLOPs (2 x MACs)"); });
  const int64_t vector = checked_flops_total(
      node.flops, [&](const char*) { return overflow("vector FLOPs (the sum of the kinds)"); });
  count_add(matrix, vector, [&] { return overflow("FLOPs (matrix + vector)"); });
  for (TensorId t : node.inputs) {
    auto& consumers = graph_.tensors[static_cast<size_t>(t)].consumers;
    if (consumers.empty() || consumers.back() != node.id) consumers.push_back(node.id);
  }
  for (TensorId t : outputs) graph_.tensors[static_cast<size_t>(t)].producer = node.id;
  charge_graph_bytes(approx_bytes(node), node.loc);
}

void TraceContext::expect_repeats(size_t nodes, size_t tensors, int64_t remaining) {
  if (remaining <= 0) return;
  // A hint, not a promise (a later iteration may build fewer nodes, or more): never past
  // what the caps allow, as each node and tensor charges at least its size to the memory cap.
  const auto reserve = [&](auto& items, size_t per_iteration, int64_t cap) {
    cap = std::min(cap, limits_.max_graph_bytes / static_cast<int64_t>(sizeof(items[0])));
    const int64_t want =
        saturating_add(static_cast<int64_t>(items.size()),
                       saturating_mul(static_cast<int64_t>(per_iteration), remaining));
    const auto n = static_cast<size_t>(std::min(want, cap));
    // At least doubling, as growth by push_back does: the hints of an inner loop whose trip
    // count grows with the outer one's (`for j in range(i)`) would otherwise each move the
    // whole array for a few more nodes, quadratic in the graph.
    if (n > items.capacity()) items.reserve(std::max(n, 2 * items.capacity()));
  };
  reserve(graph_.nodes, nodes, limits_.max_nodes);
  reserve(graph_.tensors, tensors, std::numeric_limits<int64_t>::max());
}

void TraceContext::charge_steps(int64_t n, Loc loc) {
  steps_ = saturating_add(steps_, n);
  if (steps_ > limits_.max_steps) {
    budget_error("runs more than " + with_commas(limits_.max_steps) +
                     " steps (statements run and values copied)",
                 loc);
  }
}

void TraceContext::check_values(int64_t values, Loc loc) const {
  if (values > limits_.max_values) {
    budget_error(
        "builds a list or tuple of more than " + with_commas(limits_.max_values) + " values", loc);
  }
}

void TraceContext::check_string(size_t chars, Loc loc) const {
  if (chars > static_cast<size_t>(limits_.max_string)) {
    budget_error("builds a string of more than " + with_commas(limits_.max_string) + " characters",
                 loc);
  }
}

void TraceContext::charge_graph_bytes(int64_t bytes, Loc loc) {
  graph_bytes_ = saturating_add(graph_bytes_, bytes);
  if (graph_bytes_ > limits_.max_graph_bytes) {
    budget_error("builds a graph of more than " + with_commas(limits_.max_graph_bytes >> 20) +
                     " MiB (" + with_commas(static_cast<int64_t>(graph_.nodes.size())) +
                     " nodes so far)",
                 loc);
  }
}

void TraceContext::budget_error(const std::string& what, Loc loc) const {
  const ActiveLoop* blame = nullptr;
  for (const ActiveLoop& l : loops_) {
    if (!l.dim.empty()) {
      blame = &l;
      break;
    }
  }
  if (!blame && !loops_.empty()) blame = &loops_.front();
  const std::string cap = "the tracer unrolls every loop of model() and stops above its caps";
  if (!blame) {
    fail(ErrorKind::kBudget, loc, "model() " + what + " (the tracer's cap)",
         "model() and its helpers call kernels and builtins too often: lower the --dim sizes "
         "that set its loop counts; " +
             cap);
  }
  std::string hint;
  if (!blame->dim.empty()) {
    hint = "lower --dim " + blame->dim + " (the loop's range comes from dim '" + blame->dim +
           "'); " + cap;
  } else {
    hint = "lower the --dim sizes that set this loop's range, or shorten the loop; " + cap;
  }
  fail(ErrorKind::kBudget, blame->loc,
       "model() " + what + " (the tracer's cap) in the loop '" + blame->header + "' (" +
           with_commas(blame->trips) + " iterations, stopped in iteration " +
           with_commas(blame->iteration + 1) + ")",
       hint);
}

int64_t TraceContext::read_bytes(TensorId t) const { return view_read_bytes(graph_, t); }

namespace {

using ast::Expr;
using ast::ExprKind;
using ast::Op;
using ast::Stmt;
using ast::StmtKind;

constexpr int kMaxCallDepth = 256;

// A frame's variables: names and values in binding order, found through a flat index of their
// positions. model() of a 40,000-node program binds a name per statement; a node-based map
// (std::unordered_map) then touched a node of an unrelated, long-evicted binding on every
// lookup (its buckets point at the node before), which made tracing slower per node as
// programs grow (bench/README.md, pipeline growth). Here a lookup reads the 4-byte slot and
// the name of the binding, which a program mostly reads soon after binding it: still cached.
// absl::flat_hash_set does the hashing; only the storage in binding order is ours.
class Vars {
 public:
  Vars() : index_(0, Hash{this}, Eq{this}) {}
  Vars(const Vars&) = delete;  // the index's functors point at this table
  Vars& operator=(const Vars&) = delete;

  void reserve(size_t n) {
    names_.reserve(n);
    values_.reserve(n);
    index_.reserve(n);
  }
  // Asks for the index's memory that a lookup of `name` reads (a hint).
  void prefetch(std::string_view name) const { index_.prefetch(name); }
  const Value* find(std::string_view name) const {
    auto it = index_.find(name);
    return it == index_.end() ? nullptr : &values_[*it];
  }
  // The binding of `name`, made (None) when new.
  Value& operator[](std::string_view name) {
    auto it = index_.find(name);
    if (it != index_.end()) return values_[*it];
    names_.emplace_back(name);
    values_.emplace_back();
    index_.insert(static_cast<uint32_t>(names_.size() - 1));
    return values_.back();
  }

 private:
  struct Hash {
    using is_transparent = void;
    const Vars* vars;
    size_t operator()(std::string_view s) const { return absl::Hash<std::string_view>{}(s); }
    size_t operator()(uint32_t i) const { return (*this)(vars->names_[i]); }
  };
  struct Eq {
    using is_transparent = void;
    const Vars* vars;
    std::string_view name(std::string_view s) const { return s; }
    std::string_view name(uint32_t i) const { return vars->names_[i]; }
    template <class A, class B>
    bool operator()(const A& a, const B& b) const {
      return name(a) == name(b);
    }
  };
  std::vector<std::string> names_;
  std::vector<Value> values_;
  absl::flat_hash_set<uint32_t, Hash, Eq> index_;
};

struct Frame {
  Vars vars;
  std::string fn;
};

struct ReturnSignal {
  Value value;
};

class Tracer {
 public:
  Tracer(const Program& program, const TraceOptions& options)
      : program_(program), ctx_(program, options.limits), options_(options) {}

  Graph run() {
    resolve_dims();
    const Stmt& model = *program_.model;
    Frame frame;
    frame.fn = "model";
    // One binding per statement at most, plus the parameters: reserved once, so a long
    // model() never rehashes its environment while tracing.
    frame.vars.reserve(model.body.size() + model.params.size());
    // A call written in model() adds a node and a tensor or more: the graph's first arrays
    // hold them all (within the caps), as a loop's do once it has run once.
    const auto calls = static_cast<size_t>(program_.model_calls);
    ctx_.expect_repeats(calls, calls + model.params.size(), 1);
    for (size_t i = 0; i < model.params.size(); ++i) {
      ast::prefetch_ahead(model.params, i);
      const ast::Param& p = model.params[i];
      if (p.annotation && callee_is(*p.annotation, "Tensor")) {
        frame.vars[p.name] = Value::of_tensor(make_input(p));
      } else if (p.default_value) {
        frame.vars[p.name] = eval(*p.default_value, frame);
      }
    }
    Value result = run_body(model.body, frame);
    collect_outputs(result, model.loc);
    Graph g = std::move(ctx_.graph());
    for (const auto& [name, size] : dims_) g.dims.emplace_back(name, size);
    return g;
  }

 private:
  static bool callee_is(const Expr& e, const char* name) {
    return e.kind == ExprKind::kCall &&
           (e.items[0]->kind == ExprKind::kName || e.items[0]->kind == ExprKind::kAttribute) &&
           e.items[0]->text == name;
  }

  void resolve_dims() {
    for (const auto& [name, size] : program_.dims) set_dim(name, size);
    for (const auto& dim_override : options_.dims) {
      // Not a structured binding: clang 14 cannot capture one in the lambda below.
      const std::string& name = dim_override.first;
      const int64_t size = dim_override.second;
      if (size <= 0) {
        ctx_.fail(ErrorKind::kArgument, {},
                  "--dim " + name + "=" + std::to_string(size) + ": sizes must be positive");
      }
      bool used = false;
      for (const ast::Param& p : program_.model->params) {
        if (!p.annotation || !callee_is(*p.annotation, "Tensor") || p.annotation->items.size() < 2)
          continue;
        std::string spec = p.annotation->items[1]->text + ",";
        spec.erase(std::remove(spec.begin(), spec.end(), ' '), spec.end());
        if (("," + spec).find("," + name + ",") != std::string::npos) used = true;
      }
      if (!used && !std::any_of(program_.dims.begin(), program_.dims.end(),
                                [&](const auto& d) { return d.first == name; })) {
        ctx_.fail(ErrorKind::kArgument, {},
                  "--dim " + name + ": model() has no dim named '" + name + "'",
                  "dims of this program: " + dim_names());
      }
      set_dim(name, size);
    }
  }

  bool is_model_dim(const std::string& name) const {
    return std::any_of(dims_.begin(), dims_.end(), [&](const auto& d) { return d.first == name; });
  }

  // The size of model dim `name`, tagged with its name (Value::s) for the node cap's hint.
  static Value dim_value(const std::string& name, int64_t size) {
    Value v = Value::of_int(size);
    v.s = name;
    return v;
  }

  std::string dim_names() const {
    std::string out;
    for (const auto& [name, size] : dims_) out += (out.empty() ? "" : ", ") + name;
    return out.empty() ? "(none)" : out;
  }

  void set_dim(const std::string& name, int64_t size) {
    for (auto& d : dims_)
      if (d.first == name) {
        d.second = size;
        return;
      }
    dims_.emplace_back(name, size);
  }

  TensorId make_input(const ast::Param& p) {
    const Expr& ann = *p.annotation;
    TensorInfo t;
    t.name = p.name;
    t.role = Role::kInput;
    std::string spec = ann.items.size() > 1 ? ann.items[1]->text : "";
    spec.erase(std::remove(spec.begin(), spec.end(), ' '), spec.end());
    DimNames dims;
    size_t start = 0;
    while (!spec.empty() && start <= spec.size()) {
      size_t comma = spec.find(',', start);
      if (comma == std::string::npos) comma = spec.size();
      dims.push_back(spec.substr(start, comma - start));
      start = comma + 1;
    }
    t.dims = ctx_.intern_dims(std::move(dims));
    for (const auto& d : t.dims) {
      auto it =
          std::find_if(dims_.begin(), dims_.end(), [&](const auto& x) { return x.first == d; });
      if (it == dims_.end()) {
        ctx_.fail(ErrorKind::kUnknownDim, ann.loc,
                  "dim '" + d + "' of model() parameter '" + p.name + "' has no size",
                  "add it to DIMS = {\"" + d + "\": ...} or pass --dim " + d + "=N");
      }
      t.shape.push_back(it->second);
    }
    for (const ast::Keyword& kw : ann.keywords) {
      if (kw.name == "dtype") t.dtype = *parse_dtype(kw.value->text);
      if (kw.name == "role") t.role = *parse_role(kw.value->text);
      if (kw.name == "sparsity") {
        StaticEnv env;
        env.program = &program_;
        t.sparsity = eval_static(*kw.value, env).as_double();
      }
    }
    TensorId id = ctx_.add_tensor(std::move(t), ann.loc, /*is_parameter=*/true);
    ctx_.graph().inputs.push_back(id);
    return id;
  }

  void collect_outputs(const Value& v, Loc loc) {
    if (v.kind == Value::Kind::kTensor) {
      auto& outs = ctx_.graph().outputs;
      if (std::find(outs.begin(), outs.end(), v.tensor) == outs.end()) outs.push_back(v.tensor);
      ctx_.graph().tensors[static_cast<size_t>(v.tensor)].is_output = true;
      return;
    }
    if (v.is_seq()) {
      for (const auto& item : v.items) collect_outputs(item, loc);
      return;
    }
    ctx_.fail(ErrorKind::kType, loc,
              std::string("model() must return tensors, got ") + value_kind_name(v.kind),
              "end model() with return y (or a tuple of tensors)");
  }

  // ------------------------------------------------------------------ statements
  Value run_body(const std::vector<ast::StmtPtr>& body, Frame& frame) {
    try {
      for (size_t i = 0; i < body.size(); ++i) {
        // The nodes of a statement ahead, and the variables the next one reads: a model()'s
        // weights are bound at its entry and, in a program larger than the cache, long
        // evicted when read.
        ast::look_ahead(body, i, [&](const std::string& name) { frame.vars.prefetch(name); });
        exec(*body[i], frame);
      }
    } catch (ReturnSignal& r) {
      return std::move(r.value);
    }
    return Value::none();
  }

  void exec(const Stmt& s, Frame& frame) {
    ctx_.charge_steps(1, s.loc);
    switch (s.kind) {
      case StmtKind::kPass:
        return;
      case StmtKind::kExpr:
        eval(*s.value, frame);
        return;
      case StmtKind::kAssign:
        bind(*s.target, eval(*s.value, frame), frame);
        return;
      case StmtKind::kAugAssign: {
        Value cur = eval(*s.target, frame);
        bind(*s.target, binary(s.op, cur, eval(*s.value, frame), s.loc), frame);
        return;
      }
      case StmtKind::kReturn:
        throw ReturnSignal{s.value ? eval(*s.value, frame) : Value::none()};
      case StmtKind::kIf: {
        Value c = eval(*s.value, frame);
        if (c.kind == Value::Kind::kTensor) {
          ctx_.fail(ErrorKind::kDataDependent, s.value->loc,
                    "if condition depends on tensor values",
                    "conditions in model() must be static (shapes, constants)");
        }
        for (const auto& b : truthy(c, s.value->loc) ? s.body : s.orelse) exec(*b, frame);
        return;
      }
      case StmtKind::kFor: {
        Value it = eval(*s.value, frame);
        if (!it.is_seq()) {
          ctx_.fail(ErrorKind::kUnsupported, s.value->loc,
                    "cannot loop over '" + print_expr(*s.value) + "' (a " +
                        value_kind_name(it.kind) + ")",
                    "loop over range(N) with a static N, or over a list/tuple");
        }
        // On the loop stack while it runs (popped however the body ends: a return in a
        // helper's loop unwinds through here).
        ctx_.loops().push_back(ActiveLoop{
            s.loc, "for " + print_expr(*s.target) + " in " + print_expr(*s.value),
            static_cast<int64_t>(it.items.size()), 0, it.kind == Value::Kind::kList ? it.s : ""});
        struct LoopScope {
          std::vector<ActiveLoop>& loops;
          ~LoopScope() { loops.pop_back(); }
        } scope{ctx_.loops()};
        const size_t depth = scope.loops.size() - 1;
        const Graph& g = ctx_.graph();
        const size_t nodes_before = g.nodes.size(), tensors_before = g.tensors.size();
        for (const Value& v : it.items) {
          bind(*s.target, v, frame);
          for (const auto& b : s.body) exec(*b, frame);
          if (++scope.loops[depth].iteration == 1) {
            ctx_.expect_repeats(g.nodes.size() - nodes_before, g.tensors.size() - tensors_before,
                                static_cast<int64_t>(it.items.size()) - 1);
          }
        }
        return;
      }
      case StmtKind::kWith: {
        // The checker accepted the header: unit("label"[, fp32_math=MODE]).
        const Expr& header = *s.value;
        Fp32Math mode = Fp32Math::kPlatformDefault;
        if (const ast::Keyword* kw = header.keyword("fp32_math"))
          mode = parse_fp32_math(kw->value->text).value_or(Fp32Math::kPlatformDefault);
        ctx_.open_unit(header.items[1]->text, s.loc, mode);
        struct Close {
          TraceContext& ctx;
          ~Close() { ctx.close_unit(); }
        } close{ctx_};  // also when the block returns (ReturnSignal) or fails
        for (const auto& b : s.body) exec(*b, frame);
        return;
      }
      default:
        ctx_.fail(ErrorKind::kUnsupported, s.loc, "statement not supported in model()");
    }
  }

  bool truthy(const Value& v, Loc loc) const {
    switch (v.kind) {
      case Value::Kind::kNone:
        return false;
      case Value::Kind::kInt:
        return v.i != 0;
      case Value::Kind::kFloat:
        return v.f != 0.0;
      case Value::Kind::kStr:
        return !v.s.empty();
      case Value::Kind::kTuple:
      case Value::Kind::kList:
        return !v.items.empty();
      case Value::Kind::kTensor:
        ctx_.fail(ErrorKind::kDataDependent, loc, "truth value of a tensor is data-dependent");
    }
    return false;
  }

  void bind(const Expr& target, Value v, Frame& frame) {
    if (target.kind == ExprKind::kName) {
      frame.vars[target.text] = std::move(v);
      return;
    }
    if (target.kind == ExprKind::kTuple || target.kind == ExprKind::kList) {
      if (!v.is_seq() || v.items.size() != target.items.size()) {
        ctx_.fail(ErrorKind::kType, target.loc,
                  "cannot unpack " +
                      (v.is_seq() ? std::to_string(v.items.size()) + " values"
                                  : std::string("a ") + value_kind_name(v.kind)) +
                      " into " + std::to_string(target.items.size()) + " names");
      }
      for (size_t i = 0; i < target.items.size(); ++i) bind(*target.items[i], v.items[i], frame);
      return;
    }
    ctx_.fail(ErrorKind::kUnsupported, target.loc, "cannot assign to '" + print_expr(target) + "'");
  }

  // ------------------------------------------------------------------ expressions
  Value eval(const Expr& e, Frame& frame) {
    switch (e.kind) {
      case ExprKind::kInt:
        return Value::of_int(e.int_value);
      case ExprKind::kFloat:
        return Value::of_float(e.float_value);
      case ExprKind::kStr:
        return Value::of_str(e.text);
      case ExprKind::kName:
        return lookup(e, frame);
      case ExprKind::kTuple:
      case ExprKind::kList: {
        std::vector<Value> items;
        items.reserve(e.items.size());
        for (const auto& item : e.items) items.push_back(eval(*item, frame));
        Value v =
            Value::of_seq(e.kind == ExprKind::kTuple ? Value::Kind::kTuple : Value::Kind::kList,
                          std::move(items));
        ctx_.check_values(v.deep, e.loc);
        return v;
      }
      case ExprKind::kAttribute: {
        Value base = eval(*e.items[0], frame);
        if (base.kind == Value::Kind::kTensor && (e.text == "shape" || e.text == "dims")) {
          const TensorInfo& t = ctx_.tensor(base.tensor);
          std::vector<Value> items;
          if (e.text == "shape") {
            for (size_t d = 0; d < t.shape.size(); ++d) {
              items.push_back(Value::of_int(t.shape[d]));
              if (is_model_dim(t.dims[d])) items.back().s = t.dims[d];
            }
          } else {
            for (const auto& d : t.dims) items.push_back(Value::of_str(d));
          }
          return Value::of_seq(Value::Kind::kTuple, std::move(items));
        }
        if (base.kind == Value::Kind::kTensor && e.text == "ndim") {
          return Value::of_int(static_cast<int64_t>(ctx_.tensor(base.tensor).shape.size()));
        }
        ctx_.fail(ErrorKind::kType, e.loc,
                  "no attribute '" + e.text + "' on a " + value_kind_name(base.kind),
                  "tensors have .shape, .dims and .ndim");
      }
      case ExprKind::kSubscript: {
        Value base = eval(*e.items[0], frame);
        if (e.items.size() != 2) {
          ctx_.fail(ErrorKind::kUnsupported, e.loc,
                    "multi-index subscripts belong in @kernel functions");
        }
        Value idx = eval(*e.items[1], frame);
        if (base.is_seq() && idx.kind == Value::Kind::kInt) {
          int64_t i = idx.i;
          const int64_t n = static_cast<int64_t>(base.items.size());
          if (i < 0) i += n;
          if (i < 0 || i >= n) {
            ctx_.fail(ErrorKind::kShape, e.loc,
                      "index " + std::to_string(idx.i) + " out of range for a " +
                          value_kind_name(base.kind) + " of length " + std::to_string(n));
          }
          return base.items[static_cast<size_t>(i)];
        }
        if (e.items[0]->is_name("DIMS") && idx.kind == Value::Kind::kStr) {
          for (const auto& [name, size] : dims_)
            if (name == idx.s) return dim_value(name, size);
          ctx_.fail(ErrorKind::kUnknownDim, e.loc, "DIMS has no dim '" + idx.s + "'");
        }
        if (base.kind == Value::Kind::kTensor) {
          ctx_.fail(ErrorKind::kUnsupported, e.loc,
                    "indexing a tensor in " + frame.fn + "() reads its values",
                    "use select(x, dim=..., index=...) or slice(...) builtins, or a kernel");
        }
        ctx_.fail(ErrorKind::kType, e.loc,
                  std::string("cannot index a ") + value_kind_name(base.kind) + " with a " +
                      value_kind_name(idx.kind));
      }
      case ExprKind::kBinary:
        return binary(e.op, eval(*e.items[0], frame), eval(*e.items[1], frame), e.loc);
      case ExprKind::kUnary: {
        Value v = eval(*e.items[0], frame);
        if (e.op == Op::kNot) return Value::of_int(truthy(v, e.loc) ? 0 : 1);
        if (v.kind == Value::Kind::kTensor) tensor_arith(e.loc);
        if (!v.is_number()) ctx_.fail(ErrorKind::kType, e.loc, "unary minus of a non-number");
        if (e.op == Op::kNeg && v.kind == Value::Kind::kInt) {
          if (v.i == std::numeric_limits<int64_t>::min())
            ctx_.fail(ErrorKind::kType, e.loc, "integer overflow in '" + print_expr(e) + "'");
          return Value::of_int(-v.i);
        }
        if (e.op == Op::kNeg) return Value::of_float(-v.f);
        return v;
      }
      case ExprKind::kCompare: {
        Value lhs = eval(*e.items[0], frame);
        for (size_t i = 0; i < e.cmp_ops.size(); ++i) {
          Value rhs = eval(*e.items[i + 1], frame);
          if (!compare(e.cmp_ops[i], lhs, rhs, e.loc)) return Value::of_int(0);
          lhs = std::move(rhs);
        }
        return Value::of_int(1);
      }
      case ExprKind::kBoolOp: {
        Value v;
        for (const auto& item : e.items) {
          v = eval(*item, frame);
          const bool t = truthy(v, item->loc);
          if (e.op == Op::kAnd && !t) return v;
          if (e.op == Op::kOr && t) return v;
        }
        return v;
      }
      case ExprKind::kCall:
        return call(e, frame);
      case ExprKind::kDict:
        ctx_.fail(ErrorKind::kUnsupported, e.loc, "dicts are only used for DIMS");
    }
    ctx_.fail(ErrorKind::kUnsupported, e.loc, "unsupported expression");
  }

  Value lookup(const Expr& e, Frame& frame) {
    if (const Value* v = frame.vars.find(e.text)) {
      ctx_.charge_steps(v->deep, e.loc);  // a list's copy costs its values
      // Its record is read soon (a kernel's arguments key its lift, the node reads its
      // inputs): a model()'s weight was made at entry and is long evicted in a large program.
      if (v->kind == Value::Kind::kTensor) prefetch(ctx_.tensor(v->tensor));
      return *v;
    }
    auto c = program_.constants.find(e.text);
    if (c != program_.constants.end()) {
      return c->second.is_int ? Value::of_int(c->second.i) : Value::of_float(c->second.f);
    }
    if (e.text == "True") return Value::of_int(1);
    if (e.text == "False") return Value::of_int(0);
    if (e.text == "None") return Value::none();
    if (e.text == "inf") return Value::of_float(std::numeric_limits<double>::infinity());
    if (e.text == "nan") return Value::of_float(std::numeric_limits<double>::quiet_NaN());
    ctx_.fail(ErrorKind::kUnknownName, e.loc,
              "'" + e.text + "' is not defined at this point of " + frame.fn + "()",
              "assign it before use");
  }

  [[noreturn]] void tensor_arith(Loc loc) const {
    ctx_.fail(ErrorKind::kUnsupported, loc,
              "arithmetic on tensors is written in a @kernel, not in model()",
              "write an elementwise kernel (e.g. add(X, Y)) and call it");
  }

  Value binary(Op op, const Value& a, const Value& b, Loc loc) {
    if (a.kind == Value::Kind::kTensor || b.kind == Value::Kind::kTensor) tensor_arith(loc);
    if (op == Op::kAdd && a.is_seq() && b.is_seq()) {
      ctx_.check_values(a.deep + b.deep, loc);
      ctx_.charge_steps(a.deep + b.deep, loc);
      Value r = a;
      r.items.insert(r.items.end(), b.items.begin(), b.items.end());
      r.deep = a.deep + b.deep - 1;
      return r;
    }
    if (op == Op::kAdd && a.kind == Value::Kind::kStr && b.kind == Value::Kind::kStr) {
      ctx_.check_string(a.s.size() + b.s.size(), loc);
      return Value::of_str(a.s + b.s);
    }
    if (!a.is_number() || !b.is_number()) {
      ctx_.fail(ErrorKind::kType, loc,
                std::string("unsupported operand types for ") + ast::op_text(op) + ": " +
                    value_kind_name(a.kind) + " and " + value_kind_name(b.kind));
    }
    auto to_scalar = [](const Value& v) {
      return v.kind == Value::Kind::kInt ? Scalar::of_int(v.i) : Scalar::of_float(v.f);
    };
    std::string why;
    auto r = scalar_arith(op, to_scalar(a), to_scalar(b), &why);
    if (!r) {
      auto text = [](const Value& v) {
        return v.kind == Value::Kind::kInt ? std::to_string(v.i) : std::to_string(v.f);
      };
      ctx_.fail(ErrorKind::kType, loc,
                why + " in " + text(a) + " " + ast::op_text(op) + " " + text(b),
                "model() computes with 64-bit integers");
    }
    return r->is_int ? Value::of_int(r->i) : Value::of_float(r->f);
  }

  bool compare(Op op, const Value& a, const Value& b, Loc loc) const {
    if (a.kind == Value::Kind::kStr && b.kind == Value::Kind::kStr) {
      if (op == Op::kEq) return a.s == b.s;
      if (op == Op::kNe) return a.s != b.s;
    }
    if (!a.is_number() || !b.is_number()) {
      if (a.kind == Value::Kind::kTensor || b.kind == Value::Kind::kTensor) {
        ctx_.fail(ErrorKind::kDataDependent, loc, "comparison of tensor values in model()",
                  "compare shapes (x.shape[0]) or write the comparison in a kernel");
      }
      ctx_.fail(ErrorKind::kType, loc, "cannot compare these values");
    }
    return scalar_compare(op, a.as_double(), b.as_double());
  }

  // ------------------------------------------------------------------ calls
  Value call(const Expr& e, Frame& frame) {
    const std::string& fn = e.items[0]->text;
    CallArgs args;
    args.positional.reserve(e.items.size() - 1);
    args.positional_locs.reserve(e.items.size() - 1);
    for (size_t i = 1; i < e.items.size(); ++i) {
      args.positional.push_back(eval(*e.items[i], frame));
      args.positional_locs.push_back(e.items[i]->loc);
    }
    for (const auto& kw : e.keywords) args.keywords.emplace_back(kw.name, eval(*kw.value, frame));
    if (const Kernel* k = program_.find_kernel(fn)) return call_kernel(*k, args, e.loc);
    auto h = program_.helpers.find(fn);
    if (h != program_.helpers.end()) return call_helper(*h->second, args, e.loc);
    if (fn == "range") return py_range(args, e.loc);
    if (fn == "len") {
      if (args.positional.size() != 1 || !args.positional[0].is_seq())
        ctx_.fail(ErrorKind::kType, e.loc, "len() takes one list or tuple");
      return Value::of_int(static_cast<int64_t>(args.positional[0].items.size()));
    }
    if (fn == "min" || fn == "max") return py_minmax(fn, args, e.loc);
    if (fn == "int" || fn == "float" || fn == "abs") {
      if (args.positional.size() != 1 || !args.positional[0].is_number())
        ctx_.fail(ErrorKind::kType, e.loc, fn + "() takes one number");
      const Value& v = args.positional[0];
      if (fn == "int") {
        if (v.kind == Value::Kind::kInt) return v;
        // Python truncates toward zero; a float beyond int64 (or NaN, inf) has no int here.
        if (!(std::fabs(v.f) < 9223372036854775808.0)) {
          ctx_.fail(ErrorKind::kType, e.loc,
                    "int() of " + std::to_string(v.f) + ": not an integer in 64 bits");
        }
        return Value::of_int(static_cast<int64_t>(v.f));
      }
      if (fn == "float") return Value::of_float(v.as_double());
      if (v.kind == Value::Kind::kInt && v.i == std::numeric_limits<int64_t>::min())
        ctx_.fail(ErrorKind::kType, e.loc, "integer overflow in abs()");
      return v.kind == Value::Kind::kInt ? Value::of_int(std::llabs(v.i))
                                         : Value::of_float(std::fabs(v.f));
    }
    if (fn == "size") {
      if (args.positional.size() == 1 && args.positional[0].kind == Value::Kind::kStr) {
        for (const auto& [name, size] : dims_)
          if (name == args.positional[0].s) return dim_value(name, size);
      }
      ctx_.fail(ErrorKind::kUnknownDim, e.loc, "size() names a dim of DIMS: size(\"B\")");
    }
    return call_graph_builtin(ctx_, fn, args, e.loc);
  }

  Value py_range(const CallArgs& args, Loc loc) {
    std::vector<int64_t> v;
    for (const Value& a : args.positional) {
      if (a.kind != Value::Kind::kInt) {
        ctx_.fail(ErrorKind::kType, loc,
                  std::string("range() needs static integers, got a ") + value_kind_name(a.kind),
                  "loop bounds in model() must be known before execution (shapes, constants)");
      }
      v.push_back(a.i);
    }
    if (v.empty() || v.size() > 3) ctx_.fail(ErrorKind::kCallArity, loc, "range() takes 1-3 ints");
    const int64_t start = v.size() > 1 ? v[0] : 0, stop = v.size() > 1 ? v[1] : v[0];
    const int64_t step = v.size() > 2 ? v[2] : 1;
    if (step == 0) ctx_.fail(ErrorKind::kType, loc, "range() step must not be zero");
    // len(range(start, stop, step)) in unsigned 64-bit arithmetic: stop - start may not fit
    // in int64, and every item lies between start and stop.
    const bool up = step > 0;
    const uint64_t span =
        up ? (stop > start ? static_cast<uint64_t>(stop) - static_cast<uint64_t>(start) : 0)
           : (start > stop ? static_cast<uint64_t>(start) - static_cast<uint64_t>(stop) : 0);
    const uint64_t magnitude =
        up ? static_cast<uint64_t>(step) : uint64_t{0} - static_cast<uint64_t>(step);
    const uint64_t count = span == 0 ? 0 : (span - 1) / magnitude + 1;
    const Value& bound = args.positional[v.size() > 1 ? 1 : 0];
    if (count > static_cast<uint64_t>(ctx_.limits().max_values)) {
      const std::string dim = bound.s;
      ctx_.fail(ErrorKind::kBudget, loc,
                "range() of " + std::to_string(count) + " values: model()'s loops are unrolled, " +
                    "and the tracer's cap is " + std::to_string(ctx_.limits().max_values) +
                    " values per list",
                dim.empty() ? "lower the --dim sizes that set this range"
                            : "lower --dim " + dim + " (the range's bound is dim '" + dim + "')");
    }
    ctx_.charge_steps(static_cast<int64_t>(count), loc);
    std::vector<Value> items;
    items.reserve(static_cast<size_t>(count));
    for (uint64_t k = 0; k < count; ++k)
      items.push_back(Value::of_int(
          static_cast<int64_t>(static_cast<uint64_t>(start) + k * static_cast<uint64_t>(step))));
    Value r = Value::of_seq(Value::Kind::kList, std::move(items));
    r.s = bound.s;  // the dim the bound was read from, for the node cap's hint
    return r;
  }

  Value py_minmax(const std::string& fn, const CallArgs& args, Loc loc) const {
    std::vector<Value> vals(args.positional.begin(), args.positional.end());
    if (vals.size() == 1 && vals[0].is_seq()) vals = vals[0].items;
    if (vals.empty()) ctx_.fail(ErrorKind::kCallArity, loc, fn + "() of nothing");
    Value best = vals[0];
    for (const Value& v : vals) {
      if (!v.is_number()) {
        ctx_.fail(ErrorKind::kType, loc, fn + "() of a " + value_kind_name(v.kind) + " in model()",
                  "for an elementwise max/min of tensors, write a kernel");
      }
      if (fn == "min" ? v.as_double() < best.as_double() : v.as_double() > best.as_double())
        best = v;
    }
    return best;
  }

  // Matches arguments to parameters: positional first, then keywords, then defaults.
  // `param_name(i)` and `has_default(i)` describe parameter i. The result is inline: a
  // kernel call of a large program is made tens of thousands of times, and its few heap
  // blocks each were a measurable part of tracing.
  template <typename ParamName, typename HasDefault>
  SmallVec<const Value*, 8> match_args(const std::string& fn, size_t nparams, ParamName param_name,
                                       const CallArgs& args, HasDefault has_default,
                                       Loc loc) const {
    SmallVec<const Value*, 8> out(nparams, nullptr);
    auto signature = [&] {
      std::string s = fn + "(";
      for (size_t i = 0; i < nparams; ++i) s += (i ? ", " : "") + param_name(i);
      return s + ")";
    };
    if (args.positional.size() > nparams) {
      ctx_.fail(ErrorKind::kCallArity, loc,
                signature() + " takes " + std::to_string(nparams) + " argument(s), got " +
                    std::to_string(args.positional.size() + args.keywords.size()));
    }
    for (size_t i = 0; i < args.positional.size(); ++i) out[i] = &args.positional[i];
    for (const auto& [name, value] : args.keywords) {
      size_t i = 0;
      while (i < nparams && param_name(i) != name) ++i;
      if (i == nparams) {
        ctx_.fail(ErrorKind::kCallArity, loc,
                  signature() + " has no parameter named '" + name + "'");
      }
      if (out[i]) {
        ctx_.fail(ErrorKind::kCallArity, loc, signature() + " got '" + name + "' twice");
      }
      out[i] = &value;
    }
    for (size_t i = 0; i < nparams; ++i) {
      if (!out[i] && !has_default(i)) {
        ctx_.fail(ErrorKind::kCallArity, loc,
                  signature() + " is missing argument '" + param_name(i) + "' (got " +
                      std::to_string(args.positional.size() + args.keywords.size()) +
                      " argument(s))");
      }
    }
    return out;
  }

  Value call_helper(const Stmt& def, const CallArgs& args, Loc loc) {
    ctx_.charge_steps(1, loc);
    if (++depth_ > kMaxCallDepth) {
      ctx_.fail(ErrorKind::kRecursion, loc,
                "helper calls nest deeper than " + std::to_string(kMaxCallDepth));
    }
    auto matched = match_args(
        def.name, def.params.size(), [&](size_t i) { return def.params[i].name; }, args,
        [&](size_t i) { return def.params[i].default_value != nullptr; }, loc);
    Frame frame;
    frame.fn = def.name;
    for (size_t i = 0; i < def.params.size(); ++i) {
      frame.vars[def.params[i].name] =
          matched[i] ? *matched[i] : eval(*def.params[i].default_value, frame);
    }
    Value v = run_body(def.body, frame);
    --depth_;
    return v;
  }

  Value call_kernel(const Kernel& k, const CallArgs& args, Loc loc) {
    auto matched = match_args(
        k.name, k.params.size(), [&](size_t i) { return k.params[i].name; }, args,
        [&](size_t i) { return k.params[i].default_value != nullptr; }, loc);
    KernelCall kc;
    kc.kernel = &k;
    kc.loc = loc;
    kc.tensor_args.assign(k.params.size(), nullptr);
    kc.scalar_args.assign(k.params.size(), Scalar{});
    TensorIds inputs;
    for (size_t i = 0; i < k.params.size(); ++i) {
      const KernelParam& p = k.params[i];
      if (p.kind == ParamKind::kTensor) {
        if (matched[i]->kind != Value::Kind::kTensor) {
          ctx_.fail(ErrorKind::kType, loc,
                    "argument '" + p.name + "' of kernel '" + k.name + "' must be a tensor, got " +
                        value_kind_name(matched[i]->kind));
        }
        kc.tensor_args[i] = &ctx_.tensor(matched[i]->tensor);
        inputs.push_back(matched[i]->tensor);
        continue;
      }
      if (!matched[i]) {
        StaticEnv env;
        env.program = &program_;
        kc.scalar_args[i] = eval_static(*p.default_value, env);
        continue;
      }
      const Value& v = *matched[i];
      if (!v.is_number()) {
        ctx_.fail(ErrorKind::kType, loc,
                  "argument '" + p.name + "' of kernel '" + k.name + "' must be a number, got " +
                      value_kind_name(v.kind));
      }
      if (p.kind == ParamKind::kInt && v.kind != Value::Kind::kInt) {
        ctx_.fail(ErrorKind::kType, loc,
                  "argument '" + p.name + "' of kernel '" + k.name + "' must be an int, got " +
                      std::to_string(v.f));
      }
      kc.scalar_args[i] = v.kind == Value::Kind::kInt && p.kind != ParamKind::kFloat
                              ? Scalar::of_int(v.i)
                              : Scalar::of_float(v.as_double());
    }
    Node& node = ctx_.add_node(k.name, NodeKind::kEinsum, loc, inputs);
    kc.name = node.name;
    const NodeId node_id = node.id;
    const LiftedCall& lifted = lift_cached(kc);
    // Outputs.
    TensorIds outputs;
    SmallVec<TensorId, 8> kernel_to_graph(k.tensors.size(), -1);
    for (size_t i = 0; i < k.params.size(); ++i)
      if (k.params[i].kind == ParamKind::kTensor)
        kernel_to_graph[static_cast<size_t>(k.params[i].tensor)] = matched[i]->tensor;
    for (size_t r = 0; r < k.returns.size(); ++r) {
      const KernelTensor& kt = k.tensors[static_cast<size_t>(k.returns[r])];
      TensorInfo t;
      t.name = kc.name + "." + kt.name;
      t.dims = ctx_.dims_of(kt);
      const std::vector<int64_t>& shape = lifted.tensor_shapes[static_cast<size_t>(k.returns[r])];
      t.shape.assign(shape.begin(), shape.end());
      t.dtype = kt.dtype;
      t.role = Role::kActivation;
      t.storage = -1;
      const TensorId id = ctx_.add_tensor(std::move(t), loc);
      kernel_to_graph[static_cast<size_t>(k.returns[r])] = id;
      outputs.push_back(id);
    }
    Node& n = ctx_.graph().nodes[static_cast<size_t>(node_id)];
    n.einsum = k.einsum;
    n.macs = lifted.macs;
    n.flops = lifted.flops;
    n.matrix_dtype = lifted.matrix_dtype;
    n.einsums = lifted.einsums;
    n.slot_tensors = std::move(kernel_to_graph);
    n.kernel = program_.kernel_index.at(k.name);
    n.scalar_args.assign(kc.scalar_args.begin(), kc.scalar_args.end());
    // Traffic: each distinct parameter tensor read, once; each returned tensor, once.
    TensorIds counted;
    size_t slot = 0;
    for (size_t i = 0; i < k.params.size(); ++i) {
      if (k.params[i].kind != ParamKind::kTensor) continue;
      const KernelTensor& kt = k.tensors[static_cast<size_t>(k.params[i].tensor)];
      const TensorId t = matched[i]->tensor;
      if (kt.read && std::find(counted.begin(), counted.end(), t) == counted.end()) {
        n.input_bytes[slot] = kernel_read_bytes(ctx_.graph(), n, k.params[i].tensor, t);
        counted.push_back(t);
      }
      ++slot;
    }
    ctx_.finish_node(n, outputs, /*writes_outputs=*/true);
    if (outputs.size() == 1) return Value::of_tensor(outputs[0]);
    std::vector<Value> items;
    for (TensorId t : outputs) items.push_back(Value::of_tensor(t));
    return Value::of_seq(Value::Kind::kTuple, std::move(items));
  }

  // Identical calls (same kernel, shapes, dtypes, sparsity and scalars) lift once. The key
  // is built into a reused buffer as raw bytes, so a cache hit allocates nothing.
  const LiftedCall& lift_cached(const KernelCall& kc) {
    key_.clear();
    auto put = [this](const auto& v) { key_.append(reinterpret_cast<const char*>(&v), sizeof v); };
    put(kc.kernel);
    for (size_t i = 0; i < kc.tensor_args.size(); ++i) {
      if (const TensorInfo* t = kc.tensor_args[i]) {
        put(t->shape.size());
        for (int64_t n : t->shape) put(n);
        put(t->dtype);
        put(t->sparsity);
      } else {
        const Scalar& s = kc.scalar_args[i];
        put(s.is_int);
        put(s.i);
        put(s.f);
      }
    }
    auto it = lift_cache_.find(key_);
    if (it != lift_cache_.end()) return it->second;
    const LiftedCall& lifted = lift_cache_.emplace(key_, lift_call(program_, kc)).first->second;
    int64_t bytes = static_cast<int64_t>(key_.size() + sizeof(LiftedCall));
    for (const Einsum& e : *lifted.einsums) {
      bytes += static_cast<int64_t>(sizeof(Einsum) + e.text.size() + e.map_expr.size() +
                                    40 * e.ranks.size());
      for (const Operand& o : e.inputs)
        bytes += static_cast<int64_t>(sizeof(Operand) + 48 * o.projection.size());
    }
    ctx_.charge_graph_bytes(bytes, kc.loc);
    return lifted;
  }

  const Program& program_;
  TraceContext ctx_;
  const TraceOptions& options_;
  std::vector<std::pair<std::string, int64_t>> dims_;
  std::unordered_map<std::string, LiftedCall> lift_cache_;
  std::string key_;
  int depth_ = 0;
};

}  // namespace
}  // namespace detail

Graph trace_program(const Program& program, const TraceOptions& options) {
  SOLAR_INTERNAL_CHECK(program.model != nullptr, "trace of a program without model()");
  return detail::Tracer(program, options).run();
}

}  // namespace solar
