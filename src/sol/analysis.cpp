// Unfused and fused speed-of-light bounds of an einsum graph (docs/sol-modes.md).
#include "solar/sol/analysis.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <map>
#include <tuple>

#include "solar/base/checked.h"
#include "solar/base/error.h"
#include "solar/sol/cache_aware.h"
#include "solar/sol/io_bound.h"
#include "solar/sol/traffic.h"
#include "solar/sol/value_dtypes.h"

namespace solar {
namespace {

// The math-mode key of matrix_flops_per_second that MACs of `dtype` use, before the
// fp32 choice; "" for dtypes that no matrix unit takes (wide integers, bool).
std::string math_mode_key(DType dtype) {
  switch (dtype) {
    case DType::kFp64:
      return "fp64";
    case DType::kFp32:
      return "fp32";
    case DType::kTf32:
      return "tf32";
    case DType::kBf16:
      return "bf16";
    case DType::kFp16:
      return "fp16";
    case DType::kFp8E4M3:
    case DType::kFp8E5M2:
      return "fp8";
    case DType::kNvfp4:
      return "fp4";
    case DType::kInt8:
    case DType::kUint8:
      return "int8";
    case DType::kInt4:
      return "int4";
    case DType::kInt64:
    case DType::kInt32:
    case DType::kInt16:
    case DType::kBool:
      return "";
  }
  return "";
}

// The math mode of fp32 contractions under `options`.
std::string fp32_mode(const ArchSpec& arch, const AnalysisOptions& options) {
  if (options.fp32_math == Fp32Math::kPlatformDefault) return arch.fp32_matrix_mode;
  return fp32_math_name(options.fp32_math);
}

// A narrower format than TF32 for fp32 contractions (bf16, fp16, fp8).
bool narrow_fp32_math(Fp32Math mode) {
  return mode == Fp32Math::kBf16 || mode == Fp32Math::kFp16 || mode == Fp32Math::kFp8;
}

// The options a node's MACs are priced under: --fp32-math if given, else the node's own mode
// (its unit's fp32_math=), else the platform default. A program's "tf32" means TF32 *may* be
// used: on a platform without TF32 units it runs the platform's fp32 path.
// A narrower mode (bf16, fp16, fp8) says the format *may* be used, whoever sets it: a
// platform without its matrix rate runs its default fp32 path.
AnalysisOptions node_options(const Node& node, const ArchSpec& arch,
                             const AnalysisOptions& options) {
  AnalysisOptions out = options;
  if (out.fp32_math == Fp32Math::kPlatformDefault) out.fp32_math = node.fp32_math;
  const bool may = out.fp32_math == Fp32Math::kTf32 ? options.fp32_math != Fp32Math::kTf32
                                                    : narrow_fp32_math(out.fp32_math);
  if (may && !arch.matrix_flops_per_second.count(fp32_math_name(out.fp32_math)))
    out.fp32_math = Fp32Math::kPlatformDefault;
  return out;
}

// Why a node's fp32 contractions use their mode, for Analysis::math_modes.
std::string fp32_reason(const Node& node, const AnalysisOptions& options) {
  if (options.fp32_math != Fp32Math::kPlatformDefault)
    return std::string("--fp32-math ") + fp32_math_name(options.fp32_math);
  if (node.fp32_math != Fp32Math::kPlatformDefault) return "set by the program";
  return "platform default for fp32 contractions";
}

// Compute wins ties (a bound that is exactly balanced is reported compute-bound); a node
// with no arithmetic and no traffic (a view) has no bottleneck.
Bottleneck pick_bottleneck(double matrix_seconds, double vector_seconds, double memory_seconds) {
  if (matrix_seconds == 0.0 && vector_seconds == 0.0 && memory_seconds == 0.0) {
    return {"none", "none"};
  }
  if (matrix_seconds >= vector_seconds && matrix_seconds >= memory_seconds) {
    return {"compute", "matrix"};
  }
  if (vector_seconds >= memory_seconds) return {"compute", "vector"};
  return {"memory", "dram"};
}

double ratio(int64_t numerator, int64_t denominator) {
  return denominator > 0 ? static_cast<double>(numerator) / static_cast<double>(denominator) : 0.0;
}

}  // namespace

double matrix_peak(const ArchSpec& arch, DType dtype, const AnalysisOptions& options,
                   std::string* mode) {
  std::string key = dtype == DType::kFp32 ? fp32_mode(arch, options) : math_mode_key(dtype);
  if (key.empty()) {
    // No matrix unit multiplies wide integers or bools; CUDA cores / SIMD lanes do.
    if (mode) *mode = "vector";
    return vector_peak(arch, DType::kFp32);
  }
  if (mode) *mode = key;
  if (auto it = arch.matrix_flops_per_second.find(key); it != arch.matrix_flops_per_second.end()) {
    return it->second.value;
  }
  // int4 without its own rate: twice the int8 rate. Tensor cores with INT4 (Turing, Ampere,
  // Ada) run it at exactly twice INT8; those without (Hopper, Blackwell, CDNA 3) unpack it to
  // INT8, slower. Twice INT8 is never below what a platform reaches, so the bound holds.
  if (key == "int4") {
    if (auto it = arch.matrix_flops_per_second.find("int8");
        it != arch.matrix_flops_per_second.end()) {
      return 2.0 * it->second.value;
    }
  }
  // fp4 without its own rate: the fastest of the 8- and 16-bit rates. Matrix units without
  // FP4 (Hopper, Ada, Ampere, CDNA 3) take the codes unpacked: e4m3 holds every E2M1 value,
  // int8 holds twice each (0, 1, 2, 3, 4, 6, 8, 12 and their negatives), bf16 and fp16 hold
  // them too, and a kernel rescales per block on the side. None is faster than the fastest of
  // those rates, so the bound holds.
  if (key == "fp4") {
    double best = 0.0;
    for (const char* wider : {"fp8", "int8", "bf16", "fp16"}) {
      auto it = arch.matrix_flops_per_second.find(wider);
      if (it == arch.matrix_flops_per_second.end() || it->second.value <= best) continue;
      best = it->second.value;
      if (mode) *mode = std::string("fp4 at the ") + wider + " rate";
    }
    if (best > 0.0) return best;
  }
  // fp8 and int8 without their own rate (fp8 before Hopper and Ada, a quantisation recipe's
  // codes on such a platform): the faster of the fp16 and bf16 rates. Both hold every e4m3 and
  // e5m2 value and every int8 (|v| <= 128 < 2^8), and their products accumulate exactly in
  // fp32 over the K of a tile; the matrix units then take the codes converted.
  if (key == "fp8" || key == "int8") {
    double best = 0.0;
    for (const char* wider : {"fp16", "bf16"}) {
      auto it = arch.matrix_flops_per_second.find(wider);
      if (it == arch.matrix_flops_per_second.end() || it->second.value <= best) continue;
      best = it->second.value;
      if (mode) *mode = key + " at the " + wider + " rate";
    }
    if (best > 0.0) return best;
  }
  // fp32 / fp64 GEMMs without a matrix rate run on the vector units at the vector rate.
  if (key == "fp32" || key == "fp64") {
    if (auto it = arch.vector_flops_per_second.find(key);
        it != arch.vector_flops_per_second.end()) {
      return it->second.value;
    }
  }
  std::string hint = "add matrix_flops_per_second." + key + " to the spec, or choose another arch";
  if (dtype == DType::kFp32 && key == "tf32") hint = "use --fp32-math fp32, or " + hint;
  throw UserError(
      ErrorKind::kSpec, arch.file, Loc{},
      "arch '" + arch.name + "' has no matrix rate for " + key +
          (key == dtype_name(dtype) ? "" : std::string(" (MACs of ") + dtype_name(dtype) + ")"),
      hint);
}

double vector_peak(const ArchSpec& arch, DType dtype) {
  if (dtype == DType::kFp64 || dtype == DType::kFp16 || dtype == DType::kBf16) {
    auto it = arch.vector_flops_per_second.find(dtype_name(dtype));
    if (it != arch.vector_flops_per_second.end()) return it->second.value;
  }
  auto it = arch.vector_flops_per_second.find("fp32");
  SOLAR_INTERNAL_CHECK(it != arch.vector_flops_per_second.end(),
                       "spec '" + arch.name + "' has no vector fp32 rate (the loader requires it)");
  return it->second.value;
}

namespace {

// `bytes` of `from` elements as bytes of as many `to` elements, rounded down (a need stays a
// lower bound).
int64_t scale_bytes(int64_t bytes, DType from, DType to) {
  const int64_t f = dtype_bits(from), t = dtype_bits(to);
  return saturating_add(saturating_mul(bytes / f, t), (bytes % f) * t / f);
}

// The reads of `v` (intermediate `t` or a view of it) that fused readers need, appended to
// `reads`: through a view, the reads of the view; a cast, what its own readers need of its
// output, in v's element size; a graph output, all of it; any other node, what it reads of v
// (input_bytes: a gather only its rows).
void collect_needs(const Graph& graph, TensorId v, std::vector<StorageAccess>& reads);

// A builtin whose output elements are its input's, one to one (a cast converts each; a
// permutation moves each): its input is needed where its output is.
bool maps_elements(Builtin op) { return op == Builtin::kCast || op == Builtin::kPermute; }

// Bytes of intermediate `t` that its readers need, each element once: storage_union_bytes of
// the reads of t and of its views (disjoint slices add up, one read twice counts once), a
// lower bound of the elements a fused implementation computes, capped at t's size.
int64_t needed_bytes(const Graph& graph, TensorId t) {
  std::vector<StorageAccess> reads;
  collect_needs(graph, t, reads);
  if (reads.empty()) return 0;
  return std::min(storage_union_bytes(graph, graph.tensors.at(t).storage, reads),
                  graph.tensors.at(t).bytes());
}

void collect_needs(const Graph& graph, TensorId v, std::vector<StorageAccess>& reads) {
  const TensorInfo& info = graph.tensors.at(v);
  if (info.is_output) reads.push_back({v, info.bytes()});
  for (const NodeId c : info.consumers) {
    const Node& node = graph.nodes.at(static_cast<size_t>(c));
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      if (node.inputs[i] != v) continue;
      const bool movement = node.kind == NodeKind::kDataMovement;
      if (movement && i == 0 && builtin_info(node.builtin).view) {
        for (const TensorId out : node.outputs) collect_needs(graph, out, reads);
      } else if (movement && maps_elements(node.builtin)) {
        const TensorInfo& out = graph.tensors.at(node.outputs[0]);
        reads.push_back({v, scale_bytes(needed_bytes(graph, out.id), out.dtype, info.dtype)});
      } else if (node.input_bytes[i] > 0) {
        reads.push_back({v, node.input_bytes[i]});
      }
    }
  }
}

// What a node reads of its input `i` that a fused implementation needs: its input_bytes,
// except that a cast or a permutation (a one-to-one map of elements) needs only the elements
// its readers need of its output (`x.float()[ids]` reads the gathered rows of x, not x; the
// keys of an attention that keeps the last few reads those through the keys' transpose).
int64_t fused_read(const Graph& graph, const Node& node, size_t i) {
  if (node.kind != NodeKind::kDataMovement || !maps_elements(node.builtin))
    return node.input_bytes[i];
  const TensorInfo& out = graph.tensors.at(node.outputs[0]);
  const DType in = graph.tensors.at(node.inputs[i]).dtype;
  return std::min(node.input_bytes[i], scale_bytes(needed_bytes(graph, out.id), out.dtype, in));
}

}  // namespace

int64_t fused_bytes(const Graph& graph) {
  FusedBytes fused(graph);
  for (const Node& node : graph.nodes) fused.add(node);
  return fused.total();
}

// Each graph input/weight crosses DRAM once: what its readers fetch of it (directly or
// through views), each element once: storage_union_bytes (disjoint slices add up, a tensor
// read twice is fetched once with unlimited on-chip capacity), capped at its size. Summed in
// tensor id order, as an ordered map would, without a tree node per tensor. Most storages are
// read through one tensor (`first_`); the reads of the others gather in `more_`.
FusedBytes::FusedBytes(const Graph& graph) : graph_(graph), first_(graph.tensors.size()) {}

// In-place updates of an input or weight (writes_in_place: `update`, an in-place scatter; a
// KV cache's new entries) write their elements into its memory: the caller sees them, so
// they cross DRAM. The elements they write need not be read from DRAM by a later reader of
// the result (they are on chip), so the storage's reads count at most its reads less what
// was written (a lower bound of the old elements read).
void FusedBytes::add(const Node& node) {
  const Graph& graph = graph_;
  if (writes_in_place(graph, node)) {
    const TensorId storage = graph.tensors.at(node.outputs[0]).storage;
    if (graph.tensors.at(storage).producer == kNoNode) {  // not an intermediate's memory
      int64_t& w = inplace_[storage];
      w = std::min(saturating_add(w, node.bytes_written), graph.tensors.at(storage).bytes());
    }
  }
  SOLAR_INTERNAL_CHECK(node.input_bytes.size() == node.inputs.size(),
                       "node '" + node.name + "' has " + std::to_string(node.inputs.size()) +
                           " inputs but " + std::to_string(node.input_bytes.size()) +
                           " input_bytes entries");
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const TensorId storage = graph.tensors.at(node.inputs[i]).storage;
    if (graph.tensors.at(storage).producer != kNoNode) continue;  // an intermediate
    if (node.input_bytes[i] <= 0) continue;                       // a view fetches nothing
    const int64_t read = fused_read(graph, node, i);
    StorageAccess& f = first_[static_cast<size_t>(storage)];
    if (f.tensor < 0 || f.tensor == node.inputs[i]) {
      f.tensor = node.inputs[i];
      f.bytes = std::max(f.bytes, read);
    } else {
      more_.push_back({storage, {node.inputs[i], read}});
    }
  }
}

int64_t FusedBytes::in_place_bytes() const {
  int64_t total = 0;
  for (const auto& entry : inplace_) total = saturating_add(total, entry.second);
  return total;
}

int64_t FusedBytes::total() {
  const Graph& graph = graph_;
  const size_t n = graph.tensors.size();
  const std::vector<StorageAccess>& first = first_;
  auto& more = more_;
  const std::map<TensorId, int64_t>& inplace = inplace_;
  std::stable_sort(more.begin(), more.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  // Each term is at most a tensor's bytes, which fit; their sum may not.
  int64_t total = 0;
  auto add = [&](int64_t bytes, TensorId tensor) {
    total = count_add(total, bytes, [&] {
      return count_overflow(
          CountSite{graph.source, Loc{}, ""},
          "fused bytes (the sum overflows at tensor '" + graph.tensors.at(tensor).name + "')");
    });
  };
  auto less_written = [&](TensorId storage, int64_t read) {
    const auto it = inplace.find(storage);
    return it == inplace.end() ? read : std::max<int64_t>(0, read - it->second);
  };
  std::vector<StorageAccess> accesses;
  auto next = more.begin();
  for (size_t t = 0; t < n; ++t) {
    if (first[t].tensor < 0) continue;
    const auto id = static_cast<TensorId>(t);
    if (next == more.end() || next->first != id) {
      add(less_written(id, std::min(first[t].bytes, graph.tensors[t].bytes())), id);
      continue;
    }
    accesses.assign(1, first[t]);
    for (; next != more.end() && next->first == id; ++next) accesses.push_back(next->second);
    add(less_written(id, storage_union_bytes(graph, id, accesses)), id);
  }
  for (const auto& [storage, bytes] : inplace) add(bytes, storage);
  // Each output is written once, through its views: what the views cover (disjoint slices
  // add up, overlapping ones count their union), capped at the storage's size. An output that
  // is a view of a graph input (x.t(), x.unfold(...) returned as they are) aliases memory
  // already there and writes nothing.
  std::vector<TensorId> outputs = graph.outputs;
  std::sort(outputs.begin(), outputs.end());
  outputs.erase(std::unique(outputs.begin(), outputs.end()), outputs.end());
  std::map<TensorId, std::vector<StorageAccess>> written;
  for (TensorId t : outputs) {
    const TensorId storage = graph.tensors.at(t).storage;
    if (graph.tensors.at(storage).producer == kNoNode) continue;  // a view of an input
    written[storage].push_back({t, graph.tensors.at(t).bytes()});
  }
  for (auto& [tensor, views] : written) add(storage_union_bytes(graph, tensor, views), tensor);
  return total;
}

namespace {

// Calls fn(declared, first) for every effective unit in order: `declared` the block of
// graph.units (nullptr for a node alone) and `first` its first node.
template <typename Fn>
void for_each_unit(const Graph& graph, Fn&& fn) {
  for (const Node& node : graph.nodes) {
    if (node.unit < 0) {
      fn(static_cast<const Unit*>(nullptr), node.id);
      continue;
    }
    const Unit& unit = graph.units.at(static_cast<size_t>(node.unit));
    if (!unit.nodes.empty() && unit.nodes.front() == node.id) fn(&unit, node.id);
  }
}

}  // namespace

std::vector<Unit> effective_units(const Graph& graph) {
  std::vector<Unit> units;
  for_each_unit(graph, [&](const Unit* declared, NodeId first) {
    if (declared) {
      units.push_back(*declared);
    } else {
      const Node& node = graph.nodes[static_cast<size_t>(first)];
      Unit unit;
      unit.name = node.name;
      unit.label = node.op;
      unit.loc = node.loc;
      unit.nodes = {node.id};
      units.push_back(std::move(unit));
    }
    units.back().id = static_cast<UnitId>(units.size() - 1);
  });
  return units;
}

std::pair<int64_t, int64_t> unit_bytes(const Graph& graph, const Unit& unit) {
  if (unit.nodes.size() == 1) {
    const Node& node = graph.nodes.at(static_cast<size_t>(unit.nodes.front()));
    return {node.bytes_read, node.bytes_written};
  }
  auto inside = [&](NodeId id) {
    return id != kNoNode && std::binary_search(unit.nodes.begin(), unit.nodes.end(), id);
  };
  SOLAR_INTERNAL_CHECK(std::is_sorted(unit.nodes.begin(), unit.nodes.end()),
                       "unit '" + unit.name + "' lists its nodes out of execution order");
  // Reads: every tensor whose memory lives outside the unit, once, at what the unit's nodes
  // fetch of it (through views too), capped at its storage's size.
  std::map<TensorId, std::vector<StorageAccess>> read;
  // Writes: every tensor the unit produces (memory of its own) that a later node reads or the
  // graph returns, through its views, capped at the storage's size.
  std::map<TensorId, std::vector<StorageAccess>> written;
  // In-place updates (`update`, an in-place scatter) of memory outside the unit: written, and
  // not read back from DRAM by the unit's later readers (as in fused_bytes).
  std::map<TensorId, int64_t> inplace;
  for (NodeId id : unit.nodes) {
    const Node& node = graph.nodes.at(static_cast<size_t>(id));
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const TensorId storage = graph.tensors.at(node.inputs[i]).storage;
      if (inside(graph.tensors.at(storage).producer)) continue;  // on chip inside the unit
      read[storage].push_back({node.inputs[i], node.input_bytes.at(i)});
    }
    for (TensorId t : node.outputs) {
      const TensorInfo& info = graph.tensors.at(t);
      if (writes_in_place(graph, node) && !inside(graph.tensors.at(info.storage).producer)) {
        int64_t& w = inplace[info.storage];  // in place, into memory outside the unit
        w = std::min(saturating_add(w, node.bytes_written), graph.tensors.at(info.storage).bytes());
        continue;
      }
      if (!inside(graph.tensors.at(info.storage).producer)) continue;  // a view of outside memory
      const bool used_after =
          info.is_output || std::any_of(info.consumers.begin(), info.consumers.end(),
                                        [&](NodeId c) { return !inside(c); });
      if (used_after) written[info.storage].push_back({t, info.bytes()});
    }
  }
  const Node& last = graph.nodes.at(static_cast<size_t>(unit.nodes.back()));
  auto sum = [&](std::map<TensorId, std::vector<StorageAccess>>& parts, bool reads,
                 const char* quantity) {
    auto error = [&] {
      return total_overflow(graph, last, std::string(quantity) + " of unit '" + unit.name + "'");
    };
    int64_t total = 0;
    for (auto& [tensor, accesses] : parts) {
      int64_t bytes = storage_union_bytes(graph, tensor, accesses);
      const auto w = inplace.find(tensor);
      if (reads && w != inplace.end()) bytes = std::max<int64_t>(0, bytes - w->second);
      total = count_add(total, bytes, error);
    }
    if (!reads)
      for (const auto& [tensor, bytes] : inplace) total = count_add(total, bytes, error);
    return total;
  };
  return {sum(read, true, "bytes read"), sum(written, false, "bytes written")};
}

int64_t unfused_bytes(const Graph& graph) {
  int64_t total = 0;
  for_each_unit(graph, [&](const Unit* declared, NodeId first) {
    const Node& node = graph.nodes[static_cast<size_t>(first)];
    auto error = [&] { return total_overflow(graph, node, "unfused bytes"); };
    int64_t bytes = node.bytes();
    if (declared) {
      const auto [read, written] = unit_bytes(graph, *declared);
      bytes = count_add(read, written, error);
    }
    total = count_add(total, bytes, error);
  });
  return total;
}

namespace {

// The peak a node's MACs run at: the fastest the platform has among the dtypes that multiply
// its operands' values exactly (mac_dtype_candidates: its own matrix dtype first, whose rate
// must exist), with the math mode's name and the dtype it stands for; under an accuracy
// contract, the fastest format that meets it (`reason` says why).
struct MacRate {
  double peak = 0.0;
  std::string mode;
  DType dtype = DType::kFp32;
  std::string reason;
};

// A matrix format a contraction of wider operands may run in, and the unit roundoff u of its
// operands (2^-(significand bits)). A split format ("bf16x3", "bf16x9") writes each operand
// as a sum of bf16 pieces and adds `products` bf16 products per product: bf16x3 keeps two
// pieces (16 bits) and drops the lo x lo term, bf16x9 three pieces (24 bits, fp32's
// significand), the fp32 emulation cuBLAS ships for Blackwell (CUBLAS_FP32_EMULATED_BF16X9).
struct ContractFormat {
  const char* mode;
  const char* rate;  // the matrix_flops_per_second key it runs at
  int products;      // that rate is divided by
  int bits;          // u = 2^-bits
};
constexpr std::array<ContractFormat, 7> kContractFormats = {{
    {"fp4", "fp4", 1, 2},     // e2m1 (NVFP4, MXFP4 with block scales): 1 stored bit + 1
    {"fp8", "fp8", 1, 4},     // e4m3: 3 stored bits + 1
    {"bf16", "bf16", 1, 8},   // 7 + 1
    {"fp16", "fp16", 1, 11},  // 10 + 1
    {"tf32", "tf32", 1, 11},  // 10 + 1
    {"bf16x3", "bf16", 3, 16},
    {"bf16x9", "bf16", 9, 24},
}};

// Significand bits of a floating value dtype (0 for the others).
int significand_bits(DType d) {
  switch (d) {
    case DType::kFp64:
      return 53;
    case DType::kFp32:
      return 24;
    case DType::kTf32:
    case DType::kFp16:
      return 11;
    case DType::kBf16:
      return 8;
    case DType::kFp8E4M3:
      return 4;
    case DType::kFp8E5M2:
      return 3;
    case DType::kNvfp4:
      return 2;
    default:
      return 0;
  }
}

// The fastest contract format for a node whose operands hold `operands` values: one whose
// operand rounding, sqrt(2/3) u (the RMS relative error of a product of two operands each
// rounded to nearest, errors uniform in [-u, u]), is within `accuracy`, or a split format
// whose pieces hold every operand exactly (their bits cover the operands' significand; bf16
// pieces have fp32's exponent range). A single format that holds the operands exactly is
// already among mac_dtype_candidates (value_dtypes.cpp `holds`, which also checks the
// exponent range): `floor` is the fastest of those. Null when no format beats `floor`.
std::optional<MacRate> contract_rate(const std::vector<DType>& operands, const ArchSpec& arch,
                                     double accuracy, double floor) {
  int data_bits = 0;
  for (DType d : operands) data_bits = std::max(data_bits, significand_bits(d));
  if (data_bits == 0) return std::nullopt;  // integer or bool operands: no contract format
  std::optional<MacRate> best;
  for (const ContractFormat& f : kContractFormats) {
    auto it = arch.matrix_flops_per_second.find(f.rate);
    if (it == arch.matrix_flops_per_second.end()) continue;
    const double peak = it->second.value / f.products;
    if (peak <= (best ? best->peak : floor)) continue;
    const double u = std::ldexp(1.0, -f.bits);
    const double rms = std::sqrt(2.0 / 3.0) * u;
    std::string why;
    if (f.products > 1 && f.bits >= data_bits) {
      why = "holds the operands exactly";
    } else if (rms <= accuracy) {
      char text[160];
      std::snprintf(text, sizeof text, "operand rounding %.2g within the accuracy contract %.2g",
                    rms, accuracy);
      why = text;
    } else {
      continue;
    }
    best = MacRate{peak, f.mode, DType::kFp32, why};
  }
  return best;
}
MacRate mac_rate(const Node& node, const std::vector<DType>& values, const ArchSpec& arch,
                 const AnalysisOptions& options) {
  const AnalysisOptions opts = node_options(node, arch, options);
  const std::vector<DType> candidates = mac_dtype_candidates(node, values);
  MacRate best;
  try {
    best.peak = matrix_peak(arch, candidates.front(), opts, &best.mode);
    best.dtype = candidates.front();
  } catch (const UserError& e) {
    const Diagnostic& d = e.diagnostics().front();
    throw UserError(d.kind, d.file, d.loc, d.message + ", needed by node '" + node.name + "'",
                    d.hint);
  }
  for (size_t i = 1; i < candidates.size(); ++i) {
    // A narrower dtype the platform has no matrix rate for (fp8 before Hopper) is no option.
    if (!arch.matrix_flops_per_second.count(math_mode_key(candidates[i]))) continue;
    std::string mode;
    const double peak = matrix_peak(arch, candidates[i], opts, &mode);
    if (peak > best.peak) best = {peak, mode, candidates[i], ""};
  }
  // The contract prices what the framework's settings (a node's own fp32 mode) would not:
  // --fp32-math alone overrides it for fp32 nodes.
  const bool overridden =
      node.matrix_dtype == DType::kFp32 && options.fp32_math != Fp32Math::kPlatformDefault;
  if (options.accuracy > 0.0 && !overridden) {
    if (auto faster =
            contract_rate(mac_operand_values(node, values), arch, options.accuracy, best.peak)) {
      faster->dtype = node.matrix_dtype;
      return *faster;
    }
  }
  return best;
}

// One node alone: all its traffic crosses DRAM; its MACs at their math mode's peak (`rate`:
// mac_rate of a node with MACs, null for one without, whose rate is not looked up, so no
// matrix rate is needed).
NodeSol analyze_node(const Node& node, const MacRate* rate, const ArchSpec& arch) {
  NodeSol sol;
  sol.node = node.id;
  if (rate) {
    sol.matrix_flops_per_second = rate->peak;
    sol.math_mode = rate->mode;
    sol.matrix_seconds = static_cast<double>(node.matrix_flops()) / sol.matrix_flops_per_second;
  }
  sol.vector_seconds = static_cast<double>(node.vector_flops()) / vector_peak(arch, DType::kFp32);
  sol.memory_seconds = static_cast<double>(node.bytes()) / arch.dram_bytes_per_second.value;
  sol.seconds = std::max({sol.matrix_seconds, sol.vector_seconds, sol.memory_seconds});
  sol.bottleneck = pick_bottleneck(sol.matrix_seconds, sol.vector_seconds, sol.memory_seconds);
  sol.intensity = ratio(node.total_flops(), node.bytes());
  return sol;
}

// Adds node `node` with MACs, run at `rate` (its mac_rate), to the math modes of the graph's
// MACs, grouped by (mode, reason) in first-seen order (sort_math_modes orders them).
void add_math_mode(std::vector<MathModeGroup>& groups, const Graph& graph, const Node& node,
                   const MacRate& rate, const std::vector<DType>& values, const ArchSpec& arch,
                   const AnalysisOptions& options) {
  MathModeGroup g;
  g.matrix_flops_per_second = rate.peak;
  g.mode = rate.mode;
  if (!rate.reason.empty()) {
    g.reason = rate.reason;
  } else if (rate.dtype != node.matrix_dtype) {
    g.reason = std::string(dtype_name(node.matrix_dtype)) + " operands holding ";
    const std::vector<DType> held = mac_operand_values(node, values);
    for (size_t i = 0; i < held.size(); ++i)
      g.reason += std::string(i == 0 ? "" : " and ") + dtype_name(held[i]);
    g.reason += " values";
  } else if (node.matrix_dtype == DType::kFp32) {
    g.reason = fp32_reason(node, options);
    g.vector_units = !arch.matrix_flops_per_second.count(g.mode);
  }
  auto it = std::find_if(groups.begin(), groups.end(), [&](const MathModeGroup& x) {
    return x.mode == g.mode && x.reason == g.reason;
  });
  if (it == groups.end()) it = groups.insert(groups.end(), g);
  ++it->nodes;
  it->macs = count_add(it->macs, node.macs, [&] {
    return total_overflow(graph, node, std::string("MACs of ") + dtype_name(node.matrix_dtype));
  });
}

// The groups of add_math_mode, most MACs first (ties in first-seen order).
void sort_math_modes(std::vector<MathModeGroup>& groups) {
  std::stable_sort(groups.begin(), groups.end(),
                   [](const MathModeGroup& a, const MathModeGroup& b) { return a.macs > b.macs; });
}

// The report's math-mode text: the group with the most MACs first, e.g. "tf32 (platform
// default for fp32 contractions)", "fp32 (set by the program; vector units, no matrix rate);
// also tf32 (set by the program)"; a mode given for only part of the contraction nodes says
// for how many. A graph without MACs reports the fp32 mode.
std::string math_mode_text(const std::vector<MathModeGroup>& groups, const ArchSpec& arch,
                           const AnalysisOptions& options, double* peak) {
  if (groups.empty()) {
    std::string mode;
    *peak = matrix_peak(arch, DType::kFp32, options, &mode);
    Node none;
    std::string text = mode + " (" + fp32_reason(none, options);
    if (!arch.matrix_flops_per_second.count(mode)) text += "; vector units, no matrix rate";
    return text + ")";
  }
  *peak = groups.front().matrix_flops_per_second;
  int64_t nodes = 0;
  for (const MathModeGroup& g : groups) nodes += g.nodes;
  std::string text;
  for (const MathModeGroup& g : groups) {
    if (!text.empty()) text += "; also ";
    text += g.mode;
    std::vector<std::string> notes;
    if (!g.reason.empty()) notes.push_back(g.reason);
    if (groups.size() > 1)
      notes.push_back(std::to_string(g.nodes) + " of " + std::to_string(nodes) + " nodes");
    if (g.vector_units) notes.push_back("vector units, no matrix rate");
    if (notes.empty()) continue;
    text += " (";
    for (size_t i = 0; i < notes.size(); ++i) text += (i ? "; " : "") + notes[i];
    text += ")";
  }
  return text;
}

constexpr const char* kColdAssumption =
    "inputs and weights start in DRAM (caches flushed between runs, as SOL-ExecBench's "
    "protocol does)";

// 132644864 -> "132,644,864".
std::string with_commas(int64_t n) {
  std::string digits = std::to_string(n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0 && digits[i - 1] != '-') out += ',';
    out += digits[i];
  }
  return out;
}

// The starting state (StartingState): cold unless `warm` is asked and the spec has a cache
// level; `in_place` the bytes written into inputs' memory (each such resident byte saves two
// transfers).
StartingState starting_state(const ArchSpec& arch, const CacheLevel& cache, bool warm,
                             int64_t in_place) {
  StartingState out;
  out.assumption = kColdAssumption;
  if (!warm) return out;
  if (cache.level.empty()) {
    out.assumption += "; --warm needs a last-level cache and " + cache.reason;
    return out;
  }
  out.warm = true;
  out.level = cache.level;
  out.capacity_bytes = cache.capacity_bytes;
  for (const MemoryLevel& level : arch.on_chip) {
    if (level.name == cache.level && level.bytes_per_second)
      out.bytes_per_second = *level.bytes_per_second;
  }
  const auto c = static_cast<int64_t>(cache.capacity_bytes);
  out.served_max_bytes = saturating_add(c, std::min(c, in_place));
  out.assumption = "warm: a kernel repeated without flushing; up to " + with_commas(c) +
                   " B (the capacity of " + cache.level +
                   ") of the inputs, weights and outputs stay on chip between runs and are "
                   "served by " +
                   cache.level + " instead of DRAM";
  out.assumption += out.bytes_per_second > 0.0 ? ""
                                               : " (the spec gives no " + cache.level +
                                                     " bandwidth: those bytes are charged no time)";
  return out;
}

// Moves what a warm start serves of `g`'s DRAM bytes to the cache level, and recomputes its
// time: max(matrix, vector, DRAM bytes / DRAM bandwidth, cache bytes / cache bandwidth), the
// two memories working side by side.
void warm_start(GraphSol& g, const StartingState& state, double dram_bytes_per_second) {
  if (!state.warm) return;
  g.llc_bytes = std::min(g.bytes, state.served_max_bytes);
  g.bytes -= g.llc_bytes;
  g.memory_seconds = static_cast<double>(g.bytes) / dram_bytes_per_second;
  g.llc_seconds = state.bytes_per_second > 0.0
                      ? static_cast<double>(g.llc_bytes) / state.bytes_per_second
                      : 0.0;
  g.seconds = std::max({g.matrix_seconds, g.vector_seconds, g.memory_seconds, g.llc_seconds});
  g.bottleneck = pick_bottleneck(g.matrix_seconds, g.vector_seconds,
                                 std::max(g.memory_seconds, g.llc_seconds));
  if (g.bottleneck.kind == "memory" && g.llc_seconds > g.memory_seconds) g.bottleneck.unit = "llc";
  g.intensity = ratio(g.flops, g.bytes);
}

}  // namespace

CacheLevel cache_level(const ArchSpec& arch) {
  CacheLevel out;
  if (arch.on_chip.empty() || arch.cache_level.empty()) {
    out.reason = "arch '" + arch.name +
                 "' has no on-chip memory level in its spec, so there is no cache-aware bound";
    return out;
  }
  for (const MemoryLevel& level : arch.on_chip) {
    if (level.name != arch.cache_level) continue;
    if (level.capacity_bytes <= 0.0) {
      out.reason = "on-chip level '" + level.name + "' of arch '" + arch.name + "' has no capacity";
      return out;
    }
    out.available = true;
    out.level = level.name;
    out.capacity_bytes = level.capacity_bytes;
    for (const MemoryLevel& any : arch.on_chip)
      out.bound_capacity_bytes += std::max(any.capacity_bytes, 0.0);
    return out;
  }
  out.reason = "arch '" + arch.name + "' names cache_level '" + arch.cache_level +
               "', which is not one of its on-chip levels";
  return out;
}

namespace {

// analyze on a graph the recipe, if any, was applied to; `quantised` (null without a recipe)
// marks the nodes it quantised, whose math mode then names it.
Analysis analyze_graph(const Graph& graph, const ArchSpec& arch, const AnalysisOptions& options,
                       const QuantReport* quantised) {
  SOLAR_INTERNAL_CHECK(arch.dram_bytes_per_second.value > 0.0,
                       "spec '" + arch.name + "' has no DRAM rate");
  Analysis out;
  out.arch = arch.name;
  out.vector_flops_per_second = vector_peak(arch, DType::kFp32);
  out.dram_bytes_per_second = arch.dram_bytes_per_second.value;

  // Unfused: the sum of the per-node bounds. Both modes share the FLOPs and compute times.
  GraphSol& unfused = out.unfused;
  GraphSol& fused = out.fused;
  unfused.mode = "unfused";
  fused.mode = "fused";
  // One walk over the nodes feeds every pass that needs the whole graph before the results
  // per node: the value dtypes, the fused bytes, the I/O bounds' problems and the schedules'
  // steps. A graph larger than the last-level cache is then fetched from memory once, not
  // once per pass (bench/README.md, "Where the growth is").
  out.cache = cache_level(arch);
  const bool cache_aware = out.cache.available && options.cache_aware;
  ValueDtypes value_pass(graph);
  FusedBytes fused_pass(graph);
  std::optional<IoBounds> bounds;
  std::optional<CacheSchedules> schedules;
  if (cache_aware) {
    bounds.emplace(graph, IoBounds::Incremental{});
    schedules.emplace(graph, CacheSchedules::Incremental{}, options.memo);
  }
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node& node = graph.nodes[i];
    // The records of the tensors the node kAhead on reads (graph.h, prefetch): a
    // model's weights were made first and, in a graph larger than the cache, are long
    // evicted when their reader comes.
    constexpr size_t kAhead = 4;
    if (i + kAhead < graph.nodes.size()) {
      for (TensorId t : graph.nodes[i + kAhead].inputs)
        prefetch(graph.tensors[static_cast<size_t>(t)]);
    }
    value_pass.add(node);
    fused_pass.add(node);
    if (cache_aware) {
      bounds->add(node);
      schedules->add(node);
    }
  }
  const std::vector<DType> values = std::move(value_pass).take();
  // The option that set a node's MAC format (a weight-only recipe keeps the activations').
  std::vector<std::string> set_by(quantised ? graph.nodes.size() : 0);
  if (quantised) {
    for (const QuantChange& c : quantised->changes) {
      if (c.matrix_before == c.matrix_after) continue;
      set_by[static_cast<size_t>(c.node)] = c.cache.empty()
                                                ? "--quantize " + quantised->recipe
                                                : "--kv-cache " + quantised->applied.kv_name;
    }
  }
  out.nodes.reserve(graph.nodes.size());
  // Each node's MAC rate is looked up once, for its result and its math-mode group.
  for (const Node& node : graph.nodes) {
    std::optional<MacRate> rate;
    if (node.macs > 0) rate = mac_rate(node, values, arch, options);
    NodeSol sol = analyze_node(node, rate ? &*rate : nullptr, arch);
    auto sum = [&](int64_t into, int64_t term, const char* quantity) {
      return count_add(into, term, [&] { return total_overflow(graph, node, quantity); });
    };
    unfused.flops = sum(unfused.flops, node.total_flops(), "FLOPs");
    unfused.matrix_flops = sum(unfused.matrix_flops, node.matrix_flops(), "matrix FLOPs");
    unfused.vector_flops = sum(unfused.vector_flops, node.vector_flops(), "vector FLOPs");
    for (GraphSol* g : {&unfused, &fused}) {
      g->matrix_seconds += sol.matrix_seconds;
      g->vector_seconds += sol.vector_seconds;
    }
    // After the sums: a group's MACs overflow only where 2 x all MACs did, which is named.
    if (rate && rate->reason.empty() && !set_by.empty())
      rate->reason = set_by[static_cast<size_t>(node.id)];
    if (rate) add_math_mode(out.math_modes, graph, node, *rate, values, arch, options);
    out.nodes.push_back(std::move(sol));
  }
  // Each source operator alone: its nodes' compute, its own boundary traffic. At most one
  // unit per node: reserved, so that the array does not grow by copying.
  out.units.reserve(graph.nodes.size());
  for_each_unit(graph, [&](const Unit* declared, NodeId first) {
    UnitSol sol;
    sol.unit = static_cast<UnitId>(out.units.size());
    sol.declared = declared ? declared->id : -1;
    sol.first = first;
    const Node& node = graph.nodes[static_cast<size_t>(first)];
    if (declared) {
      std::tie(sol.bytes_read, sol.bytes_written) = unit_bytes(graph, *declared);
      for (NodeId id : declared->nodes) {
        sol.matrix_seconds += out.nodes[static_cast<size_t>(id)].matrix_seconds;
        sol.vector_seconds += out.nodes[static_cast<size_t>(id)].vector_seconds;
      }
    } else {
      sol.bytes_read = node.bytes_read;
      sol.bytes_written = node.bytes_written;
      sol.matrix_seconds = out.nodes[static_cast<size_t>(first)].matrix_seconds;
      sol.vector_seconds = out.nodes[static_cast<size_t>(first)].vector_seconds;
    }
    sol.memory_seconds = static_cast<double>(sol.bytes()) / out.dram_bytes_per_second;
    sol.seconds = std::max({sol.matrix_seconds, sol.vector_seconds, sol.memory_seconds});
    sol.bottleneck = pick_bottleneck(sol.matrix_seconds, sol.vector_seconds, sol.memory_seconds);
    unfused.bytes = count_add(unfused.bytes, sol.bytes(),
                              [&] { return total_overflow(graph, node, "unfused bytes"); });
    unfused.memory_seconds += sol.memory_seconds;
    unfused.seconds += sol.seconds;
    out.units.push_back(std::move(sol));
  });
  fused.flops = unfused.flops;
  fused.matrix_flops = unfused.matrix_flops;
  fused.vector_flops = unfused.vector_flops;
  unfused.bottleneck =
      pick_bottleneck(unfused.matrix_seconds, unfused.vector_seconds, unfused.memory_seconds);
  unfused.intensity = ratio(unfused.flops, unfused.bytes);

  // Fused: one roofline over the whole graph with only its boundary traffic.
  fused.bytes = fused_pass.total();
  fused.memory_seconds = static_cast<double>(fused.bytes) / out.dram_bytes_per_second;
  fused.seconds = std::max({fused.matrix_seconds, fused.vector_seconds, fused.memory_seconds});
  fused.bottleneck =
      pick_bottleneck(fused.matrix_seconds, fused.vector_seconds, fused.memory_seconds);
  fused.intensity = ratio(fused.flops, fused.bytes);
  out.starting_state = starting_state(arch, out.cache, options.warm, fused_pass.in_place_bytes());

  // Cache-aware: the same compute terms, DRAM bytes with a finite on-chip buffer.
  if (!options.cache_aware && out.cache.available) {
    out.cache.available = false;
    out.cache.reason = "the cache-aware mode was not requested";
  }
  GraphSol& cached = out.cache_aware;
  cached.mode = "cache_aware";
  if (out.cache.available) {
    cached.flops = fused.flops;
    cached.matrix_flops = fused.matrix_flops;
    cached.vector_flops = fused.vector_flops;
    cached.matrix_seconds = fused.matrix_seconds;
    cached.vector_seconds = fused.vector_seconds;
    bounds->finish(fused.bytes);
    schedules->finish(fused.bytes);
    const double bound_c = out.cache.bound_capacity_bytes, schedule_c = out.cache.capacity_bytes;
    cached.bytes = bounds->graph_bytes(bound_c);
    cached.memory_seconds = static_cast<double>(cached.bytes) / out.dram_bytes_per_second;
    cached.seconds =
        std::max({cached.matrix_seconds, cached.vector_seconds, cached.memory_seconds});
    cached.bottleneck =
        pick_bottleneck(cached.matrix_seconds, cached.vector_seconds, cached.memory_seconds);
    cached.intensity = ratio(cached.flops, cached.bytes);
    CacheSchedule& schedule = out.cache_schedule;
    if (const auto b = schedules->graph_bytes(schedule_c)) {
      schedule.found = true;
      schedule.bytes = *b;
      schedule.seconds = std::max({cached.matrix_seconds, cached.vector_seconds,
                                   static_cast<double>(*b) / out.dram_bytes_per_second});
      schedule.gap = ratio(*b, cached.bytes);
    }
    for (NodeSol& sol : out.nodes) {
      sol.cache_aware_bytes = bounds->node_bytes(sol.node, bound_c);
      sol.cache_aware_seconds =
          std::max({sol.matrix_seconds, sol.vector_seconds,
                    static_cast<double>(sol.cache_aware_bytes) / out.dram_bytes_per_second});
      sol.cache_schedule_bytes = schedules->node_bytes(sol.node, schedule_c);
    }
    // After the schedule's gap, which compares cold traffic with cold traffic.
    warm_start(cached, out.starting_state, out.dram_bytes_per_second);
  }
  // After the cache-aware bound, which starts from the cold fused bytes.
  warm_start(fused, out.starting_state, out.dram_bytes_per_second);

  out.fp32_math = fp32_mode(arch, options);
  sort_math_modes(out.math_modes);
  out.math_mode = math_mode_text(out.math_modes, arch, options, &out.matrix_flops_per_second);
  out.ridge_matrix = out.matrix_flops_per_second / out.dram_bytes_per_second;
  out.ridge_vector = out.vector_flops_per_second / out.dram_bytes_per_second;
  return out;
}

}  // namespace

Analysis analyze(const Graph& graph, const ArchSpec& arch, const AnalysisOptions& options) {
  if (!options.quantize) return analyze_graph(graph, arch, options, nullptr);
  Quantized q = quantize(graph, *options.quantize);
  Analysis out = analyze_graph(q.graph, arch, options, &q.report);
  out.quantization = std::move(q.report);
  return out;
}

}  // namespace solar
