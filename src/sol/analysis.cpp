// Unfused and fused speed-of-light bounds of an einsum graph (docs/sol-modes.md).
#include "solar/sol/analysis.h"

#include <algorithm>
#include <map>

#include "solar/base/checked.h"
#include "solar/base/error.h"
#include "solar/sol/cache_aware.h"

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
    case DType::kInt4:
      return "int8";
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
  if (options.fp32_math == Fp32Math::kFp32) return "fp32";
  if (options.fp32_math == Fp32Math::kTf32) return "tf32";
  return arch.fp32_matrix_mode;
}

// Why fp32 contractions use that mode, for Analysis::math_mode.
std::string fp32_reason(const AnalysisOptions& options) {
  if (options.fp32_math == Fp32Math::kFp32) return "--fp32-math fp32";
  if (options.fp32_math == Fp32Math::kTf32) return "--fp32-math tf32";
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

int64_t fused_bytes(const Graph& graph) {
  // Each graph input/weight crosses DRAM once: what its readers fetch of it (directly or
  // through views: disjoint slices add up), capped at its size (a tensor read twice is
  // fetched once with unlimited on-chip capacity).
  std::map<TensorId, int64_t> read;
  for (const Node& node : graph.nodes) {
    SOLAR_INTERNAL_CHECK(node.input_bytes.size() == node.inputs.size(),
                         "node '" + node.name + "' has " + std::to_string(node.inputs.size()) +
                             " inputs but " + std::to_string(node.input_bytes.size()) +
                             " input_bytes entries");
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const TensorId storage = graph.tensors.at(node.inputs[i]).storage;
      if (graph.tensors.at(storage).producer != kNoNode) continue;  // an intermediate
      int64_t& bytes = read[storage];
      bytes = saturating_add(bytes, node.input_bytes[i]);  // capped at its size below
    }
  }
  // Each term is at most a tensor's bytes, which fit; their sum may not.
  int64_t total = 0;
  auto add = [&](int64_t bytes, TensorId tensor) {
    total = count_add(total, bytes, [&] {
      return count_overflow(
          CountSite{graph.source, Loc{}, ""},
          "fused bytes (the sum overflows at tensor '" + graph.tensors.at(tensor).name + "')");
    });
  };
  for (const auto& [tensor, bytes] : read)
    add(std::min(bytes, graph.tensors.at(tensor).bytes()), tensor);
  // Each output is written once, through its views: what the views cover (disjoint slices
  // add up), capped at the storage's size. An output that is a view of a graph input (x.t(),
  // x.unfold(...) returned as they are) aliases memory already there and writes nothing.
  std::vector<TensorId> outputs = graph.outputs;
  std::sort(outputs.begin(), outputs.end());
  outputs.erase(std::unique(outputs.begin(), outputs.end()), outputs.end());
  std::map<TensorId, int64_t> written;
  for (TensorId t : outputs) {
    const TensorId storage = graph.tensors.at(t).storage;
    if (graph.tensors.at(storage).producer == kNoNode) continue;  // a view of an input
    written[storage] = saturating_add(written[storage], graph.tensors.at(t).bytes());
  }
  for (const auto& [tensor, bytes] : written)
    add(std::min(bytes, graph.tensors.at(tensor).bytes()), tensor);
  return total;
}

namespace {

// One node alone: all its traffic crosses DRAM (unfused); its MACs at their math mode's peak.
NodeSol analyze_node(const Node& node, const ArchSpec& arch, const AnalysisOptions& options) {
  NodeSol sol;
  sol.node = node.id;
  if (node.macs > 0) {  // no MACs: no rate is looked up, so no matrix rate is needed
    try {
      sol.matrix_flops_per_second = matrix_peak(arch, node.matrix_dtype, options, &sol.math_mode);
    } catch (const UserError& e) {
      const Diagnostic& d = e.diagnostics().front();
      throw UserError(d.kind, d.file, d.loc, d.message + ", needed by node '" + node.name + "'",
                      d.hint);
    }
    sol.matrix_seconds = static_cast<double>(node.matrix_flops()) / sol.matrix_flops_per_second;
  }
  sol.vector_seconds = static_cast<double>(node.vector_flops()) / vector_peak(arch, DType::kFp32);
  sol.memory_seconds = static_cast<double>(node.bytes()) / arch.dram_bytes_per_second.value;
  sol.seconds = std::max({sol.matrix_seconds, sol.vector_seconds, sol.memory_seconds});
  sol.bottleneck = pick_bottleneck(sol.matrix_seconds, sol.vector_seconds, sol.memory_seconds);
  sol.intensity = ratio(node.total_flops(), node.bytes());
  return sol;
}

// The graph's headline math mode, that of the dtype with the most MACs (fp32 if none), e.g.
// "tf32 (platform default for fp32 contractions)" or "bf16; also tf32 (...)". Sets `peak` to
// that mode's rate.
std::string headline_math_mode(const Graph& graph, const ArchSpec& arch,
                               const AnalysisOptions& options, double* peak) {
  std::vector<std::pair<DType, int64_t>> macs_by_dtype;  // first-seen order
  for (const Node& node : graph.nodes) {
    if (node.macs <= 0) continue;
    auto it = std::find_if(macs_by_dtype.begin(), macs_by_dtype.end(),
                           [&](const auto& p) { return p.first == node.matrix_dtype; });
    if (it == macs_by_dtype.end()) {
      macs_by_dtype.emplace_back(node.matrix_dtype, node.macs);
    } else {
      it->second = count_add(it->second, node.macs, [&] {
        return total_overflow(graph, node, std::string("MACs of ") + dtype_name(node.matrix_dtype));
      });
    }
  }
  DType dominant = DType::kFp32;
  int64_t most = 0;
  for (const auto& [dtype, macs] : macs_by_dtype) {
    if (macs > most) {
      dominant = dtype;
      most = macs;
    }
  }
  auto describe = [&](DType dtype, const std::string& mode) {
    if (dtype != DType::kFp32) return mode;
    std::string text = mode + " (" + fp32_reason(options);
    if (!arch.matrix_flops_per_second.count(mode)) text += "; vector units, no matrix rate";
    return text + ")";
  };
  std::string mode;
  *peak = matrix_peak(arch, dominant, options, &mode);
  std::string text = describe(dominant, mode);
  std::vector<std::string> listed = {mode};
  for (const auto& [dtype, macs] : macs_by_dtype) {
    std::string other;
    matrix_peak(arch, dtype, options, &other);
    if (std::find(listed.begin(), listed.end(), other) != listed.end()) continue;
    listed.push_back(other);
    text += "; also " + describe(dtype, other);
  }
  return text;
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
    return out;
  }
  out.reason = "arch '" + arch.name + "' names cache_level '" + arch.cache_level +
               "', which is not one of its on-chip levels";
  return out;
}

Analysis analyze(const Graph& graph, const ArchSpec& arch, const AnalysisOptions& options) {
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
  for (const Node& node : graph.nodes) {
    NodeSol sol = analyze_node(node, arch, options);
    auto sum = [&](int64_t into, int64_t term, const char* quantity) {
      return count_add(into, term, [&] { return total_overflow(graph, node, quantity); });
    };
    unfused.flops = sum(unfused.flops, node.total_flops(), "FLOPs");
    unfused.matrix_flops = sum(unfused.matrix_flops, node.matrix_flops(), "matrix FLOPs");
    unfused.vector_flops = sum(unfused.vector_flops, node.vector_flops(), "vector FLOPs");
    unfused.bytes = sum(unfused.bytes, node.bytes(), "unfused bytes");
    for (GraphSol* g : {&unfused, &fused}) {
      g->matrix_seconds += sol.matrix_seconds;
      g->vector_seconds += sol.vector_seconds;
    }
    unfused.memory_seconds += sol.memory_seconds;
    unfused.seconds += sol.seconds;
    out.nodes.push_back(std::move(sol));
  }
  fused.flops = unfused.flops;
  fused.matrix_flops = unfused.matrix_flops;
  fused.vector_flops = unfused.vector_flops;
  unfused.bottleneck =
      pick_bottleneck(unfused.matrix_seconds, unfused.vector_seconds, unfused.memory_seconds);
  unfused.intensity = ratio(unfused.flops, unfused.bytes);

  // Fused: one roofline over the whole graph with only its boundary traffic.
  fused.bytes = fused_bytes(graph);
  fused.memory_seconds = static_cast<double>(fused.bytes) / out.dram_bytes_per_second;
  fused.seconds = std::max({fused.matrix_seconds, fused.vector_seconds, fused.memory_seconds});
  fused.bottleneck =
      pick_bottleneck(fused.matrix_seconds, fused.vector_seconds, fused.memory_seconds);
  fused.intensity = ratio(fused.flops, fused.bytes);

  // Cache-aware: the same compute terms, DRAM bytes with a finite on-chip buffer.
  out.cache = cache_level(arch);
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
    cached.bytes = cache_aware_graph_bytes(graph, out.cache.capacity_bytes);
    cached.memory_seconds = static_cast<double>(cached.bytes) / out.dram_bytes_per_second;
    cached.seconds =
        std::max({cached.matrix_seconds, cached.vector_seconds, cached.memory_seconds});
    cached.bottleneck =
        pick_bottleneck(cached.matrix_seconds, cached.vector_seconds, cached.memory_seconds);
    cached.intensity = ratio(cached.flops, cached.bytes);
    for (NodeSol& sol : out.nodes) {
      sol.cache_aware_bytes = cache_aware_node_bytes(graph, sol.node, out.cache.capacity_bytes);
      sol.cache_aware_seconds =
          std::max({sol.matrix_seconds, sol.vector_seconds,
                    static_cast<double>(sol.cache_aware_bytes) / out.dram_bytes_per_second});
    }
  }

  out.fp32_math = fp32_mode(arch, options);
  out.math_mode = headline_math_mode(graph, arch, options, &out.matrix_flops_per_second);
  out.ridge_matrix = out.matrix_flops_per_second / out.dram_bytes_per_second;
  out.ridge_vector = out.vector_flops_per_second / out.dram_bytes_per_second;
  return out;
}

}  // namespace solar
