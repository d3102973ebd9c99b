#include "solar/sol/quantize.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <map>
#include <set>

#include "solar/base/checked.h"
#include "solar/base/error.h"
#include "solar/sol/value_dtypes.h"

namespace solar {
namespace {

// A recipe as listed: its weight format, its activation format (used when
// `quantises_activations`; a weight-only recipe has none) and whether `:gN` may change the
// group.
struct RecipeRow {
  const char* name;
  QuantFormat weights;
  bool quantises_activations;
  QuantFormat activations;
  bool group_parameter;
  const char* about;  // one line for the error that lists them
};

// Group sizes and scale formats as the formats define them or the engines ship them:
// AWQ/GPTQ int4 (one fp16 scale per 128 of K), SmoothQuant-style int8 and FP8 (one fp32 scale
// per output channel and per token), NVFP4 (one e4m3 scale per 16 elements; NVIDIA's NVFP4
// format, the Blackwell block-scaled MMA's scale_vec::4X) and MXFP4 (one e8m0 scale, a byte,
// per 32 elements: OCP Microscaling Formats v1.0). The IR's `nvfp4` dtype holds an E2M1 code,
// the element type of both 4-bit formats; an e8m0 scale is stored as its byte (`uint8`).
const std::array<RecipeRow, 7> kRecipes = {{
    {"w4a16",
     {DType::kInt4, DType::kFp16, 128, false, ""},
     false,
     {},
     true,
     "int4 weights, fp16 scale per 128 of K; activations as they are"},
    {"w8a16",
     {DType::kInt8, DType::kFp16, 0, false, ""},
     false,
     {},
     true,
     "int8 weights, fp16 scale per output channel; activations as they are"},
    {"w8a8",
     {DType::kInt8, DType::kFp32, 0, false, ""},
     true,
     {DType::kInt8, DType::kFp32, 0, false, ""},
     true,
     "int8 weights per channel, int8 activations per token"},
    {"fp8",
     {DType::kFp8E4M3, DType::kFp32, 0, false, ""},
     true,
     {DType::kFp8E4M3, DType::kFp32, 0, false, ""},
     true,
     "fp8 e4m3 weights per channel, fp8 e4m3 activations per token"},
    {"w4a4",
     {DType::kNvfp4, DType::kFp8E4M3, 16, false, ""},
     true,
     {DType::kNvfp4, DType::kFp8E4M3, 16, false, ""},
     false,
     "4-bit weights and activations in NVFP4, the 4-bit format Blackwell and Thor multiply"},
    {"nvfp4",
     {DType::kNvfp4, DType::kFp8E4M3, 16, false, ""},
     true,
     {DType::kNvfp4, DType::kFp8E4M3, 16, false, ""},
     false,
     "e2m1 codes, e4m3 scale per 16, weights and activations"},
    {"mxfp4",
     {DType::kNvfp4, DType::kUint8, 32, false, ""},
     true,
     {DType::kNvfp4, DType::kUint8, 32, false, ""},
     false,
     "e2m1 codes, e8m0 scale per 32, weights and activations"},
}};

// KV-cache formats as the engines ship them: FP8 e4m3 and INT8 with one scale per tensor
// (vLLM's and FlashInfer's k_scale and v_scale; TensorRT-LLM's INT8 KV cache), NVFP4 with one
// e4m3 scale per 16 elements of the head dim (TensorRT-LLM's NVFP4 KV cache).
struct KvRow {
  const char* name;
  QuantFormat format;
};
const std::array<KvRow, 3> kKvFormats = {{
    {"fp8", {DType::kFp8E4M3, DType::kFp32, 0, true, ""}},
    {"int8", {DType::kInt8, DType::kFp32, 0, true, ""}},
    {"nvfp4", {DType::kNvfp4, DType::kFp8E4M3, 16, false, ""}},
}};

const char* codes_name(const QuantFormat& f) {
  if (f.codes == DType::kNvfp4) return "e2m1";
  if (f.codes == DType::kFp8E4M3) return "fp8 e4m3";
  return dtype_name(f.codes);
}

// "int4, one fp16 scale per 128 of K"; "int8, one fp32 scale per row".
std::string describe(const QuantFormat& f, bool mx) {
  std::string scale = mx ? "e8m0" : f.scale == DType::kFp8E4M3 ? "e4m3" : dtype_name(f.scale);
  std::string out = std::string(codes_name(f)) + ", one " + scale + " scale per ";
  if (f.per_tensor) return out + "tensor";
  return out + (f.group > 0 ? std::to_string(f.group) + " of K" : std::string("row"));
}

std::string recipe_list() {
  std::string out;
  for (const RecipeRow& r : kRecipes) {
    out += std::string(out.empty() ? "" : "; ") + r.name + " (" + r.about + ")";
  }
  return out;
}

UserError recipe_error(const std::string& message) {
  return UserError(ErrorKind::kArgument, "", Loc{}, message,
                   "recipes: " + recipe_list() + ". A group size: w4a16:g64");
}

// `bytes` of `from` elements as `to` elements, rounded up to whole bytes (a read of part of a
// tensor keeps its share).
int64_t rebits(int64_t bytes, DType from, DType to) {
  const int64_t f = dtype_bits(from), t = dtype_bits(to);
  const int64_t whole = bytes / f * t;  // bytes and bits per element in proportion
  return whole + ((bytes % f) * t + f - 1) / f;
}

// The nest of a node that holds its MACs, if it multiplies exactly two graph tensors.
const Einsum* mac_nest(const Node& node) {
  if (node.kind != NodeKind::kEinsum || node.macs <= 0 || !node.einsums) return nullptr;
  const Einsum* largest = nullptr;
  for (const Einsum& e : *node.einsums)
    if (e.macs > 0 && (!largest || e.macs > largest->macs)) largest = &e;
  if (!largest || largest->inputs.size() != 2) return nullptr;
  for (const Operand& op : largest->inputs)
    if (node.operand_tensor(op) < 0) return nullptr;
  return largest;
}

// Elements of the dims of `op`'s tensor that only contracted ranks index (K of a weight
// [N, K], C x R x S of a convolution's [O, C, R, S]; C of its input [B, C, H, W], whose H and
// W also follow the output's ranks); 0 when none does.
int64_t contracted_extent(const Einsum& nest, const Operand& op, const TensorInfo& tensor) {
  std::set<std::string> kept;
  for (const auto& terms : nest.output.projection)
    for (const ProjectionTerm& t : terms) kept.insert(t.rank);
  int64_t extent = 0;
  for (size_t d = 0; d < op.projection.size() && d < tensor.shape.size(); ++d) {
    const auto& terms = op.projection[d];
    const bool contracted =
        !terms.empty() && std::none_of(terms.begin(), terms.end(), [&](const ProjectionTerm& t) {
          return kept.count(t.rank) > 0;
        });
    if (contracted) extent = (extent == 0 ? 1 : extent) * tensor.shape[d];
  }
  return extent;
}

// Scales of an operand of `elements` elements whose contracted dims hold `k` of them.
int64_t scale_count(int64_t elements, int64_t k, int64_t group) {
  const int64_t rows = elements / k;
  return group > 0 ? rows * ((k + group - 1) / group) : rows;
}

bool is_narrow(DType d) { return !dtype_is_float(d) || dtype_bits(d) <= 8; }

// The graph being rewritten, with what the rewrite needs to know of its storages.
class Rewrite {
 public:
  Rewrite(const Graph& graph, const QuantRecipe& recipe) : in_(graph), recipe_(recipe) {
    out_.graph = graph;
    out_.report.applied = recipe;
    out_.report.recipe = recipe.name;
    if (recipe.weights) out_.report.weights = recipe.weights->name;
    if (recipe.activations) out_.report.activations = recipe.activations->name;
    if (recipe.kv_cache) out_.report.kv_cache = recipe.kv_cache->name;
    views_.resize(graph.tensors.size());
    for (const TensorInfo& t : graph.tensors)
      views_[static_cast<size_t>(t.storage)].push_back(t.id);
  }

  Quantized run() && {
    if (recipe_.weights) quantise_weights();
    if (recipe_.kv_cache) quantise_kv_caches();
    std::sort(out_.report.skipped.begin(), out_.report.skipped.end(),
              [](const QuantSkip& a, const QuantSkip& b) { return a.node < b.node; });
    return std::move(out_);
  }

 private:
  void quantise_weights() {
    const QuantFormat& weights = *recipe_.weights;
    // Pass 1: the contractions that read a weight, and which operand is which.
    for (const Node& node : in_.nodes) {
      const Einsum* nest = mac_nest(node);
      if (!nest) {
        if (node.kind == NodeKind::kEinsum && node.macs > 0)
          skip(node, "its MACs do not multiply two tensors of the graph");
        continue;
      }
      std::array<TensorId, 2> t = {node.operand_tensor(nest->inputs[0]),
                                   node.operand_tensor(nest->inputs[1])};
      int w = -1;
      for (int i = 0; i < 2; ++i)
        if (weight_root(t[static_cast<size_t>(i)]) >= 0) w = w < 0 ? i : 2;
      if (w < 0 || w == 2) {
        // A product of two activations is the KV-cache pass's, if it reads the cache.
        if (w == 2 || !recipe_.kv_cache)
          skip(node, w < 0 ? "no operand is a weight" : "both operands are weights");
        continue;
      }
      if (is_narrow(node.matrix_dtype)) {
        skip(node, std::string("its MACs are already ") + dtype_name(node.matrix_dtype));
        continue;
      }
      Candidate c{node.id, nest, static_cast<size_t>(w), t};
      const TensorId ws = weight_root(c.weight());
      if (dtype_bits(in_.tensors[static_cast<size_t>(ws)].dtype) <= dtype_bits(weights.codes)) {
        skip(node, "its weight is already " +
                       std::string(dtype_name(in_.tensors[static_cast<size_t>(ws)].dtype)));
        continue;
      }
      candidates_.push_back(c);
    }
    // Pass 2: a weight is quantised when every reader of it, and of what data movement makes
    // of it (a MoE layer's gathered experts), is such a contraction.
    std::map<TensorId, WeightClosure> closures;
    std::vector<Candidate> kept;
    for (const Candidate& c : candidates_) {
      const TensorId root = weight_root(c.weight());
      auto it = closures.find(root);
      if (it == closures.end()) it = closures.emplace(root, weight_closure(root)).first;
      if (it->second.why.empty()) {
        kept.push_back(c);
      } else {
        skip(in_.nodes[static_cast<size_t>(c.node)], it->second.why);
      }
    }
    candidates_ = std::move(kept);
    std::map<TensorId, TensorId> weight_scales, activation_scales;
    for (const Candidate& c : candidates_) {
      QuantChange change;
      Node& node = out_.graph.nodes[static_cast<size_t>(c.node)];
      change.node = c.node;
      change.matrix_before = node.matrix_dtype;
      change.bytes_before = operand_bytes(node, c);
      const TensorId root = weight_root(c.weight());
      change.weight = in_.tensors[static_cast<size_t>(root)].name;
      if (!weight_scales.count(root)) store_weight(c, closures.at(root), weight_scales);
      read_scale(node, weight_scales.at(storage(c.weight())));
      if (recipe_.activations) {
        quantise_activation(c, activation_scales, change);
        set_matrix_dtype(node, recipe_.activations->codes);
        epilogue(node, c);
      } else {
        dequantise_weight(node, c);
      }
      refresh_read_bytes(node);
      change.matrix_after = node.matrix_dtype;
      change.bytes_after = operand_bytes(node, c);
      out_.report.changes.push_back(change);
    }
  }

  // The KV cache (QuantRecipe::kv_cache): each graph input the step appends to whose values
  // reach only attention products, through data movement.
  void quantise_kv_caches() {
    // The closures of every cache input, merged: two caches may meet (a concatenation of
    // both), and each storage, mover and product is rewritten once.
    KvClosure all;
    for (TensorId s : in_.inputs) {
      const TensorInfo& st = in_.tensors[static_cast<size_t>(s)];
      if (st.role != Role::kInput || st.storage != s || !dtype_is_float(st.dtype)) continue;
      KvClosure c;
      const std::string why = kv_closure(s, c);
      // Nothing appended, or more appended than it holds (the new entries' side of the
      // concatenation): not a cache.
      if (c.appended == 0 || c.appended >= st.elements()) continue;
      if (!why.empty()) {
        out_.report.kv_skipped.push_back("'" + st.name + "': " + why);
        continue;
      }
      all.caches.push_back(s);
      for (TensorId t : c.storages) {
        if (all.contains(t)) continue;
        all.storages.push_back(t);
        all.origin.push_back(s);
      }
      for (auto* list : {&all.movers, &all.products}) {
        const auto& from = list == &all.movers ? c.movers : c.products;
        for (NodeId n : from)
          if (std::find(list->begin(), list->end(), n) == list->end()) list->push_back(n);
      }
    }
    if (!all.caches.empty()) apply_kv(all);
  }

  // A kernel that multiplies its one tensor input by a constant, element by element
  // (PyTorch's attention scales the keys by sqrt(scale)): on codes with a scale per tensor or
  // per block, a kernel folds it into the scales, so the result is codes of the same format.
  static bool scales_by_a_constant(const Node& r) {
    if (r.kind != NodeKind::kEinsum || r.macs != 0 || r.inputs.size() != 1 || !r.einsums ||
        r.einsums->size() != 1 || r.outputs.size() != 1)
      return false;
    const Einsum& e = r.einsums->front();
    const FlopCounts& f = r.flops;
    return e.reduce == ReduceOp::kNone && e.inputs.size() == 1 && f.mul == e.points &&
           f.total() == f.mul;
  }

  // What depends on one cache input: the storages its values reach by data movement, the
  // nodes that move them, and the products that read them.
  struct KvClosure {
    std::vector<TensorId> caches;  // the cache inputs (merged closures)
    std::vector<TensorId> storages;
    std::vector<TensorId> origin;  // per storage, the cache input it holds values of
    std::vector<NodeId> movers;
    std::vector<NodeId> products;
    int64_t appended = 0;  // elements the movers add from outside (the step's new keys)
    bool contains(TensorId t) const {
      return std::find(storages.begin(), storages.end(), t) != storages.end();
    }
  };

  // Fills `c` from cache input `s`; "" when every value of it reaches only products of the
  // attention (and it may be quantised), why not otherwise.
  std::string kv_closure(TensorId s, KvClosure& c) const {
    const QuantFormat& f = *recipe_.kv_cache;
    c.storages = {s};
    std::string why;
    auto add = [](std::vector<NodeId>& list, NodeId n) {
      if (std::find(list.begin(), list.end(), n) == list.end()) list.push_back(n);
    };
    for (size_t i = 0; i < c.storages.size(); ++i) {
      const TensorId st = c.storages[i];
      for (TensorId v : views_.at(static_cast<size_t>(st))) {
        const TensorInfo& t = in_.tensors[static_cast<size_t>(v)];
        if (t.dtype != in_.tensors[static_cast<size_t>(st)].dtype && why.empty())
          why = "'" + t.name + "' reads it as another dtype";
        if (t.is_output && why.empty()) why = "'" + t.name + "' is an output of the graph";
        for (NodeId reader : t.consumers) {
          const Node& r = in_.nodes[static_cast<size_t>(reader)];
          if (is_view_of(r, st)) continue;
          if (moves_values(r) || scales_by_a_constant(r)) {
            add(c.movers, reader);
            for (TensorId o : r.outputs) {
              const TensorId os = storage(o);
              if (!c.contains(os)) c.storages.push_back(os);
            }
            continue;
          }
          const Einsum* nest = mac_nest(r);
          const bool operand =
              nest && std::any_of(nest->inputs.begin(), nest->inputs.end(),
                                  [&](const Operand& op) { return r.operand_tensor(op) == v; });
          const bool weighs = std::any_of(candidates_.begin(), candidates_.end(),
                                          [&](const Candidate& w) { return w.node == reader; });
          if (operand && !is_narrow(r.matrix_dtype) && !weighs) {
            add(c.products, reader);
          } else if (why.empty()) {
            why = "node '" + r.name + "' reads it, and only the attention's products may";
          }
        }
      }
    }
    for (NodeId m : c.movers)
      for (TensorId in : in_.nodes[static_cast<size_t>(m)].inputs)
        if (!c.contains(storage(in)) && dtype_is_float(in_.tensors[static_cast<size_t>(in)].dtype))
          c.appended = saturating_add(c.appended, in_.tensors[static_cast<size_t>(in)].elements());
    for (NodeId p : c.products) {
      const Einsum* nest = mac_nest(in_.nodes[static_cast<size_t>(p)]);
      const Node& r = in_.nodes[static_cast<size_t>(p)];
      const bool both =
          std::all_of(nest->inputs.begin(), nest->inputs.end(),
                      [&](const Operand& op) { return c.contains(storage(r.operand_tensor(op))); });
      if (both && why.empty()) why = "node '" + r.name + "' multiplies it by itself";
    }
    if (c.products.empty() && why.empty()) why = "no product reads it";
    if (dtype_bits(in_.tensors[static_cast<size_t>(s)].dtype) <= dtype_bits(f.codes) && why.empty())
      why = std::string("it is already ") + dtype_name(in_.tensors[static_cast<size_t>(s)].dtype);
    return why;
  }

  void apply_kv(const KvClosure& c) {
    const QuantFormat& f = *recipe_.kv_cache;
    for (TensorId st : c.storages) retype(st, f.codes);
    for (TensorId s : c.caches) {
      const TensorInfo& cache = in_.tensors[static_cast<size_t>(s)];
      out_.report.kv_inputs.push_back(cache.name);
      out_.report.kv_bytes_before = saturating_add(out_.report.kv_bytes_before, cache.bytes());
      out_.report.kv_bytes_after = saturating_add(
          out_.report.kv_bytes_after, out_.graph.tensors[static_cast<size_t>(s)].bytes());
    }
    // Scales per block of the head dim: each stored tensor of the cache gets its own, made by
    // the node that makes it and read by every node that reads it.
    if (!f.per_tensor) {
      for (TensorId st : c.storages) {
        const TensorInfo& t = in_.tensors[static_cast<size_t>(st)];
        const int64_t last = t.shape.empty() ? 1 : std::max<int64_t>(t.shape.back(), 1);
        const TensorId scale =
            new_tensor(t.name + ".scale", f.scale, scale_count(t.elements(), last, f.group),
                       t.producer, t.producer == kNoNode ? Role::kInput : Role::kActivation);
        if (std::find(c.caches.begin(), c.caches.end(), st) != c.caches.end())
          out_.report.kv_bytes_after = saturating_add(
              out_.report.kv_bytes_after, out_.graph.tensors[static_cast<size_t>(scale)].bytes());
        for (TensorId v : views_.at(static_cast<size_t>(st)))
          for (NodeId reader : in_.tensors[static_cast<size_t>(v)].consumers)
            if (!is_view_of(in_.nodes[static_cast<size_t>(reader)], st))
              read_scale(out_.graph.nodes[static_cast<size_t>(reader)], scale);
      }
    }
    // The movers quantise what they add (the step's new keys and values).
    for (NodeId m : c.movers) {
      Node& node = out_.graph.nodes[static_cast<size_t>(m)];
      for (TensorId in : in_.nodes[static_cast<size_t>(m)].inputs) {
        const TensorInfo& t = in_.tensors[static_cast<size_t>(in)];
        if (c.contains(storage(in)) || !dtype_is_float(t.dtype)) continue;
        quantiser_work(node, t.elements(), kv_scales(t, f));
      }
      refresh_read_bytes(node);
    }
    // The products multiply the cache's codes by the other operand, quantised as it is read.
    for (NodeId p : c.products) {
      Node& node = out_.graph.nodes[static_cast<size_t>(p)];
      const Node& before = in_.nodes[static_cast<size_t>(p)];
      const Einsum* nest = mac_nest(before);
      QuantChange change;
      change.node = p;
      change.prologue = true;
      change.matrix_before = before.matrix_dtype;
      change.bytes_before = before.bytes_read;
      for (const Operand& op : nest->inputs) {
        const TensorId t = before.operand_tensor(op);
        const TensorInfo& info = in_.tensors[static_cast<size_t>(t)];
        if (c.contains(storage(t))) {
          const size_t k = static_cast<size_t>(
              std::find(c.storages.begin(), c.storages.end(), storage(t)) - c.storages.begin());
          change.cache = in_.tensors[static_cast<size_t>(c.origin[k])].name;
        } else {
          change.activation = info.name;
          quantiser_work(node, info.elements(), kv_scales(info, f));
        }
      }
      set_matrix_dtype(node, f.codes);
      if (f.per_tensor) add(node, &FlopCounts::mul, outputs(node));  // the two scales' product
      refresh_read_bytes(node);
      change.matrix_after = node.matrix_dtype;
      change.bytes_after = node.bytes_read;
      out_.report.changes.push_back(change);
    }
  }

  // Scales of `t` in KV format `f`: one for the tensor, or one per block of its last dim.
  static int64_t kv_scales(const TensorInfo& t, const QuantFormat& f) {
    if (f.per_tensor) return 1;
    const int64_t last = t.shape.empty() ? 1 : std::max<int64_t>(t.shape.back(), 1);
    return scale_count(t.elements(), last, f.group);
  }

  struct Candidate {
    NodeId node;
    const Einsum* nest;
    size_t w;  // which MAC operand is the weight
    std::array<TensorId, 2> tensors;
    TensorId weight() const { return tensors[w]; }
    TensorId activation() const { return tensors[1 - w]; }
  };

  TensorId storage(TensorId t) const { return in_.tensors[static_cast<size_t>(t)].storage; }

  // The weight whose elements `t` holds: its storage when that is a weight, or the weight
  // that data movement alone (a gather of experts, a layout copy) made it from; -1 otherwise.
  TensorId weight_root(TensorId t) const {
    TensorId s = storage(t);
    for (;;) {
      const TensorInfo& st = in_.tensors[static_cast<size_t>(s)];
      if (st.producer == kNoNode) return st.role == Role::kWeight ? s : -1;
      const TensorId from = moved_from(in_.nodes[static_cast<size_t>(st.producer)]);
      if (from < 0) return -1;
      s = storage(from);
    }
  }

  // The one floating input whose elements data-movement node `n` moves (a gather's table,
  // not its indices); -1 for any other node.
  TensorId moved_from(const Node& n) const {
    if (!moves_values(n)) return -1;
    TensorId from = -1;
    for (TensorId in : n.inputs) {
      if (!dtype_is_float(in_.tensors[static_cast<size_t>(in)].dtype)) continue;
      if (from >= 0) return -1;
      from = in;
    }
    return from;
  }

  // A weight and what data movement makes of it: the storages in the order they are made,
  // and why it cannot be quantised ("" when it can).
  struct WeightClosure {
    std::vector<TensorId> storages;
    std::string why;
  };

  // Every reader of weight `root`, and of the storages data movement makes of it, must be a
  // view, such a mover, or a candidate that multiplies it as its weight.
  WeightClosure weight_closure(TensorId root) const {
    WeightClosure c;
    c.storages = {root};
    const std::string& name = in_.tensors[static_cast<size_t>(root)].name;
    for (size_t i = 0; i < c.storages.size() && c.why.empty(); ++i) {
      const TensorId s = c.storages[i];
      for (TensorId v : views_.at(static_cast<size_t>(s))) {
        const TensorInfo& t = in_.tensors[static_cast<size_t>(v)];
        if (t.dtype != in_.tensors[static_cast<size_t>(s)].dtype) {
          c.why = "'" + t.name + "' reads '" + name + "' as another dtype";
        } else if (t.is_output) {
          c.why = "'" + t.name + "' is an output of the graph";
        }
        for (NodeId reader : t.consumers) {
          const Node& r = in_.nodes[static_cast<size_t>(reader)];
          if (is_view_of(r, s)) continue;
          if (moved_from(r) == v) {
            for (TensorId o : r.outputs) c.storages.push_back(storage(o));
            continue;
          }
          const bool multiplies = std::any_of(candidates_.begin(), candidates_.end(),
                                              [&](const Candidate& w) {
                                                return w.node == reader && storage(w.weight()) == s;
                                              }) &&
                                  std::count(r.inputs.begin(), r.inputs.end(), v) == 1;
          if (!multiplies && c.why.empty())
            c.why = "'" + name + "' is also read by node '" + r.name +
                    "', which the recipe does not quantise";
        }
      }
    }
    return c;
  }

  // Stores weight closure `c` (the weight of candidate `first`) as the recipe's codes, each
  // storage with its scales: the weight's own (a weight of the graph), and each moved copy's,
  // made by the mover that makes the copy from the part of the scales it moves.
  void store_weight(const Candidate& first, const WeightClosure& c,
                    std::map<TensorId, TensorId>& scales) {
    const QuantFormat& f = *recipe_.weights;
    const TensorId root = c.storages.front();
    const TensorInfo& operand = in_.tensors[static_cast<size_t>(first.weight())];
    const int64_t k =
        std::max<int64_t>(contracted_extent(*first.nest, first.nest->inputs[first.w], operand), 1);
    for (TensorId s : c.storages) retype(s, f.codes);
    for (TensorId s : c.storages) {
      const TensorInfo& t = in_.tensors[static_cast<size_t>(s)];
      const TensorId scale =
          new_tensor(t.name + ".scale", f.scale, scale_count(t.elements(), k, f.group), t.producer,
                     s == root ? Role::kWeight : Role::kActivation);
      scales[s] = scale;
      if (s == root) continue;
      // The mover reads the scales of what it moves, in proportion to what it reads of it.
      Node& mover = out_.graph.nodes[static_cast<size_t>(t.producer)];
      const Node& before = in_.nodes[static_cast<size_t>(t.producer)];
      const TensorId from = moved_from(before);
      const size_t i = static_cast<size_t>(
          std::find(before.inputs.begin(), before.inputs.end(), from) - before.inputs.begin());
      const TensorId from_scale = scales.at(storage(from));
      const TensorInfo& full = in_.tensors[static_cast<size_t>(storage(from))];
      const int64_t part = full.bytes() > 0 ? before.input_bytes[i] : 0;
      const int64_t bytes = out_.graph.tensors[static_cast<size_t>(from_scale)].bytes();
      read_scale(mover, from_scale,
                 full.bytes() > 0
                     ? static_cast<int64_t>(static_cast<double>(bytes) * static_cast<double>(part) /
                                            static_cast<double>(full.bytes()))
                     : bytes);
      refresh_read_bytes(mover);
    }
    out_.report.weight_bytes_before =
        saturating_add(out_.report.weight_bytes_before, in_.tensors[root].bytes());
    out_.report.weight_bytes_after = saturating_add(
        out_.report.weight_bytes_after,
        saturating_add(out_.graph.tensors[root].bytes(),
                       out_.graph.tensors[static_cast<size_t>(scales.at(root))].bytes()));
  }

  void skip(const Node& node, const std::string& reason) {
    out_.report.skipped.push_back({node.id, reason});
  }

  // "" when every node that reads activation storage `s` (through any of its views) is a
  // candidate that multiplies it as its activation, or a view of it; why not otherwise.
  std::string only_read_as_activation(TensorId s) const {
    const TensorInfo& st = in_.tensors[static_cast<size_t>(s)];
    for (TensorId v : views_.at(static_cast<size_t>(s))) {
      const TensorInfo& t = in_.tensors[static_cast<size_t>(v)];
      if (t.dtype != st.dtype) return "'" + t.name + "' reads '" + st.name + "' as another dtype";
      if (t.is_output) return "'" + t.name + "' is an output of the graph";
      for (NodeId reader : t.consumers) {
        const Node& r = in_.nodes[static_cast<size_t>(reader)];
        if (is_view_of(r, s)) continue;
        auto it = std::find_if(candidates_.begin(), candidates_.end(),
                               [&](const Candidate& c) { return c.node == reader; });
        const bool ok = it != candidates_.end() && storage(it->activation()) == s &&
                        std::count(r.inputs.begin(), r.inputs.end(), v) == 1;
        if (!ok)
          return "'" + st.name + "' is also read by node '" + r.name + "', which the recipe " +
                 "does not quantise";
      }
    }
    return "";
  }

  bool is_view_of(const Node& r, TensorId s) const {
    if (r.kind != NodeKind::kDataMovement || r.bytes() != 0) return false;
    return std::all_of(r.outputs.begin(), r.outputs.end(), [&](TensorId o) {
      return in_.tensors[static_cast<size_t>(o)].storage == s;
    });
  }

  // Every tensor of storage `s` (the storage and its views) becomes `codes`; the bytes its
  // producer writes follow.
  void retype(TensorId s, DType codes) {
    for (TensorId v : views_.at(static_cast<size_t>(s)))
      out_.graph.tensors[static_cast<size_t>(v)].dtype = codes;
    const NodeId p = in_.tensors[static_cast<size_t>(s)].producer;
    if (p != kNoNode) {
      Node& producer = out_.graph.nodes[static_cast<size_t>(p)];
      const int64_t before = in_.tensors[static_cast<size_t>(s)].bytes();
      producer.bytes_written =
          producer.bytes_written - before + out_.graph.tensors[static_cast<size_t>(s)].bytes();
    }
  }

  // A scale tensor for MAC operand `which` of `c` in `format`, made by `producer` (kNoNode: a
  // weight of its own).
  TensorId add_scale(const Candidate& c, size_t which, const QuantFormat& format, NodeId producer) {
    const TensorInfo& operand = in_.tensors[static_cast<size_t>(c.tensors[which])];
    const int64_t k = contracted_extent(*c.nest, c.nest->inputs[which], operand);
    const TensorInfo& s = in_.tensors[static_cast<size_t>(storage(c.tensors[which]))];
    return new_tensor(s.name + ".scale", format.scale,
                      scale_count(s.elements(), std::max<int64_t>(k, 1), format.group), producer,
                      producer == kNoNode ? Role::kWeight : Role::kActivation);
  }

  // A new one-dim tensor of `elements` `dtype` values, written by `producer` (kNoNode: an
  // input of the graph's, of `role`).
  TensorId new_tensor(const std::string& name, DType dtype, int64_t elements, NodeId producer,
                      Role role) {
    TensorInfo t;
    t.id = static_cast<TensorId>(out_.graph.tensors.size());
    t.dtype = dtype;
    t.role = role;
    t.producer = producer;
    t.storage = t.id;
    t.name = name;
    t.shape = {elements};
    t.dims = SharedDims{name};
    out_.graph.tensors.push_back(std::move(t));
    if (producer != kNoNode) {
      Node& p = out_.graph.nodes[static_cast<size_t>(producer)];
      p.outputs.push_back(out_.graph.tensors.back().id);
      p.bytes_written = saturating_add(p.bytes_written, out_.graph.tensors.back().bytes());
    }
    return out_.graph.tensors.back().id;
  }

  // `node` reads scale tensor `scale` (once): all of it, or `bytes` of it.
  void read_scale(Node& node, TensorId scale, int64_t bytes = -1) {
    if (std::find(node.inputs.begin(), node.inputs.end(), scale) != node.inputs.end()) return;
    TensorInfo& s = out_.graph.tensors[static_cast<size_t>(scale)];
    node.inputs.push_back(scale);
    node.input_bytes.push_back(bytes < 0 ? s.bytes() : std::min(bytes, s.bytes()));
    s.consumers.push_back(node.id);
  }

  void quantise_activation(const Candidate& c, std::map<TensorId, TensorId>& scales,
                           QuantChange& change) {
    const QuantFormat& f = *recipe_.activations;
    Node& node = out_.graph.nodes[static_cast<size_t>(c.node)];
    const TensorId as = storage(c.activation());
    change.activation = in_.tensors[static_cast<size_t>(c.activation())].name;
    auto existing = scales.find(as);
    if (existing != scales.end()) {
      read_scale(node, existing->second);
      return;
    }
    const NodeId p = in_.tensors[static_cast<size_t>(as)].producer;
    const bool by_producer = p != kNoNode &&
                             in_.nodes[static_cast<size_t>(p)].kind == NodeKind::kEinsum &&
                             !is_narrow(in_.tensors[static_cast<size_t>(as)].dtype) &&
                             only_read_as_activation(as).empty();
    const TensorInfo& a = in_.tensors[static_cast<size_t>(by_producer ? as : c.activation())];
    if (by_producer) {
      retype(as, f.codes);
      const TensorId scale = add_scale(c, 1 - c.w, f, p);
      scales[as] = scale;
      read_scale(node, scale);
      quantiser_work(out_.graph.nodes[static_cast<size_t>(p)], a.elements(),
                     out_.graph.tensors[static_cast<size_t>(scale)].elements());
    } else {
      // The prologue quantises what it reads; the scales stay on chip.
      change.prologue = true;
      const int64_t k = contracted_extent(*c.nest, c.nest->inputs[1 - c.w], a);
      quantiser_work(node, a.elements(),
                     scale_count(a.elements(), std::max<int64_t>(k, 1), f.group));
    }
  }

  // A dynamic quantiser's work: per element a max of magnitudes, a multiply by the inverse
  // scale and a rounding to the code; per scale a division.
  void quantiser_work(Node& node, int64_t elements, int64_t scales) {
    add(node, &FlopCounts::compare, elements);
    add(node, &FlopCounts::mul, elements);
    add(node, &FlopCounts::other, elements);
    add(node, &FlopCounts::div, scales);
  }

  // Weight-only: each code converted once; the scales applied to the weights or to each
  // group's partial sums, whichever needs fewer multiplies.
  void dequantise_weight(Node& node, const Candidate& c) {
    const TensorInfo& w = in_.tensors[static_cast<size_t>(c.weight())];
    const int64_t k = contracted_extent(*c.nest, c.nest->inputs[c.w], w);
    const int64_t g = recipe_.weights->group;
    const int64_t group = g > 0 ? std::min(g, k) : k;
    add(node, &FlopCounts::other, w.elements());
    add(node, &FlopCounts::mul, std::min(w.elements(), group > 0 ? c.nest->macs / group : 0));
  }

  // Per-row and per-channel scales: the epilogue multiplies each output by its row's and its
  // column's scale. Scales per K-group of integer codes: each group's partial sum is scaled
  // and added (no integer MMA applies scales). fp8 and fp4 block scales: the block-scaled
  // MMAs (Blackwell's tcgen05.mma kind::mxf8f6f4 and kind::mxf4nvf4) apply them.
  void epilogue(Node& node, const Candidate& c) {
    const int64_t group = recipe_.weights->group;
    if (group == 0) {
      add(node, &FlopCounts::mul, mul_checked(2, outputs(node), node));
    } else if (!dtype_is_float(recipe_.weights->codes)) {
      add(node, &FlopCounts::mul, c.nest->macs / group);
      add(node, &FlopCounts::add, c.nest->macs / group);
    }
  }

  // Elements the node computes: its outputs in the graph as written (not the scales a
  // recipe made it write besides).
  int64_t outputs(const Node& node) const {
    int64_t n = 0;
    for (TensorId t : in_.nodes[static_cast<size_t>(node.id)].outputs)
      n = saturating_add(n, in_.tensors[static_cast<size_t>(t)].elements());
    return n;
  }

  int64_t mul_checked(int64_t a, int64_t b, const Node& node) const {
    return count_mul(a, b, [&] { return total_overflow(in_, node, "FLOPs"); });
  }

  void add(Node& node, int64_t FlopCounts::*kind, int64_t n) {
    node.flops.*kind =
        count_add(node.flops.*kind, n, [&] { return total_overflow(in_, node, "FLOPs"); });
  }

  // The node's MACs in `codes`. Calls that shared their lifted nests still share the retyped
  // ones (the cache-aware mode's searches are per shared nest).
  void set_matrix_dtype(Node& node, DType codes) {
    node.matrix_dtype = codes;
    auto& retyped = retyped_nests_[{node.einsums.get(), codes}];
    if (!retyped) {
      auto nests = std::make_shared<std::vector<Einsum>>(*node.einsums);
      for (Einsum& e : *nests)
        if (e.macs > 0) e.compute_dtype = codes;
      retyped = std::move(nests);
    }
    node.einsums = retyped;
  }

  // The node's reads of its retyped inputs, at their new width.
  void refresh_read_bytes(Node& node) {
    const Node& before = in_.nodes[static_cast<size_t>(node.id)];
    int64_t read = 0;
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const TensorId t = node.inputs[i];
      if (i < before.inputs.size()) {
        const DType from = in_.tensors[static_cast<size_t>(t)].dtype;
        const DType to = out_.graph.tensors[static_cast<size_t>(t)].dtype;
        if (from != to) node.input_bytes[i] = rebits(before.input_bytes[i], from, to);
      }
      read = saturating_add(read, node.input_bytes[i]);
    }
    node.bytes_read = read;
  }

  // What `node` reads of its two MAC operands and their scales.
  int64_t operand_bytes(const Node& node, const Candidate& c) const {
    int64_t n = 0;
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const TensorId t = node.inputs[i];
      const bool operand =
          t == c.tensors[0] || t == c.tensors[1] || (static_cast<size_t>(t) >= in_.tensors.size());
      if (operand) n = saturating_add(n, node.input_bytes[i]);
    }
    return n;
  }

  const Graph& in_;
  const QuantRecipe& recipe_;
  Quantized out_;
  std::vector<std::vector<TensorId>> views_;  // by storage: its tensors (itself too)
  std::vector<Candidate> candidates_;
  std::map<std::pair<const std::vector<Einsum>*, DType>, std::shared_ptr<const std::vector<Einsum>>>
      retyped_nests_;
};

}  // namespace

namespace {

// The weight recipe of `--quantize TEXT` into `recipe`.
void parse_weight_recipe(std::string_view text, QuantRecipe& recipe) {
  const size_t colon = text.find(':');
  const std::string_view name = text.substr(0, colon);
  const auto row = std::find_if(kRecipes.begin(), kRecipes.end(),
                                [&](const RecipeRow& r) { return name == r.name; });
  if (row == kRecipes.end())
    throw recipe_error("unknown quantisation recipe '" + std::string(name) + "'");
  recipe.name = std::string(text);
  QuantFormat weights = row->weights;
  if (row->quantises_activations) recipe.activations = row->activations;
  if (colon != std::string_view::npos) {
    const std::string_view param = text.substr(colon + 1);
    int64_t group = 0;
    const char* end = param.data() + param.size();
    const bool ok = param.size() > 1 && param[0] == 'g' &&
                    std::from_chars(param.data() + 1, end, group).ptr == end && group > 0;
    if (!ok)
      throw recipe_error("'" + std::string(text) + "': the group is written :gN, e.g. " +
                         row->name + ":g64");
    if (!row->group_parameter)
      throw recipe_error("recipe '" + std::string(row->name) +
                         "' has the group its format defines; it takes no :g" +
                         std::to_string(group));
    weights.group = group;
    if (recipe.activations) recipe.activations->group = group;
  }
  const bool mx = std::string_view(row->name) == "mxfp4";
  weights.name = describe(weights, mx);
  if (recipe.activations) recipe.activations->name = describe(*recipe.activations, mx);
  recipe.weights = std::move(weights);
}

}  // namespace

QuantRecipe parse_quant_recipe(std::string_view quantize, std::string_view kv_cache) {
  QuantRecipe recipe;
  if (!quantize.empty()) parse_weight_recipe(quantize, recipe);
  if (!kv_cache.empty()) {
    const auto row = std::find_if(kKvFormats.begin(), kKvFormats.end(),
                                  [&](const KvRow& r) { return kv_cache == r.name; });
    if (row == kKvFormats.end()) {
      std::string names;
      for (const KvRow& r : kKvFormats)
        names += std::string(names.empty() ? "" : ", ") + r.name + " (" +
                 describe(r.format, false) + ")";
      throw UserError(ErrorKind::kArgument, "", Loc{},
                      "unknown KV-cache format '" + std::string(kv_cache) + "'",
                      "formats: " + names);
    }
    recipe.kv_name = row->name;
    recipe.kv_cache = row->format;
    std::string name = describe(row->format, false);
    const size_t k = name.find(" of K");
    if (k != std::string::npos) name.replace(k, 5, " of the head dim");
    recipe.kv_cache->name = std::move(name);
  }
  return recipe;
}

std::vector<std::string> kv_cache_format_names() {
  std::vector<std::string> out;
  for (const KvRow& r : kKvFormats) out.emplace_back(r.name);
  return out;
}

std::vector<std::string> quant_recipe_names() {
  std::vector<std::string> out;
  for (const RecipeRow& r : kRecipes) out.emplace_back(r.name);
  return out;
}

Quantized quantize(const Graph& graph, const QuantRecipe& recipe) {
  return Rewrite(graph, recipe).run();
}

}  // namespace solar
