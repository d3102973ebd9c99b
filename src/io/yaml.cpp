#include "solar/io/yaml.h"

#include <yaml-cpp/yaml.h>

namespace solar {
namespace {

// "p*2+r-1" (AccelForge-style affine projection string, ranks lower-case).
std::string affine_string(const std::vector<ProjectionTerm>& terms, int64_t offset) {
  std::string s;
  for (const ProjectionTerm& t : terms) {
    std::string rank;
    for (char c : t.rank) rank += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (!s.empty())
      s += t.coefficient < 0 ? "-" : "+";
    else if (t.coefficient < 0)
      s += "-";
    const int64_t c = t.coefficient < 0 ? -t.coefficient : t.coefficient;
    s += c == 1 ? rank : rank + "*" + std::to_string(c);
  }
  if (offset != 0 || s.empty()) {
    if (!s.empty())
      s += offset < 0 ? "-" : "+";
    else if (offset < 0)
      s += "-";
    s += std::to_string(offset < 0 ? -offset : offset);
  }
  return s;
}

void emit_operand(YAML::Emitter& out, const Graph& g, const Node& n, const Operand& op) {
  const TensorId id = n.operand_tensor(op);
  out << YAML::BeginMap;
  out << YAML::Key << "name" << YAML::Value
      << (id >= 0 ? g.tensors[static_cast<size_t>(id)].name : n.name + "." + op.name);
  out << YAML::Key << "operand" << YAML::Value << op.name;
  out << YAML::Key << "projection" << YAML::Value << YAML::Flow << YAML::BeginSeq;
  for (size_t i = 0; i < op.projection.size(); ++i)
    out << affine_string(op.projection[i], op.offsets[i]);
  out << YAML::EndSeq;
  // Timeloop: one sum-of-products per tensor dim, [[rank, coefficient], ...].
  out << YAML::Key << "timeloop_projection" << YAML::Value << YAML::Flow << YAML::BeginSeq;
  for (const auto& terms : op.projection) {
    out << YAML::BeginSeq;
    for (const ProjectionTerm& pt : terms) {
      out << YAML::BeginSeq << pt.rank;
      if (pt.coefficient != 1) out << pt.coefficient;
      out << YAML::EndSeq;
    }
    out << YAML::EndSeq;
  }
  out << YAML::EndSeq;
  if (op.is_output) out << YAML::Key << "output" << YAML::Value << true;
  out << YAML::EndMap;
}

}  // namespace

std::string graph_yaml(const Graph& g) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  out << YAML::Key << "schema" << YAML::Value << "solar.einsum_graph/1";
  out << YAML::Key << "source" << YAML::Value << g.source;
  out << YAML::Key << "rank_sizes" << YAML::Value << YAML::BeginMap;
  for (const auto& [name, size] : g.dims) out << YAML::Key << name << YAML::Value << size;
  out << YAML::EndMap;

  out << YAML::Key << "tensors" << YAML::Value << YAML::BeginSeq;
  for (const TensorInfo& t : g.tensors) {
    out << YAML::BeginMap;
    out << YAML::Key << "name" << YAML::Value << t.name;
    out << YAML::Key << "dims" << YAML::Value << YAML::Flow
        << std::vector<std::string>(t.dims.begin(), t.dims.end());
    out << YAML::Key << "shape" << YAML::Value << YAML::Flow
        << std::vector<int64_t>(t.shape.begin(), t.shape.end());
    out << YAML::Key << "dtype" << YAML::Value << dtype_name(t.dtype);
    out << YAML::Key << "bits_per_value" << YAML::Value << dtype_bits(t.dtype);
    out << YAML::Key << "role" << YAML::Value << (t.is_output ? "output" : role_name(t.role));
    out << YAML::Key << "bytes" << YAML::Value << t.bytes();
    if (t.sparsity > 0) out << YAML::Key << "sparsity" << YAML::Value << t.sparsity;
    if (t.storage != t.id)
      out << YAML::Key << "view_of" << YAML::Value
          << g.tensors[static_cast<size_t>(t.storage)].name;
    out << YAML::Key << "producer" << YAML::Value
        << (t.producer >= 0 ? g.nodes[static_cast<size_t>(t.producer)].name : std::string());
    out << YAML::EndMap;
  }
  out << YAML::EndSeq;

  out << YAML::Key << "nodes" << YAML::Value << YAML::BeginSeq;
  for (const Node& n : g.nodes) {
    out << YAML::BeginMap;
    out << YAML::Key << "name" << YAML::Value << n.name;
    out << YAML::Key << "op" << YAML::Value << n.op;
    out << YAML::Key << "kind" << YAML::Value << node_kind_name(n.kind);
    if (n.unit >= 0 && static_cast<size_t>(n.unit) < g.units.size())
      out << YAML::Key << "unit" << YAML::Value << g.units[static_cast<size_t>(n.unit)].name;
    std::vector<std::string> ins, outs;
    for (TensorId t : n.inputs) ins.push_back(g.tensors[static_cast<size_t>(t)].name);
    for (TensorId t : n.outputs) outs.push_back(g.tensors[static_cast<size_t>(t)].name);
    out << YAML::Key << "inputs" << YAML::Value << YAML::Flow << ins;
    out << YAML::Key << "outputs" << YAML::Value << YAML::Flow << outs;
    if (!n.einsum.empty()) out << YAML::Key << "einsum" << YAML::Value << n.einsum;
    out << YAML::Key << "macs" << YAML::Value << n.macs;
    out << YAML::Key << "vector_flops" << YAML::Value << n.vector_flops();
    out << YAML::Key << "bytes" << YAML::Value << n.bytes();
    if (n.einsum_count() > 0) {
      out << YAML::Key << "einsums" << YAML::Value << YAML::BeginSeq;
      for (size_t i = 0; i < n.einsums->size(); ++i) {
        const Einsum& e = (*n.einsums)[i];
        out << YAML::BeginMap;
        out << YAML::Key << "name" << YAML::Value << n.name + "/" + std::to_string(i);
        out << YAML::Key << "einsum" << YAML::Value << e.text;
        out << YAML::Key << "ranks" << YAML::Value << YAML::Flow << e.ranks;
        out << YAML::Key << "rank_sizes" << YAML::Value << YAML::Flow << YAML::BeginMap;
        for (size_t r = 0; r < e.ranks.size(); ++r)
          out << YAML::Key << e.ranks[r] << YAML::Value << e.rank_sizes[r];
        out << YAML::EndMap;
        out << YAML::Key << "bits_per_value" << YAML::Value << YAML::Flow << YAML::BeginMap;
        auto bits = [&](const Operand& op) {
          const TensorId id = n.operand_tensor(op);
          const TensorInfo* t = id >= 0 ? &g.tensors[static_cast<size_t>(id)] : nullptr;
          out << YAML::Key << (t ? t->name : n.name + "." + op.name) << YAML::Value
              << (t ? dtype_bits(t->dtype) : dtype_bits(e.output_dtype));
        };
        for (const Operand& op : e.inputs) bits(op);
        bits(e.output);
        out << YAML::EndMap;
        out << YAML::Key << "reduce" << YAML::Value << reduce_op_name(e.reduce);
        out << YAML::Key << "map" << YAML::Value << e.map_expr;
        out << YAML::Key << "points" << YAML::Value << e.points;
        out << YAML::Key << "macs" << YAML::Value << e.macs;
        out << YAML::Key << "vector_flops" << YAML::Value << e.flops.total();
        out << YAML::Key << "output_on_chip" << YAML::Value << e.output_is_local;
        out << YAML::Key << "tensor_accesses" << YAML::Value << YAML::BeginSeq;
        for (const Operand& op : e.inputs) emit_operand(out, g, n, op);
        emit_operand(out, g, n, e.output);
        out << YAML::EndSeq;
        out << YAML::EndMap;
      }
      out << YAML::EndSeq;
    }
    out << YAML::EndMap;
  }
  out << YAML::EndSeq;
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

}  // namespace solar
