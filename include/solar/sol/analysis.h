// Speed-of-light analysis of an einsum graph on an architecture spec (docs/sol-modes.md).
//
//   unfused: every source operator (unit) alone; T = sum over units of
//            max(matrix s, vector s, bytes / beta)
//   fused:   intermediates stay on chip; only graph inputs, weights and outputs cross DRAM;
//            T = max(sum matrix s, sum vector s, fused bytes / beta)
//   cache_aware: the chip holds at most C bytes (its on-chip levels); DRAM bytes = the proven
//            lower bound of sol/io_bound.h, max(fused bytes, per-nest I/O bounds at C);
//            T = max(sum matrix s, sum vector s, bound bytes / beta). Beside it, the best
//            schedule found (sol/cache_aware.h): an achievable traffic, not a bound.
//
// Matrix seconds = 2 * MACs / matrix peak of the MACs' math mode; vector seconds = non-MAC
// FLOPs / vector peak. The math mode of fp32 contractions is explicit (Fp32Math).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "solar/arch/spec.h"
#include "solar/graph/graph.h"
#include "solar/sol/quantize.h"
#include "solar/sol/traffic.h"

namespace solar {

class TilingMemo;

struct AnalysisOptions {
  // kFp32 / kTf32 override every fp32 contraction (`--fp32-math`); kPlatformDefault keeps
  // each node's own mode (Node::fp32_math, set by the program's units) and takes the spec's
  // fp32_matrix_mode for nodes that set none.
  Fp32Math fp32_math = Fp32Math::kPlatformDefault;
  // The accuracy contract (docs/sol-modes.md, "The accuracy contract"): the relative error a
  // correct implementation may make in a contraction's outputs (atol + rtol of the user's
  // tolerance on unit-scale data). Each floating-point contraction is then priced at the
  // fastest matrix format whose operand rounding stays within it (or that holds its values
  // exactly: a split bf16x9 product for fp32), unless --fp32-math overrides fp32 nodes.
  // 0: no contract (each node's own mode, else the platform default).
  double accuracy = 0.0;
  bool cache_aware = true;  // run the tiling search (false: Analysis::cache says skipped)
  // The starting state (docs/sol-modes.md, "Starting state"): false, every input and weight
  // starts in DRAM (caches flushed between runs, SOL-ExecBench's protocol); true, a kernel
  // repeated without flushing: up to the last-level cache's capacity of the fused and
  // cache-aware modes' DRAM bytes are served by that cache instead (StartingState).
  bool warm = false;
  // The tiling searches to reuse and add to (sol/cache_aware.h); null: this analysis's own.
  TilingMemo* memo = nullptr;
  // A quantisation recipe (sol/quantize.h, `--quantize`): the graph is analysed as the recipe
  // stores and multiplies its weight contractions; Analysis::quantization says what changed.
  std::optional<QuantRecipe> quantize;
};

// "compute" or "memory"; for compute, `unit` says which compute resource bounds it. Ties go
// to compute (matrix before vector). A node with no FLOPs and no bytes (a view) has
// {"none", "none"}. Views of string literals: trivially copied and destroyed, which keeps
// the per-node results small (a 40,000-node analysis holds 80,000 of these).
struct Bottleneck {
  std::string_view kind;  // "compute" | "memory" | "none"
  std::string_view unit;  // "matrix" | "vector" | "dram" | "none"
};

struct NodeSol {
  NodeId node = 0;
  double matrix_seconds = 0.0;
  double vector_seconds = 0.0;
  double memory_seconds = 0.0;  // unfused bytes / beta
  double seconds = 0.0;         // max of the three
  Bottleneck bottleneck;
  double intensity = 0.0;  // FLOPs per unfused byte (0 if no bytes)
  std::string math_mode;   // math mode of its MACs ("tf32", "bf16", ...; "" if no MACs)
  double matrix_flops_per_second = 0.0;  // the peak used for its MACs
  // Cache-aware mode (only when Analysis::cache.available): the node alone with C bytes on
  // chip: the proven lower bound on its DRAM bytes and max(matrix, vector, those bytes / beta).
  int64_t cache_aware_bytes = 0;
  double cache_aware_seconds = 0.0;
  // The best schedule found for the node alone at the cache level's capacity: achievable
  // DRAM bytes (>= the bound); nullopt if no tiling of some nest fits.
  std::optional<int64_t> cache_schedule_bytes;
};

// One source operator alone (the unfused mode's unit, Graph::units): what it reads from
// outside and what is used after it cross DRAM; its inner intermediates stay on chip.
struct UnitSol {
  UnitId unit = 0;       // position in effective_units
  UnitId declared = -1;  // the block in Graph::units, or -1 for a node alone
  NodeId first = 0;      // its first node
  int64_t bytes_read = 0;
  int64_t bytes_written = 0;
  double matrix_seconds = 0.0;  // sum over its nodes
  double vector_seconds = 0.0;
  double memory_seconds = 0.0;  // its bytes / beta
  double seconds = 0.0;         // max of the three
  Bottleneck bottleneck;
  int64_t bytes() const { return bytes_read + bytes_written; }
};

// The math mode of a group of contraction nodes (Analysis::math_modes): the rate their MACs
// use and why.
struct MathModeGroup {
  std::string mode;           // "tf32", "fp32", "bf16", "vector", ...
  std::string reason;         // for fp32 MACs: "--fp32-math fp32", "set by the program",
                              // "platform default for fp32 contractions"; under an accuracy
                              // contract why its format meets it; "" for other dtypes
  bool vector_units = false;  // fp32/fp64 with no matrix rate: the vector rate is used
  int64_t nodes = 0;
  int64_t macs = 0;
  double matrix_flops_per_second = 0.0;
};

struct GraphSol {
  std::string mode;  // "unfused" | "fused" | "cache_aware"
  int64_t flops = 0;
  int64_t matrix_flops = 0;
  int64_t vector_flops = 0;
  int64_t bytes = 0;  // DRAM bytes
  double matrix_seconds = 0.0;
  double vector_seconds = 0.0;
  double memory_seconds = 0.0;  // bytes / DRAM bandwidth
  // Warm start only (StartingState::warm; fused and cache-aware modes): the bytes the
  // last-level cache serves instead of DRAM, and llc_bytes / its bandwidth (0 when the spec
  // gives none). seconds = max(matrix, vector, memory, llc).
  int64_t llc_bytes = 0;
  double llc_seconds = 0.0;
  double seconds = 0.0;
  Bottleneck bottleneck;
  double intensity = 0.0;  // FLOPs per byte
};

// The on-chip level the cache-aware mode uses, or why there is none.
struct CacheLevel {
  bool available = false;
  std::string level;            // "L2"
  double capacity_bytes = 0.0;  // its capacity: the schedules search tilings that fit it
  // Every on-chip level of the spec together: the capacity C the bound assumes (data may sit
  // in any level), equal to capacity_bytes when the spec lists one level.
  double bound_capacity_bytes = 0.0;
  std::string reason;  // when not available: "arch 'B200' has no on-chip level ..."
};

// The best schedule found for the whole graph at the cache level's capacity (an achievable
// traffic, not a bound), beside the cache-aware bound.
struct CacheSchedule {
  bool found = false;    // false: no tiling of some nest fits the capacity
  int64_t bytes = 0;     // its DRAM bytes (>= Analysis::cache_aware.bytes)
  double seconds = 0.0;  // max(sum matrix s, sum vector s, bytes / beta)
  double gap = 0.0;      // bytes / the bound's bytes (>= 1; 0 when the bound is 0)
};

// Where the fused and cache-aware bounds assume the data starts (docs/sol-modes.md, "Starting
// state"). Cold (the default): "inputs and weights start in DRAM". Warm: a kernel repeated
// without flushing keeps at most `capacity_bytes` (the cache level's) on chip between runs;
// each resident byte saves one DRAM transfer (a read of an input or weight, or the write-back
// of an output), two where an input is updated in place (its read and its write), so at most
// served_max_bytes = C + min(C, in-place bytes) of a mode's DRAM bytes move to the cache.
struct StartingState {
  bool warm = false;       // true only when asked and the spec has a cache level
  std::string assumption;  // one line for reports: "inputs and weights start in DRAM ..."
  std::string level;       // the last-level cache (ArchSpec::cache_level) when warm
  double capacity_bytes = 0.0;
  double bytes_per_second = 0.0;  // its bandwidth; 0: the spec gives none (no time charged)
  int64_t served_max_bytes = 0;
};

struct Analysis {
  std::string arch;
  std::string math_mode;                 // e.g. "tf32 (platform default for fp32 contractions)"
  std::string fp32_math;                 // the resolved mode for fp32 contractions: "tf32" | "fp32"
  double matrix_flops_per_second = 0.0;  // peak of the graph's dominant MAC dtype
  double vector_flops_per_second = 0.0;  // fp32 vector peak
  double dram_bytes_per_second = 0.0;
  double ridge_matrix = 0.0;  // FLOP/byte where matrix compute meets DRAM
  double ridge_vector = 0.0;
  std::vector<NodeSol> nodes;             // indexed like graph.nodes
  std::vector<UnitSol> units;             // indexed like graph.units (one per node if it has none)
  std::vector<MathModeGroup> math_modes;  // by MACs, most first
  GraphSol unfused;
  GraphSol fused;
  CacheLevel cache;      // the level used by `cache_aware`
  GraphSol cache_aware;  // the bound; meaningful only if cache.available (mode "cache_aware")
  CacheSchedule cache_schedule;  // meaningful only if cache.available
  StartingState starting_state;  // applies to fused and cache_aware (unfused: always cold)
  // What AnalysisOptions::quantize changed; the node results are those of the quantised graph
  // (the same nodes, in the same order).
  std::optional<QuantReport> quantization;
};

// The level named by arch.cache_level, or why the cache-aware mode has none.
CacheLevel cache_level(const ArchSpec& arch);

// Bytes that cross DRAM in the fused mode: each graph input/weight once (the most any
// reader fetches of it) plus each graph output once.
int64_t fused_bytes(const Graph& graph);

// fused_bytes one node at a time, for a pass that shares its walk over the nodes with others
// (analyze's: a graph larger than the last-level cache is then fetched once, not once per
// pass): add every node in execution order, then total() (a UserError of kind `overflow`
// when the sum does not fit).
class FusedBytes {
 public:
  explicit FusedBytes(const Graph& graph);
  void add(const Node& node);
  int64_t total();
  // The bytes written in place into inputs' and weights' memory (a KV cache's new entries),
  // part of total(): such storage is both read and written.
  int64_t in_place_bytes() const;

 private:
  const Graph& graph_;
  // Per storage (dense by tensor id: a model has thousands of weights) the first tensor it
  // is read through and the most read of it; the reads through other tensors of it in `more_`.
  std::vector<StorageAccess> first_;
  std::vector<std::pair<TensorId, StorageAccess>> more_;
  std::map<TensorId, int64_t> inplace_;  // in-place writes into an input's or weight's memory
};

// The units the unfused mode runs alone, in the order of their first nodes: each block of
// graph.units, and a unit of its own for every node outside one (named as the node, `id` its
// position in this list). Analysis::units follows this order.
std::vector<Unit> effective_units(const Graph& graph);

// DRAM traffic of one unit alone (docs/sol-modes.md, "Unfused"): a unit of one node moves
// that node's bytes; a larger unit reads each tensor from outside it once (what its nodes
// fetch of it, capped at its storage's size) and writes each tensor it produces that a node
// after it reads or the graph returns, once. Returns {read, written}.
std::pair<int64_t, int64_t> unit_bytes(const Graph& graph, const Unit& unit);
// The unfused mode's DRAM bytes: the sum of unit_bytes over effective_units.
int64_t unfused_bytes(const Graph& graph);

// Peak FLOP/s for MACs of `dtype` under `options`; sets `mode` to the math mode used.
// A dtype the spec has no rate for is a UserError (kSpec) naming the arch and the dtype.
double matrix_peak(const ArchSpec& arch, DType dtype, const AnalysisOptions& options,
                   std::string* mode);
double vector_peak(const ArchSpec& arch, DType dtype);

Analysis analyze(const Graph& graph, const ArchSpec& arch, const AnalysisOptions& options);

}  // namespace solar
