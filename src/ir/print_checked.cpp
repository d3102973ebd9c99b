// print_checked (ir/printer.h): a checked program's kernels as their loop nests.
#include <sstream>

#include "solar/ir/printer.h"

namespace solar {
namespace {

const char* update_text(UpdateKind kind) {
  switch (kind) {
    case UpdateKind::kAssign:
      return "=";
    case UpdateKind::kAdd:
      return "+=";
    case UpdateKind::kMul:
      return "*=";
    case UpdateKind::kMax:
      return "max=";
    case UpdateKind::kMin:
      return "min=";
  }
  return "?";
}

const char* param_kind_text(ParamKind kind) {
  switch (kind) {
    case ParamKind::kTensor:
      return "tensor";
    case ParamKind::kInt:
      return "int";
    case ParamKind::kFloat:
      return "float";
    case ParamKind::kBool:
      return "bool";
  }
  return "?";
}

std::string affine_text(const AffineExpr& a, const Nest& nest) {
  std::string s;
  for (const AffineTerm& t : a.terms) {
    if (!s.empty()) s += " + ";
    if (t.coefficient) s += "(" + print_expr(*t.coefficient) + ")*";
    s += nest.loops[static_cast<size_t>(t.loop)].var;
  }
  if (a.constant) s += (s.empty() ? "" : " + ") + ("(" + print_expr(*a.constant) + ")");
  return s.empty() ? "0" : s;
}

std::string access_text(const Access& a, const Kernel& k, const Nest& nest) {
  std::string s = k.tensors[static_cast<size_t>(a.tensor)].name + "[";
  for (size_t d = 0; d < a.index.size(); ++d) s += (d ? ", " : "") + affine_text(a.index[d], nest);
  return s + "]";
}

std::string flops_text(const FlopCounts& f) {
  std::ostringstream os;
  os << "add " << f.add << " mul " << f.mul << " div " << f.div << " transcendental "
     << f.transcendental << " compare " << f.compare << " other " << f.other;
  return os.str();
}

}  // namespace

std::string print_checked(const Program& program) {
  std::ostringstream os;
  os << "# " << program.file << ": " << program.kernels.size() << " kernels\n";
  for (const Kernel& k : program.kernels) {
    os << "kernel " << k.name << " at " << k.loc.line << ":" << k.loc.col;
    if (!k.einsum.empty()) os << "  einsum " << k.einsum;
    os << "\n";
    for (const KernelParam& p : k.params) {
      os << "  param " << p.name << ": " << param_kind_text(p.kind);
      if (p.default_value) os << " = " << print_expr(*p.default_value);
      os << "\n";
    }
    for (size_t t = 0; t < k.tensors.size(); ++t) {
      const KernelTensor& kt = k.tensors[t];
      os << "  tensor %" << t << " " << kt.name << "[";
      for (size_t d = 0; d < kt.dims.size(); ++d) os << (d ? "," : "") << kt.dims[d];
      os << "] " << dtype_name(kt.dtype) << (kt.is_param ? " param" : " local")
         << (kt.returned ? " returned" : "") << (kt.read ? " read" : "") << "\n";
    }
    for (size_t n = 0; n < k.nests.size(); ++n) {
      const Nest& nest = k.nests[n];
      os << "  nest " << n << " at " << nest.loc.line << ":" << nest.loc.col << ":";
      for (const Loop& l : nest.loops)
        os << " for " << l.var << " in " << l.dim << (l.parallel ? " (parallel)" : "");
      os << "\n";
      if (!nest.einsum.empty())
        os << "    einsum " << nest.einsum << "  reduce " << reduce_op_name(nest.reduce) << "\n";
      for (const Update& u : nest.updates) {
        os << "    " << access_text(u.target, k, nest) << " " << update_text(u.kind) << " "
           << print_expr(*u.value);
        if (u.guard) os << "  if " << print_expr(*u.guard);
        os << "\n      reads:";
        for (const Access& r : u.reads) os << " " << access_text(r, k, nest);
        os << "\n      per point: " << flops_text(u.flops);
        if (u.is_mac) {
          os << "; MAC " << access_text(u.reads[static_cast<size_t>(u.mac_operand_a)], k, nest)
             << " x " << access_text(u.reads[static_cast<size_t>(u.mac_operand_b)], k, nest);
        }
        os << "\n";
      }
    }
  }
  return os.str();
}

std::string print_kernel_ir(const Program& program) {
  std::ostringstream os;
  for (const Kernel& k : program.kernels) {
    os << "kernel " << k.name << "\n";
    for (size_t n = 0; n < k.nests.size(); ++n) {
      const Nest& nest = k.nests[n];
      for (size_t i = 0; i < nest.updates.size(); ++i) {
        const Update& u = nest.updates[i];
        os << "  nest " << n << " update " << i << ": " << access_text(u.target, k, nest) << " "
           << update_text(u.kind) << " %" << u.body.result;
        if (u.guard) os << "  if " << print_expr(*u.guard);
        os << "\n";
        for (size_t j = 0; j < u.body.insts.size(); ++j) {
          const ScalarInst& inst = u.body.insts[j];
          os << "    %" << j << " = " << scalar_op_name(inst.op);
          if (inst.op == ScalarOp::kCompare) os << " " << ast::op_text(inst.cmp);
          if (inst.op == ScalarOp::kCall) os << " " << inst.fn;
          os << " " << dtype_name(inst.dtype);
          for (size_t a = 0; a < inst.args.size(); ++a) os << (a ? ", %" : " %") << inst.args[a];
          if (inst.op == ScalarOp::kLoad)
            os << " " << access_text(u.reads[static_cast<size_t>(inst.read)], k, nest);
          if (inst.op == ScalarOp::kLoopVar)
            os << " " << nest.loops[static_cast<size_t>(inst.loop)].var;
          if (inst.op == ScalarOp::kStatic) os << " " << print_expr(*inst.expr);
          os << "\n";
        }
      }
    }
  }
  return os.str();
}

}  // namespace solar
