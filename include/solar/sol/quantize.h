// Quantisation recipes (docs/sol-modes.md, "Quantisation recipes"): `--quantize RECIPE` prices
// a graph as an inference engine runs it quantised. The recipe applies to the operands of the
// contractions that read a weight (linear layers, convolutions) and to nothing else: norms,
// softmax, residuals, attention's products of two activations and every bias stay in the
// program's format. It is a pricing transform of the traced graph, not of the program:
// validation checks the program as written, and whether the model's accuracy survives the
// recipe is the user's call.
//
// What changes, per quantised contraction:
//   - its weight is stored as the recipe's codes, plus one scale per `group` elements of the
//     contracted dims (a new weight tensor "<weight>.scale" the node reads);
//   - recipes that quantise activations: the other operand is stored as codes plus scales
//     too, written by its producer where every reader of it is a quantised contraction (the
//     producer's epilogue quantises), else read in the program's format and quantised by the
//     contraction's prologue; the quantiser's vector work (per element: a max of magnitudes, a
//     multiply and a rounding, `compare` + `mul` + `other`; per scale: a `div`) is counted
//     where it runs, and the MACs run in the codes' format;
//   - weight-only recipes: the MACs keep the activations' format; the kernel converts every
//     weight code once (`other`) and applies the scales, one `mul` per weight element or per
//     output and K-group, whichever is fewer (scaling each group's partial sum);
//   - per-row scales (w8a8, fp8) cost the GEMM's epilogue 2 `mul` per output; block scales of
//     nvfp4 and mxfp4 are applied inside the MMA (tcgen05.mma kind::mxf4nvf4 / mxf4) and
//     cost no vector work.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "solar/base/dtype.h"
#include "solar/graph/graph.h"

namespace solar {

// How one operand is stored: codes, and one scale per `group` elements of the contracted
// dims (0: one scale per row, all of them), or one for the whole tensor (`per_tensor`).
struct QuantFormat {
  DType codes = DType::kInt8;
  DType scale = DType::kFp32;
  int64_t group = 0;
  bool per_tensor = false;
  std::string name;  // "int4, one bf16 scale per 128 of K"
};

// A weight recipe (`--quantize`), a KV-cache format (`--kv-cache`), or both.
struct QuantRecipe {
  std::string name;                    // as given: "w4a16", "w4a16:g64"; "" without a weight recipe
  std::optional<QuantFormat> weights;  // nullopt: the weights' contractions as written
  std::optional<QuantFormat> activations;  // nullopt: weight-only (or no weight recipe)
  std::string kv_name;                     // as given: "fp8"; "" without a KV-cache format
  // The KV cache: every floating graph input (role input) that the step appends to (a
  // concatenation or an in-place update with new entries) and whose values reach only
  // the attention's products, through data movement (views, concatenations, copies).
  // Stored in this format, with the copies on the way, and multiplied in it.
  std::optional<QuantFormat> kv_cache;
};

// The recipe of `--quantize QUANTIZE --kv-cache KV_CACHE` (either may be ""): QUANTIZE is
// RECIPE or RECIPE:gN (a group size, for the recipes whose group is not fixed by their
// format); KV_CACHE one of fp8, int8, nvfp4. A UserError (kind `argument`) naming the
// recipes or the formats otherwise.
QuantRecipe parse_quant_recipe(std::string_view quantize, std::string_view kv_cache = "");
// The recipe names and the KV-cache formats, in the order docs list them.
std::vector<std::string> quant_recipe_names();
std::vector<std::string> kv_cache_format_names();

// One quantised contraction: its operands' bytes as it reads them (codes and scales) before
// and after, and the format of its MACs.
struct QuantChange {
  NodeId node = 0;
  std::string weight;      // the weight tensor quantised ("" for an attention product)
  std::string cache;       // the KV-cache operand it reads ("" for a weight's product)
  std::string activation;  // the other operand, quantised ("" for weight-only recipes)
  bool prologue = false;   // the activation is quantised by this node, not by its producer
  int64_t bytes_before = 0;
  int64_t bytes_after = 0;
  DType matrix_before = DType::kFp32;
  DType matrix_after = DType::kFp32;
};

// A contraction left as it was, and why.
struct QuantSkip {
  NodeId node = 0;
  std::string reason;
};

struct QuantReport {
  QuantRecipe applied;  // the recipe, to apply again (the JSON's quantised nodes)
  std::string recipe;   // QuantRecipe::name
  std::string weights;
  std::string activations;  // "" for weight-only
  std::vector<QuantChange> changes;
  std::vector<QuantSkip> skipped;
  // Every quantised weight: bytes before, and codes plus scales after.
  int64_t weight_bytes_before = 0;
  int64_t weight_bytes_after = 0;
  std::string kv_cache;                 // the KV-cache format in words ("" without one)
  std::vector<std::string> kv_inputs;   // the graph inputs found to be the KV cache
  std::vector<std::string> kv_skipped;  // "'name': why" for appended inputs left as written
  int64_t kv_bytes_before = 0;          // those inputs, as written
  int64_t kv_bytes_after = 0;           // in the KV-cache format, with their scales
};

struct Quantized {
  Graph graph;
  QuantReport report;
};

// `graph` with `recipe` applied. Adds tensors (the scales), never nodes: node ids, units and
// the execution order are those of `graph`. The KV cache's attention products are priced as
// an FP8 or FP4 attention kernel runs them (FlashAttention-3's FP8 path): the cache's codes
// times the other operand quantised in the prologue.
Quantized quantize(const Graph& graph, const QuantRecipe& recipe);

}  // namespace solar
