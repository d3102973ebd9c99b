#include "solar/io/json.h"

#include <nlohmann/json.hpp>

#include "solar/sol/quantize.h"

namespace solar {
namespace {

using nlohmann::json;
using ordered = nlohmann::ordered_json;

ordered flops_by_kind(const FlopCounts& f) {
  return ordered{{"add", f.add},         {"mul", f.mul},
                 {"div", f.div},         {"transcendental", f.transcendental},
                 {"compare", f.compare}, {"other", f.other}};
}

std::string loc_text(const Graph& g, Loc loc) {
  return g.source + ":" + std::to_string(loc.line) + ":" + std::to_string(loc.col);
}

// What Analysis::quantization changed: the recipe, its formats, each quantised node and the
// contractions it left, with why.
ordered quantization_doc(const Graph& graph, const QuantReport& q) {
  ordered changes = ordered::array(), skipped = ordered::array();
  for (const QuantChange& c : q.changes) {
    changes.push_back(ordered{{"node", graph.nodes[static_cast<size_t>(c.node)].name},
                              {"weight", c.weight},
                              {"cache", c.cache},
                              {"activation", c.activation},
                              {"quantised_by", c.activation.empty() ? ""
                                               : c.prologue         ? "prologue"
                                                                    : "producer"},
                              {"bytes_before", c.bytes_before},
                              {"bytes_after", c.bytes_after},
                              {"matrix_before", dtype_name(c.matrix_before)},
                              {"matrix_after", dtype_name(c.matrix_after)}});
  }
  for (const QuantSkip& s : q.skipped)
    skipped.push_back(
        ordered{{"node", graph.nodes[static_cast<size_t>(s.node)].name}, {"reason", s.reason}});
  auto or_null = [](const std::string& s) { return s.empty() ? ordered(nullptr) : ordered(s); };
  return ordered{{"recipe", or_null(q.recipe)},
                 {"weights", or_null(q.weights)},
                 {"activations", or_null(q.activations)},
                 {"weight_bytes_before", q.weight_bytes_before},
                 {"weight_bytes_after", q.weight_bytes_after},
                 {"kv_cache", or_null(q.kv_cache)},
                 {"kv_inputs", q.kv_inputs},
                 {"kv_skipped", q.kv_skipped},
                 {"kv_bytes_before", q.kv_bytes_before},
                 {"kv_bytes_after", q.kv_bytes_after},
                 {"nodes", changes},
                 {"skipped", skipped}};
}

ordered document(const Graph& graph, const ArchSpec& arch, const Analysis& a,
                 const ValidationInfo& validation) {
  ordered doc;
  doc["schema"] = "solar.analysis/1";
  doc["source"] = graph.source;
  doc["arch"] =
      ordered{{"name", arch.name}, {"description", arch.description}, {"file", arch.file}};
  doc["math_mode"] = a.math_mode;
  doc["fp32_math"] = a.fp32_math;
  ordered modes = ordered::array();
  for (const MathModeGroup& g : a.math_modes) {
    modes.push_back(ordered{{"mode", g.mode},
                            {"reason", g.reason},
                            {"vector_units", g.vector_units},
                            {"nodes", g.nodes},
                            {"macs", g.macs},
                            {"matrix_flops_per_second", g.matrix_flops_per_second}});
  }
  doc["math_modes"] = modes;
  ordered dims = ordered::object();
  for (const auto& [name, size] : graph.dims) dims[name] = size;
  doc["dims"] = dims;
  doc["validation"] = ordered{{"status", validation.status}, {"detail", validation.detail}};
  doc["peaks"] = ordered{{"matrix_flops_per_second", a.matrix_flops_per_second},
                         {"vector_flops_per_second", a.vector_flops_per_second},
                         {"dram_bytes_per_second", a.dram_bytes_per_second},
                         {"ridge_matrix_flops_per_byte", a.ridge_matrix},
                         {"ridge_vector_flops_per_byte", a.ridge_vector}};
  // The cache-aware mode's fields are null when the arch has no cache level.
  const bool cached = a.cache.available;
  auto or_null = [&](auto value) { return cached ? ordered(value) : ordered(nullptr); };
  doc["cache"] = cached ? ordered{{"level", a.cache.level},
                                  {"capacity_bytes", a.cache.capacity_bytes},
                                  {"bound_capacity_bytes", a.cache.bound_capacity_bytes},
                                  {"reason", ""}}
                        : ordered{{"level", nullptr},
                                  {"capacity_bytes", nullptr},
                                  {"bound_capacity_bytes", nullptr},
                                  {"reason", a.cache.reason}};
  // Where the fused and cache-aware bounds assume the data starts (StartingState).
  const StartingState& start = a.starting_state;
  doc["starting_state"] = ordered{
      {"warm", start.warm},
      {"assumption", start.assumption},
      {"level", start.warm ? ordered(start.level) : ordered(nullptr)},
      {"capacity_bytes", start.capacity_bytes},
      {"bytes_per_second", start.bytes_per_second},
      {"llc_bytes",
       ordered{{"fused", a.fused.llc_bytes}, {"cache_aware", or_null(a.cache_aware.llc_bytes)}}}};
  FlopCounts all;
  for (const Node& n : graph.nodes) {
    add_flops(all, n.flops, [&](const char* kind) {
      return total_overflow(graph, n, std::string("vector FLOPs of kind '") + kind + "'");
    });
  }
  doc["totals"] = ordered{
      {"macs", graph.total_macs()},
      {"flops", a.fused.flops},
      {"matrix_flops", a.fused.matrix_flops},
      {"vector_flops", a.fused.vector_flops},
      {"vector_flops_by_kind", flops_by_kind(all)},
      {"bytes", ordered{{"unfused", a.unfused.bytes},
                        {"fused", a.fused.bytes},
                        {"cache_aware", or_null(a.cache_aware.bytes)}}},
      {"seconds", ordered{{"unfused", a.unfused.seconds},
                          {"fused", a.fused.seconds},
                          {"cache_aware", or_null(a.cache_aware.seconds)}}},
      {"bottleneck", ordered{{"unfused", a.unfused.bottleneck.kind},
                             {"fused", a.fused.bottleneck.kind},
                             {"cache_aware", or_null(a.cache_aware.bottleneck.kind)}}},
      {"bound_by", ordered{{"unfused", a.unfused.bottleneck.unit},
                           {"fused", a.fused.bottleneck.unit},
                           {"cache_aware", or_null(a.cache_aware.bottleneck.unit)}}},
      {"intensity", ordered{{"unfused", a.unfused.intensity},
                            {"fused", a.fused.intensity},
                            {"cache_aware", or_null(a.cache_aware.intensity)}}},
      {"fusion_benefit", a.fused.seconds > 0 ? a.unfused.seconds / a.fused.seconds : 1.0},
  };
  // The best schedule found beside the cache-aware bound: achievable, not a bound.
  const CacheSchedule& sched = a.cache_schedule;
  doc["totals"]["cache_schedule"] =
      cached && sched.found
          ? ordered{{"bytes", sched.bytes}, {"seconds", sched.seconds}, {"gap", sched.gap}}
          : ordered(nullptr);
  const std::vector<Unit> units = effective_units(graph);
  ordered unit_docs = ordered::array();
  for (const Unit& u : units) {
    const UnitSol& s = a.units[static_cast<size_t>(u.id)];
    ordered members = ordered::array();
    for (NodeId n : u.nodes) members.push_back(graph.nodes[static_cast<size_t>(n)].name);
    unit_docs.push_back(ordered{
        {"name", u.name},
        {"label", u.label},
        {"declared", u.declared},
        {"nodes", members},
        {"bytes", s.bytes()},
        {"bytes_read", s.bytes_read},
        {"bytes_written", s.bytes_written},
        {"seconds", ordered{{"unfused", s.seconds},
                            {"matrix", s.matrix_seconds},
                            {"vector", s.vector_seconds},
                            {"memory", s.memory_seconds}}},
        {"bottleneck", s.bottleneck.kind},
        {"bound_by", s.bottleneck.unit},
        {"location", loc_text(graph, u.loc)},
    });
  }
  ordered nodes = ordered::array();
  for (const Node& n : graph.nodes) {
    const NodeSol& s = a.nodes[static_cast<size_t>(n.id)];
    ordered inputs = ordered::array(), outputs = ordered::array();
    for (TensorId t : n.inputs) inputs.push_back(graph.tensors[static_cast<size_t>(t)].name);
    for (TensorId t : n.outputs) outputs.push_back(graph.tensors[static_cast<size_t>(t)].name);
    nodes.push_back(ordered{
        {"name", n.name},
        {"op", n.op},
        {"kind", node_kind_name(n.kind)},
        {"unit", n.unit >= 0 ? graph.units[static_cast<size_t>(n.unit)].name : n.name},
        {"einsum", n.einsum},
        {"macs", n.macs},
        {"flops", n.total_flops()},
        {"matrix_flops", n.matrix_flops()},
        {"vector_flops", n.vector_flops()},
        {"vector_flops_by_kind", flops_by_kind(n.flops)},
        {"bytes", n.bytes()},
        {"bytes_read", n.bytes_read},
        {"bytes_written", n.bytes_written},
        {"bytes_cache_aware", or_null(s.cache_aware_bytes)},
        {"bytes_cache_schedule",
         cached && s.cache_schedule_bytes ? ordered(*s.cache_schedule_bytes) : ordered(nullptr)},
        {"intensity", s.intensity},
        {"math_mode", s.math_mode},
        {"seconds", ordered{{"unfused", s.seconds},
                            {"cache_aware", or_null(s.cache_aware_seconds)},
                            {"matrix", s.matrix_seconds},
                            {"vector", s.vector_seconds},
                            {"memory", s.memory_seconds}}},
        {"bottleneck", s.bottleneck.kind},
        {"bound_by", s.bottleneck.unit},
        {"inputs", inputs},
        {"outputs", outputs},
        {"location", loc_text(graph, n.loc)},
    });
  }
  doc["nodes"] = nodes;
  doc["units"] = unit_docs;
  return doc;
}

// The graph `a` describes: `graph`, or under a quantisation recipe the graph it analysed (the
// same nodes with the recipe's bytes and FLOPs).
ordered document_of(const Graph& graph, const ArchSpec& arch, const Analysis& a,
                    const ValidationInfo& validation) {
  if (!a.quantization) return document(graph, arch, a, validation);
  const Quantized q = quantize(graph, a.quantization->applied);
  ordered doc = document(q.graph, arch, a, validation);
  doc["quantization"] = quantization_doc(q.graph, *a.quantization);
  return doc;
}

// `doc` with its `measurement` object parsed from `text` ("" adds nothing).
ordered with_measurement(ordered doc, const std::string& text) {
  if (text.empty()) return doc;
  ordered m = ordered::parse(text, nullptr, /*allow_exceptions=*/false);
  if (m.is_discarded() || !m.is_object())
    throw InternalError("analysis JSON: the measurement is not a JSON object");
  doc["measurement"] = std::move(m);
  return doc;
}

}  // namespace

std::string analysis_json(const Graph& graph, const ArchSpec& arch, const Analysis& analysis,
                          const ValidationInfo& validation, int indent,
                          const std::string& measurement) {
  return with_measurement(document_of(graph, arch, analysis, validation), measurement).dump(indent);
}

std::string analyses_json(const Graph& graph, const std::vector<ArchSpec>& archs,
                          const std::vector<Analysis>& analyses, const ValidationInfo& validation,
                          int indent, const std::vector<std::string>& measurements) {
  SOLAR_INTERNAL_CHECK(measurements.empty() || measurements.size() == archs.size(),
                       "analysis JSON: one measurement per analysis");
  ordered doc;
  doc["schema"] = "solar.analyses/1";
  doc["analyses"] = ordered::array();
  for (size_t i = 0; i < archs.size(); ++i)
    doc["analyses"].push_back(
        with_measurement(document_of(graph, archs[i], analyses[i], validation),
                         measurements.empty() ? "" : measurements[i]));
  return doc.dump(indent);
}

}  // namespace solar
