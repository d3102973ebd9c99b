// Pass derive_einsums (ir/passes.h): the einsum strings of nests and kernels, the inputs,
// output and reduction of each nest, and its printed body.
#include <algorithm>
#include <string>
#include <vector>

#include "base/strings.h"
#include "solar/ir/passes.h"
#include "solar/ir/printer.h"

namespace solar {
namespace {

using ast::ExprKind;

std::vector<std::string> rank_names(const Nest& nest) {
  std::vector<std::string> names;
  for (const Loop& l : nest.loops) {
    std::string n = l.dim;
    while (std::find(names.begin(), names.end(), n) != names.end()) n += "'";
    names.push_back(n);
  }
  return names;
}

// Renders one access: a loop var -> its rank; a sum -> (P+R); a constant -> its text.
std::vector<std::string> render_access(const Access& a, const std::vector<std::string>& ranks) {
  std::vector<std::string> parts;
  for (const AffineExpr& idx : a.index) {
    if (idx.terms.empty()) {
      parts.push_back(idx.constant && idx.constant->kind == ExprKind::kInt
                          ? std::to_string(idx.constant->int_value)
                          : "_");
    } else if (idx.terms.size() == 1) {
      parts.push_back(ranks[static_cast<size_t>(idx.terms[0].loop)]);
    } else {
      std::string s = "(";
      for (size_t i = 0; i < idx.terms.size(); ++i) {
        if (i) s += "+";
        s += ranks[static_cast<size_t>(idx.terms[i].loop)];
      }
      parts.push_back(s + ")");
    }
  }
  return parts;
}

bool all_single_char(const std::vector<std::vector<std::string>>& operands) {
  for (const auto& op : operands)
    for (const auto& p : op) {
      // A sum "(P+R)" is fine when each of its ranks is one char.
      if (p.front() == '(') {
        size_t start = 1;
        while (start < p.size()) {
          size_t end = p.find_first_of("+)", start);
          if (end - start > 1) return false;
          start = end + 1;
        }
      } else if (p.size() > 1) {
        return false;
      }
    }
  return true;
}

std::string format_einsum(const std::vector<std::vector<std::string>>& inputs,
                          const std::vector<std::vector<std::string>>& outputs) {
  std::vector<std::vector<std::string>> all = inputs;
  all.insert(all.end(), outputs.begin(), outputs.end());
  const std::string sep = all_single_char(all) ? "" : " ";
  auto side = [&](const std::vector<std::vector<std::string>>& ops) {
    std::vector<std::string> strs;
    for (const auto& op : ops) strs.push_back(join(op, sep));
    return join(strs, sep.empty() ? "," : ", ");
  };
  return side(inputs) + (sep.empty() ? "->" : " -> ") + side(outputs);
}

void derive_nest(Nest* nest) {
  const auto ranks = rank_names(*nest);
  nest->output = nest->updates.front().target.tensor;
  std::vector<std::vector<std::string>> inputs;
  std::vector<std::string> bodies;
  for (const Update& u : nest->updates) {
    for (const Access& a : u.reads) {
      if (a.tensor == u.target.tensor) continue;  // recurrences read their own output
      if (std::find(nest->inputs.begin(), nest->inputs.end(), a.tensor) != nest->inputs.end())
        continue;
      nest->inputs.push_back(a.tensor);
      inputs.push_back(render_access(a, ranks));
    }
    if (nest->reduce == ReduceOp::kNone) {
      switch (u.kind) {
        case UpdateKind::kAdd:
          nest->reduce = ReduceOp::kAdd;
          break;
        case UpdateKind::kMul:
          nest->reduce = ReduceOp::kMul;
          break;
        case UpdateKind::kMax:
          nest->reduce = ReduceOp::kMax;
          break;
        case UpdateKind::kMin:
          nest->reduce = ReduceOp::kMin;
          break;
        case UpdateKind::kAssign:
          break;
      }
    }
    bodies.push_back(print_expr(*u.value));
  }
  std::vector<std::vector<std::string>> outputs;
  std::vector<int> written;
  for (const Update& u : nest->updates) {
    if (std::find(written.begin(), written.end(), u.target.tensor) != written.end()) continue;
    written.push_back(u.target.tensor);
    outputs.push_back(render_access(u.target, ranks));
  }
  nest->einsum = format_einsum(inputs, outputs);
  nest->map_expr = join(bodies, "; ");
}

void derive_kernel_einsum(Kernel* k) {
  std::vector<std::vector<std::string>> inputs;
  for (const KernelParam& p : k->params) {
    if (p.kind != ParamKind::kTensor) continue;
    bool found = false;
    for (const Nest& n : k->nests) {
      const auto ranks = rank_names(n);
      for (const Update& u : n.updates) {
        for (const Access& a : u.reads) {
          if (a.tensor == p.tensor) {
            inputs.push_back(render_access(a, ranks));
            found = true;
            break;
          }
        }
        if (found) break;
      }
      if (found) break;
    }
  }
  std::vector<std::vector<std::string>> outputs;
  for (size_t i = 0; i < k->returns.size(); ++i) {
    const auto& dims = i < k->return_annotations.size() && !k->return_annotations[i].dims.empty()
                           ? k->return_annotations[i].dims
                           : k->tensors[static_cast<size_t>(k->returns[i])].dims;
    outputs.push_back(dims);
  }
  k->einsum = format_einsum(inputs, outputs);
}

}  // namespace

Program derive_einsums(Program program) {
  for (Kernel& k : program.kernels) {
    for (Nest& nest : k.nests) {
      nest.inputs.clear();
      nest.reduce = ReduceOp::kNone;
      derive_nest(&nest);
    }
    derive_kernel_einsum(&k);
  }
  return program;
}

}  // namespace solar
