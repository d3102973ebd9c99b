// Chain reordering: enumerate the association orders of multi-operand products and of
// chains of contraction nodes, and cost each (include/solar/sol/chains.h).
#include "solar/sol/chains.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <numeric>

#include "solar/base/checked.h"
#include "solar/base/error.h"
#include "solar/graph/attrs.h"

namespace solar {
namespace {

using Mask = uint64_t;

// A chain's counts: exact or refused (kind `overflow`); find_chains names the chain's nodes.
UserError chain_overflow() {
  return count_overflow(CountSite{"", Loc{}, "a chain"},
                        "costs (the MACs, FLOPs or bytes of an association order)");
}

int64_t chain_mul(int64_t a, int64_t b) { return count_mul(a, b, chain_overflow); }
int64_t chain_add(int64_t a, int64_t b) { return count_add(a, b, chain_overflow); }
int64_t chain_bytes(DType dtype, int64_t elements) {
  if (auto bytes = checked_dtype_bytes(dtype, elements)) return *bytes;
  throw chain_overflow();
}

// A partial product over operands [i, j]: its expression and the cost of its steps.
struct Partial {
  std::string expression;
  int64_t macs = 0;
  int64_t flops = 0;
  int64_t intermediate_bytes = 0;  // intermediates inside it (not itself), each once
};

// Single-letter names for the einsum string: the rank names themselves when they are all
// single letters, else a, b, c, ... in order of first appearance.
std::map<std::string, std::string> rank_letters(const std::vector<ChainTensor>& operands,
                                                const ChainTensor& output) {
  std::vector<std::string> order;
  auto add = [&](const ChainTensor& t) {
    for (const auto& r : t.ranks) {
      if (std::find(order.begin(), order.end(), r) == order.end()) order.push_back(r);
    }
  };
  for (const auto& t : operands) add(t);
  add(output);
  const bool single = std::all_of(order.begin(), order.end(), [](const std::string& r) {
    return r.size() == 1 && std::isalpha(static_cast<unsigned char>(r[0]));
  });
  const std::string letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
  std::map<std::string, std::string> out;
  for (size_t i = 0; i < order.size(); ++i) {
    out[order[i]] = single ? order[i] : std::string(1, letters[i % letters.size()]);
  }
  return out;
}

}  // namespace

Chain chain_orders(const std::vector<ChainTensor>& operands, const ChainTensor& output,
                   const std::map<std::string, int64_t>& rank_sizes) {
  const size_t n = operands.size();
  SOLAR_INTERNAL_CHECK(n >= 2, "a chain needs at least two operands");
  if (n > kMaxChainOperands) {
    throw UserError(ErrorKind::kArgument, "", Loc{},
                    "a chain of " + std::to_string(n) + " operands has too many orders to list",
                    "at most " + std::to_string(kMaxChainOperands) + " operands are enumerated");
  }
  // Ranks as bits.
  std::vector<std::string> names;
  std::vector<int64_t> sizes;
  auto mask_of = [&](const ChainTensor& t) {
    Mask m = 0;
    for (const auto& r : t.ranks) {
      auto it = std::find(names.begin(), names.end(), r);
      if (it == names.end()) {
        auto size = rank_sizes.find(r);
        SOLAR_INTERNAL_CHECK(size != rank_sizes.end(), "chain rank '" + r + "' has no size");
        SOLAR_INTERNAL_CHECK(names.size() < 64, "a chain has more than 64 ranks");
        names.push_back(r);
        sizes.push_back(size->second);
        it = names.end() - 1;
      }
      m |= Mask{1} << (it - names.begin());
    }
    return m;
  };
  std::vector<Mask> masks;
  for (const auto& t : operands) masks.push_back(mask_of(t));
  const Mask out_mask = mask_of(output);
  auto elements = [&](Mask m) {
    int64_t e = 1;
    for (size_t b = 0; b < names.size(); ++b) {
      if (m & (Mask{1} << b)) e = chain_mul(e, sizes[b]);
    }
    return e;
  };
  // The ranks a partial product over [i, j] keeps: its own that others or the output need.
  auto kept = [&](size_t i, size_t j) {
    if (i == j) return masks[i];
    if (i == 0 && j == n - 1) return out_mask;
    Mask inside = 0, outside = out_mask;
    for (size_t k = 0; k < n; ++k) (k >= i && k <= j ? inside : outside) |= masks[k];
    return inside & outside;
  };
  const DType inter_dtype = output.dtype;

  // All trees of [i, j], memoised; the split nearest the right end comes first, so the
  // first tree of every interval is its left-to-right order.
  std::map<std::pair<size_t, size_t>, std::vector<Partial>> memo;
  std::function<const std::vector<Partial>&(size_t, size_t)> trees =
      [&](size_t i, size_t j) -> const std::vector<Partial>& {
    auto key = std::make_pair(i, j);
    if (auto it = memo.find(key); it != memo.end()) return it->second;
    std::vector<Partial> out;
    if (i == j) {
      out.push_back(Partial{operands[i].name, 0, 0, 0});
    } else {
      const Mask self = kept(i, j);
      const bool root = i == 0 && j == n - 1;
      for (size_t k = j; k-- > i;) {
        const Mask l = kept(i, k), r = kept(k + 1, j);
        const int64_t points = elements(l | r);
        const bool sums = ((l | r) & ~self) != 0;
        const int64_t self_bytes = root ? 0 : chain_bytes(inter_dtype, elements(self));
        for (const Partial& a : trees(i, k)) {
          for (const Partial& b : trees(k + 1, j)) {
            Partial p;
            auto wrap = [](const std::string& e, bool leaf) { return leaf ? e : "(" + e + ")"; };
            p.expression = wrap(a.expression, k == i) + "*" + wrap(b.expression, k + 1 == j);
            p.macs = chain_add(chain_add(a.macs, b.macs), sums ? points : 0);
            p.flops = chain_add(chain_add(a.flops, b.flops), sums ? chain_mul(points, 2) : points);
            p.intermediate_bytes =
                chain_add(chain_add(a.intermediate_bytes, b.intermediate_bytes), self_bytes);
            out.push_back(std::move(p));
          }
        }
      }
    }
    return memo.emplace(key, std::move(out)).first->second;
  };

  int64_t boundary_bytes = chain_bytes(output.dtype, elements(out_mask));
  for (size_t i = 0; i < n; ++i) {
    boundary_bytes = chain_add(boundary_bytes, chain_bytes(operands[i].dtype, elements(masks[i])));
  }
  Chain chain;
  chain.operands = operands;
  chain.output = output;
  for (const Partial& p : trees(0, n - 1)) {
    ChainOrder o;
    o.expression = p.expression;
    o.macs = p.macs;
    o.flops = p.flops;
    o.intermediate_bytes = p.intermediate_bytes;
    o.bytes = chain_add(boundary_bytes, chain_mul(p.intermediate_bytes, 2));
    chain.orders.push_back(std::move(o));
  }
  for (size_t i = 1; i < chain.orders.size(); ++i) {
    const ChainOrder& o = chain.orders[i];
    const ChainOrder& b = chain.orders[chain.best];
    const ChainOrder& w = chain.orders[chain.worst];
    if (o.flops < b.flops || (o.flops == b.flops && o.bytes < b.bytes)) chain.best = i;
    if (o.flops > w.flops || (o.flops == w.flops && o.bytes > w.bytes)) chain.worst = i;
  }
  const auto letters = rank_letters(operands, output);
  auto text = [&](const ChainTensor& t) {
    std::string s;
    for (const auto& r : t.ranks) s += letters.at(r);
    return s;
  };
  for (size_t i = 0; i < n; ++i) chain.einsum += (i ? "," : "") + text(operands[i]);
  chain.einsum += "->" + text(output);
  // Report ranks by their letters (graph chains label them "node:rank" internally).
  auto rename = [&](ChainTensor* t) {
    for (auto& r : t->ranks) r = letters.at(r);
  };
  for (auto& t : chain.operands) rename(&t);
  rename(&chain.output);
  chain.rank_sizes.clear();
  for (size_t b = 0; b < names.size(); ++b) chain.rank_sizes[letters.at(names[b])] = sizes[b];
  return chain;
}

namespace {

// "X[b, m, k]" -> ("X", {"b", "m", "k"}); false if `factor` is not a plain tensor access.
bool parse_access(std::string factor, std::string* name, std::vector<std::string>* index) {
  auto trim = [](std::string s) {
    const auto a = s.find_first_not_of(' ');
    const auto b = s.find_last_not_of(' ');
    return a == std::string::npos ? std::string() : s.substr(a, b - a + 1);
  };
  factor = trim(factor);
  const auto open = factor.find('[');
  if (open == std::string::npos || open == 0 || factor.back() != ']') return false;
  *name = factor.substr(0, open);
  for (char c : *name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  index->clear();
  std::string cur;
  for (char c : factor.substr(open + 1, factor.size() - open - 2) + ",") {
    if (c == ',') {
      index->push_back(trim(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  return true;
}

// The factors of a body that is a plain product of tensor accesses ("" if it is not).
std::vector<std::string> product_factors(const std::string& body) {
  if (body.find(';') != std::string::npos) return {};
  std::vector<std::string> factors;
  std::string cur;
  int depth = 0;
  for (char c : body) {
    if (c == '[' || c == '(') ++depth;
    if (c == ']' || c == ')') --depth;
    if (c == '*' && depth == 0) {
      factors.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  factors.push_back(cur);
  for (const auto& f : factors) {
    std::string name;
    std::vector<std::string> index;
    if (!parse_access(f, &name, &index)) return {};
  }
  return factors;
}

// The ranks of an operand whose every dim is one rank with coefficient 1 and no offset
// (a plain einsum operand); empty if it is not one.
bool plain_ranks(const Operand& operand, std::vector<std::string>* ranks) {
  ranks->clear();
  for (size_t d = 0; d < operand.projection.size(); ++d) {
    const auto& terms = operand.projection[d];
    if (terms.size() != 1 || terms[0].coefficient != 1) return false;
    if (d < operand.offsets.size() && operand.offsets[d] != 0) return false;
    ranks->push_back(terms[0].rank);
  }
  return true;
}

// A nest that multiplies tensors: its operands in factor order (empty if it is not one).
// `contraction` additionally requires += (a sum over the ranks the output lacks).
std::vector<const Operand*> product_operands(const Einsum& e) {
  if (e.reduce != ReduceOp::kNone && e.reduce != ReduceOp::kAdd) return {};
  const auto factors = product_factors(e.map_expr);
  if (factors.size() < 2 || factors.size() != e.inputs.size()) return {};
  std::vector<const Operand*> out;
  std::vector<std::string> ranks;
  for (const auto& f : factors) {
    std::string name;
    std::vector<std::string> index;
    parse_access(f, &name, &index);
    auto it = std::find_if(e.inputs.begin(), e.inputs.end(),
                           [&](const Operand& o) { return o.name == name; });
    if (it == e.inputs.end() || !plain_ranks(*it, &ranks)) return {};
    if (std::find(out.begin(), out.end(), &*it) != out.end()) return {};  // X * X
    out.push_back(&*it);
  }
  if (!plain_ranks(e.output, &ranks)) return {};
  return out;
}

DType operand_dtype(const Graph& graph, const Node& node, const Operand& operand, DType fallback) {
  const TensorId t = node.operand_tensor(operand);
  return t >= 0 ? graph.tensors.at(t).dtype : fallback;
}

// Runs `fn` (a chain_orders call); a count that does not fit becomes an `overflow` error
// located at the first of `nodes` and naming them all.
template <typename Fn>
Chain located(const Graph& graph, const std::vector<std::string>& nodes, Fn&& fn) {
  try {
    return fn();
  } catch (const UserError& e) {
    if (e.kind() != ErrorKind::kOverflow) throw;
    std::string names;
    Loc loc;
    for (const Node& n : graph.nodes) {  // in graph order; located at the first
      if (std::find(nodes.begin(), nodes.end(), n.name) == nodes.end()) continue;
      names += (names.empty() ? "'" : ", '") + n.name + "'";
      if (loc.line == 0) loc = n.loc;
    }
    throw count_overflow(CountSite{graph.source, loc, "the chain of node(s) " + names},
                         "costs (the MACs, FLOPs or bytes of an association order)");
  }
}

// (a) Nests whose body multiplies three or more tensors.
void nest_chains(const Graph& graph, std::vector<Chain>* out) {
  for (const Node& node : graph.nodes) {
    if (node.kind != NodeKind::kEinsum || !node.einsums) continue;
    for (const Einsum& e : *node.einsums) {
      const auto operands = product_operands(e);
      if (operands.size() < 3 || operands.size() > kMaxChainOperands) continue;
      out->push_back(located(graph, {node.name}, [&] {
        std::map<std::string, int64_t> sizes;
        for (size_t r = 0; r < e.ranks.size(); ++r) sizes[e.ranks[r]] = e.rank_sizes[r];
        std::vector<ChainTensor> tensors;
        int64_t direct_bytes = 0;
        for (const Operand* o : operands) {
          ChainTensor t{o->name, {}, operand_dtype(graph, node, *o, e.compute_dtype)};
          plain_ranks(*o, &t.ranks);
          int64_t elements = 1;
          for (const auto& r : t.ranks) elements = chain_mul(elements, sizes.at(r));
          direct_bytes = chain_add(direct_bytes, chain_bytes(t.dtype, elements));
          tensors.push_back(std::move(t));
        }
        ChainTensor output{e.output.name, {}, e.output_dtype};
        plain_ranks(e.output, &output.ranks);
        Chain chain = chain_orders(tensors, output, sizes);
        chain.kind = "nest";
        chain.nodes = {node.name};
        chain.direct.expression = e.map_expr;
        chain.direct.macs = e.macs;
        chain.direct.flops = chain_add(chain_mul(e.macs, 2), e.flops.total());
        int64_t out_elements = 1;
        for (const auto& r : output.ranks) out_elements = chain_mul(out_elements, sizes.at(r));
        chain.direct.bytes = chain_add(direct_bytes, chain_bytes(output.dtype, out_elements));
        return chain;
      }));
    }
  }
}

// A contraction node: one two-operand product nest accumulated with +=, reading and writing
// graph tensors (other nests only fill its output with a constant).
struct Contraction {
  const Einsum* einsum = nullptr;
  const Operand* operands[2] = {nullptr, nullptr};
  TensorId inputs[2] = {-1, -1};
  TensorId output = -1;
};

bool as_contraction(const Node& node, Contraction* c) {
  if (node.kind != NodeKind::kEinsum || !node.einsums || node.outputs.size() != 1) return false;
  const Einsum* found = nullptr;
  for (const Einsum& e : *node.einsums) {
    if (e.inputs.empty() && e.reduce == ReduceOp::kNone) continue;  // a constant fill
    if (found) return false;
    found = &e;
  }
  if (!found || found->reduce != ReduceOp::kAdd || found->macs <= 0) return false;
  const auto operands = product_operands(*found);
  if (operands.size() != 2) return false;
  c->einsum = found;
  for (int k = 0; k < 2; ++k) {
    c->operands[k] = operands[static_cast<size_t>(k)];
    c->inputs[k] = node.operand_tensor(*operands[static_cast<size_t>(k)]);
    if (c->inputs[k] < 0) return false;
  }
  c->output = node.operand_tensor(found->output);
  return c->output == node.outputs[0];
}

// Walks back from `tensor` (read by a contraction) through reshapes and permutes to the
// contraction that produced it, if every tensor on the way has that one reader. `dims` maps
// each dim of `tensor` to the producer output's dim (-1: a size-1 dim without one).
NodeId producing_contraction(const Graph& graph, const std::map<NodeId, Contraction>& contractions,
                             TensorId tensor, std::vector<int>* dims) {
  dims->resize(graph.tensors.at(tensor).shape.size());
  std::iota(dims->begin(), dims->end(), 0);
  for (;;) {
    const TensorInfo& t = graph.tensors.at(tensor);
    if (t.producer == kNoNode || t.is_output || t.consumers.size() != 1) return kNoNode;
    const Node& p = graph.nodes.at(t.producer);
    if (contractions.count(p.id)) return p.id;
    if (p.kind != NodeKind::kDataMovement || p.inputs.size() != 1 || p.outputs.size() != 1)
      return kNoNode;
    const TensorInfo& in = graph.tensors.at(p.inputs[0]);
    if (p.builtin == Builtin::kPermute || p.builtin == Builtin::kPermuteView) {
      const std::span<const int64_t> from = DimMapAttrs::of(p).from;
      for (int& d : *dims) {
        if (d < 0) continue;
        SOLAR_INTERNAL_CHECK(static_cast<size_t>(d) < from.size(),
                             "permute '" + p.name + "' has no dim " + std::to_string(d));
        d = static_cast<int>(from[static_cast<size_t>(d)]);
      }
    } else if (p.builtin == Builtin::kReshape) {
      // Only reshapes that add or drop size-1 dims keep every rank.
      std::vector<int> in_dims, out_dims;
      for (size_t d = 0; d < in.shape.size(); ++d)
        if (in.shape[d] != 1) in_dims.push_back(static_cast<int>(d));
      for (size_t d = 0; d < t.shape.size(); ++d)
        if (t.shape[d] != 1) out_dims.push_back(static_cast<int>(d));
      if (in_dims.size() != out_dims.size()) return kNoNode;
      std::map<int, int> map;
      for (size_t k = 0; k < in_dims.size(); ++k) {
        if (in.shape[static_cast<size_t>(in_dims[k])] != t.shape[static_cast<size_t>(out_dims[k])])
          return kNoNode;
        map[out_dims[k]] = in_dims[k];
      }
      for (int& d : *dims) d = d < 0 || !map.count(d) ? -1 : map.at(d);
    } else {
      return kNoNode;
    }
    tensor = p.inputs[0];
  }
}

// The name of the tensor a chain of reshapes and permutes views or copies: the program's
// own name for an operand ("A" rather than "reshape#10.out").
std::string source_name(const Graph& graph, TensorId tensor) {
  for (;;) {
    const TensorInfo& t = graph.tensors.at(tensor);
    if (t.producer == kNoNode) return t.name;
    const Node& p = graph.nodes.at(t.producer);
    if ((p.builtin != Builtin::kReshape && p.builtin != Builtin::kPermute &&
         p.builtin != Builtin::kPermuteView) ||
        p.inputs.size() != 1)
      return t.name;
    tensor = p.inputs[0];
  }
}

struct UnionFind {
  std::map<std::string, std::string> parent;
  std::string find(const std::string& x) {
    auto it = parent.find(x);
    if (it == parent.end() || it->second == x) return x;
    return it->second = find(it->second);
  }
  void unite(const std::string& a, const std::string& b) {
    const std::string ra = find(a), rb = find(b);
    if (ra != rb) parent[std::max(ra, rb)] = std::min(ra, rb);
  }
};

std::string label(NodeId node, const std::string& rank) {
  return std::to_string(node) + ":" + rank;
}

// (b) Chains of contraction nodes.
void graph_chains(const Graph& graph, std::vector<Chain>* out) {
  std::map<NodeId, Contraction> contractions;
  for (const Node& node : graph.nodes) {
    Contraction c;
    if (as_contraction(node, &c)) contractions[node.id] = c;
  }
  // Producer links: (consumer, operand k) -> producer; ranks unified across each link.
  std::map<std::pair<NodeId, int>, NodeId> producer;
  std::map<NodeId, NodeId> consumer;
  UnionFind ranks;
  std::vector<std::string> r1, r2;
  for (const auto& [id, c] : contractions) {
    for (int k = 0; k < 2; ++k) {
      std::vector<int> dims;
      const NodeId p = producing_contraction(graph, contractions, c.inputs[k], &dims);
      if (p == kNoNode || consumer.count(p)) continue;  // mm(p, p): p is linked once
      producer[{id, k}] = p;
      consumer[p] = id;
      plain_ranks(*c.operands[k], &r2);
      plain_ranks(contractions.at(p).einsum->output, &r1);
      for (size_t d = 0; d < dims.size() && d < r2.size(); ++d) {
        if (dims[d] >= 0 && static_cast<size_t>(dims[d]) < r1.size())
          ranks.unite(label(id, r2[d]), label(p, r1[static_cast<size_t>(dims[d])]));
      }
    }
  }
  for (const auto& [root, rc] : contractions) {
    if (consumer.count(root)) continue;  // part of a longer chain
    std::vector<ChainTensor> leaves;
    std::vector<std::string> nodes;
    std::map<std::string, int64_t> sizes;
    // In-order walk; returns the expression of the program's own tree.
    std::function<std::string(NodeId)> walk = [&](NodeId id) -> std::string {
      const Contraction& c = contractions.at(id);
      nodes.push_back(graph.nodes.at(id).name);
      for (size_t r = 0; r < c.einsum->ranks.size(); ++r)
        sizes[ranks.find(label(id, c.einsum->ranks[r]))] = c.einsum->rank_sizes[r];
      std::string parts[2];
      for (int k = 0; k < 2; ++k) {
        if (auto it = producer.find({id, k}); it != producer.end()) {
          parts[k] = "(" + walk(it->second) + ")";
          continue;
        }
        const TensorInfo& t = graph.tensors.at(c.inputs[k]);
        ChainTensor leaf{source_name(graph, c.inputs[k]), {}, t.dtype};
        plain_ranks(*c.operands[k], &r2);
        for (const auto& r : r2) {
          if (sizes.at(ranks.find(label(id, r))) != 1)
            leaf.ranks.push_back(ranks.find(label(id, r)));
        }
        int copies = 0;
        for (const auto& l : leaves)
          copies += l.name == leaf.name || l.name.rfind(leaf.name + "#", 0) == 0;
        if (copies) leaf.name += "#" + std::to_string(copies);
        parts[k] = leaf.name;
        leaves.push_back(std::move(leaf));
      }
      return parts[0] + "*" + parts[1];
    };
    const std::string written = walk(root);
    if (leaves.size() < 3 || leaves.size() > kMaxChainOperands) continue;
    ChainTensor output{graph.tensors.at(rc.output).name, {}, graph.tensors.at(rc.output).dtype};
    plain_ranks(rc.einsum->output, &r1);
    for (const auto& r : r1) {
      if (sizes.at(ranks.find(label(root, r))) != 1)
        output.ranks.push_back(ranks.find(label(root, r)));
    }
    Chain chain = located(graph, nodes, [&] { return chain_orders(leaves, output, sizes); });
    chain.kind = "graph";
    std::sort(nodes.begin(), nodes.end(), [&](const std::string& a, const std::string& b) {
      auto id = [&](const std::string& name) {
        for (const Node& n : graph.nodes)
          if (n.name == name) return n.id;
        return kNoNode;
      };
      return id(a) < id(b);
    });
    chain.nodes = nodes;
    for (size_t i = 0; i < chain.orders.size(); ++i) {
      if (chain.orders[i].expression == written) chain.as_written = static_cast<int64_t>(i);
    }
    out->push_back(std::move(chain));
  }
}

// Chains with the same product, sizes and dtypes: one entry listing every node.
std::vector<Chain> merge_repeats(std::vector<Chain> chains) {
  std::vector<Chain> out;
  auto key = [](const Chain& c) {
    std::string k = c.kind + "|" + c.einsum + "|";
    for (const auto& t : c.operands) k += std::string(dtype_name(t.dtype)) + ",";
    for (const auto& [r, s] : c.rank_sizes) k += r + "=" + std::to_string(s) + ",";
    k += c.as_written >= 0 ? std::to_string(c.as_written) : "";
    return k;
  };
  for (Chain& c : chains) {
    auto it =
        std::find_if(out.begin(), out.end(), [&](const Chain& o) { return key(o) == key(c); });
    if (it == out.end()) {
      out.push_back(std::move(c));
    } else {
      it->nodes.insert(it->nodes.end(), c.nodes.begin(), c.nodes.end());
    }
  }
  return out;
}

}  // namespace

std::vector<Chain> find_chains(const Graph& graph) {
  std::vector<Chain> chains;
  nest_chains(graph, &chains);
  graph_chains(graph, &chains);
  return merge_repeats(std::move(chains));
}

}  // namespace solar
