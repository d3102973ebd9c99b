// Pass check_and_lower (ir/passes.h): enforces docs/ir.md §3-4 and lowers @kernel functions
// to loop nests. Every problem found is recorded (not thrown) so that one run reports all of
// them. check_program runs it and the later passes.
#include "solar/ir/checker.h"

#include <algorithm>
#include <functional>
#include <set>
#include <unordered_set>

#include "absl/container/flat_hash_set.h"
#include "base/strings.h"
#include "scalar_functions.h"
#include "solar/graph/ops.h"
#include "solar/ir/passes.h"
#include "solar/ir/printer.h"
#include "solar/ir/static_eval.h"

namespace solar {
namespace {

using ast::Expr;
using ast::ExprKind;
using ast::ExprPtr;
using ast::Op;
using ast::Stmt;
using ast::StmtKind;
using ast::StmtPtr;
using detail::FnClass;
using detail::scalar_functions;

// Python functions the composition layer may call.
const std::unordered_set<std::string>& python_builtins() {
  static const std::unordered_set<std::string> k = {"range", "len",   "min", "max",
                                                    "int",   "float", "abs", "size"};
  return k;
}

bool is_identifier(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return true;
}

const Expr* call_callee_name(const Expr& e) {
  if (e.kind != ExprKind::kCall) return nullptr;
  const Expr& fn = *e.items[0];
  if (fn.kind == ExprKind::kName) return &fn;
  // solar.ir.Tensor / ir.Tensor
  if (fn.kind == ExprKind::kAttribute) return &fn;
  return nullptr;
}

std::string callee(const Expr& e) {
  const Expr* fn = call_callee_name(e);
  return fn ? fn->text : std::string();
}

class Checker {
 public:
  explicit Checker(ast::Module module) : sink_(module.file) {
    program_.file = module.file;
    program_.module = std::move(module);
  }

  Program run() {
    collect_top_level();
    for (const auto& s : program_.module.body) {
      if (s->kind != StmtKind::kFunctionDef) continue;
      if (is_kernel_def(*s)) {
        check_kernel(*s);
      } else {
        check_function(*s);
      }
    }
    check_recursion();
    sink_.throw_if_any();
    return std::move(program_);
  }

 private:
  // ---------------------------------------------------------------- module level
  bool is_kernel_def(const Stmt& def) const {
    for (const auto& d : def.decorators)
      if (d->kind == ExprKind::kName && d->text == "kernel") return true;
    return false;
  }

  // The only imports an IR program may hold: `import solar.ir` and `from solar.ir import`
  // of the IR's own names, without aliases. Anything else would be Python that a reader of
  // the file as Python could run (docs/ir.md §1, docs/agent.md "Safety").
  void check_import(const Stmt& s) {
    static const std::string kFrom = "from solar.ir import ";
    bool allowed = s.text == "import solar.ir";
    if (!allowed && s.text.compare(0, kFrom.size(), kFrom) == 0) {
      allowed = true;
      std::string names = s.text.substr(kFrom.size());
      size_t start = 0;
      while (start <= names.size()) {
        size_t end = names.find(", ", start);
        if (end == std::string::npos) end = names.size();
        const std::string name = names.substr(start, end - start);
        if (name != "kernel" && name != "Tensor" && name != "Dim") allowed = false;
        start = end + 2;
      }
    }
    if (!allowed) {
      sink_.error(ErrorKind::kUnsupported, s.loc,
                  "'" + s.text + "': an IR program imports nothing but solar.ir",
                  "write `from solar.ir import kernel, Tensor, Dim` (no other module, no "
                  "`as` alias)");
    }
  }

  // A default value is a literal (a number, a string, True/False/None, a negative number or
  // a tuple or list of them) or a name the module defines: never a call, which would run
  // when the file is read as Python.
  void check_default_value(const Expr& e) {
    switch (e.kind) {
      case ExprKind::kCall:
        sink_.error(ErrorKind::kUnsupported, e.loc,
                    "a default value must not call '" + print_expr(*e.items[0]) + "'",
                    "use a literal (a number, a string, True/False/None) as the default");
        return;
      case ExprKind::kAttribute:
      case ExprKind::kSubscript:
        sink_.error(ErrorKind::kUnsupported, e.loc,
                    "a default value must be a literal, not '" + print_expr(e) + "'",
                    "use a number, a string, True/False/None or a module constant");
        return;
      default:
        for (const auto& item : e.items)
          if (item) check_default_value(*item);
    }
  }

  void collect_top_level() {
    std::unordered_map<std::string, Loc> seen_functions;
    bool first = true;
    for (const auto& sp : program_.module.body) {
      const Stmt& s = *sp;
      const bool docstring = first && s.kind == StmtKind::kExpr && s.value->kind == ExprKind::kStr;
      first = false;
      switch (s.kind) {
        case StmtKind::kImport:
          check_import(s);
          break;
        case StmtKind::kPass:
          break;
        case StmtKind::kExpr:
          if (!docstring) {
            sink_.error(ErrorKind::kUnsupported, s.loc,
                        "statements at module level are not evaluated",
                        "put computation in model() or a helper function");
          }
          break;
        case StmtKind::kAssign:
          if (s.target && s.target->kind == ExprKind::kName && s.target->text == "kernel") {
            sink_.error(ErrorKind::kUnsupported, s.target->loc,
                        "constant 'kernel' shadows the @kernel decorator", "rename it");
            break;
          }
          collect_assignment(s);
          break;
        case StmtKind::kFunctionDef: {
          for (const auto& d : s.decorators) {
            if (!(d->kind == ExprKind::kName && d->text == "kernel")) {
              sink_.error(ErrorKind::kUnsupported, d->loc,
                          "unknown decorator '" + print_expr(*d) + "'",
                          "only @kernel (imported from solar.ir) is recognised");
            }
          }
          for (const auto& p : s.params)
            if (p.default_value) check_default_value(*p.default_value);
          if (s.name == "kernel") {
            sink_.error(ErrorKind::kUnsupported, s.loc,
                        "function 'kernel' shadows the @kernel decorator", "rename it");
          }
          auto [it, inserted] = seen_functions.emplace(s.name, s.loc);
          if (!inserted) {
            sink_.error(ErrorKind::kUnsupported, s.loc,
                        "function '" + s.name + "' is defined twice (first at line " +
                            std::to_string(it->second.line) + ")",
                        "rename one of them");
            break;
          }
          if (is_graph_builtin(s.name) || scalar_functions().count(s.name)) {
            sink_.error(ErrorKind::kUnsupported, s.loc,
                        "function '" + s.name + "' shadows a builtin of the same name",
                        "rename it");
          }
          if (s.name == "model") {
            if (is_kernel_def(s)) {
              sink_.error(ErrorKind::kUnsupported, s.loc, "model() must not be a @kernel",
                          "model() composes kernels; remove the decorator");
            }
            program_.model = &s;
          } else if (!is_kernel_def(s)) {
            program_.helpers[s.name] = &s;
          }
          break;
        }
        case StmtKind::kWhile:
          sink_.error(ErrorKind::kUnsupported, s.loc, "while loops are not supported",
                      "loops need a static trip count: for i in range(N)");
          break;
        default:
          sink_.error(ErrorKind::kUnsupported, s.loc,
                      "only imports, constants, DIMS and function definitions may appear at "
                      "module level",
                      "move this into model()");
      }
    }
    if (!program_.model) {
      sink_.error(ErrorKind::kUnknownName, Loc{1, 1}, "the program has no model() function",
                  "add def model(x: Tensor(\"B,K\", role=\"input\"), ...): that calls your "
                  "kernels and returns the outputs");
    }
  }

  void collect_assignment(const Stmt& s) {
    if (s.target->kind != ExprKind::kName) {
      sink_.error(ErrorKind::kUnsupported, s.loc,
                  "module-level assignments must bind a single name");
      return;
    }
    const std::string& name = s.target->text;
    if (name == "DIMS") {
      collect_dims(*s.value);
      return;
    }
    StaticEnv env;
    env.program = &program_;
    try {
      program_.constants[name] = eval_static(*s.value, env);
    } catch (const UserError&) {
      sink_.error(ErrorKind::kUnsupported, s.value->loc,
                  "module-level constant '" + name +
                      "' must be a number computed from numbers "
                      "and earlier constants",
                  "write e.g. HIDDEN = 4 * DIM");
    }
  }

  void collect_dims(const Expr& value) {
    program_.has_dims = true;
    if (value.kind != ExprKind::kDict) {
      sink_.error(ErrorKind::kType, value.loc, "DIMS must be a dict of dim name to size",
                  "DIMS = {\"B\": 2, \"M\": 128}");
      return;
    }
    StaticEnv env;
    env.program = &program_;
    for (size_t i = 0; i + 1 < value.items.size(); i += 2) {
      const Expr& k = *value.items[i];
      const Expr& v = *value.items[i + 1];
      if (k.kind != ExprKind::kStr || !is_identifier(k.text)) {
        sink_.error(ErrorKind::kType, k.loc, "DIMS keys must be dim names as strings",
                    "DIMS = {\"B\": 2}");
        continue;
      }
      try {
        Scalar n = eval_static(v, env);
        if (!n.is_int || n.i <= 0) {
          sink_.error(ErrorKind::kType, v.loc,
                      "size of dim '" + k.text + "' must be a positive integer, got '" +
                          print_expr(v) + "'");
          continue;
        }
        program_.dims.emplace_back(k.text, n.i);
      } catch (const UserError& err) {
        sink_.error(ErrorKind::kType, v.loc,
                    "size of dim '" + k.text +
                        "' is not a static integer: " + err.diagnostics().front().message);
      }
    }
  }

  // ---------------------------------------------------------------- annotations
  // Parses Tensor("B,M,K", dtype=..., role=..., sparsity=...). Returns false (after
  // reporting) when the expression is not a Tensor annotation.
  bool parse_tensor_annotation(const Expr& e, TensorAnnotation* out, Role default_role) {
    if (callee(e) != "Tensor") return false;
    out->loc = e.loc;
    out->role = default_role;
    if (e.items.size() != 2 || e.items[1]->kind != ExprKind::kStr) {
      sink_.error(ErrorKind::kType, e.loc, "Tensor annotation needs one string of dim names",
                  "write Tensor(\"B,M,K\") (\"\" for a scalar)");
      return true;
    }
    out->dims.clear();
    const std::string& spec = e.items[1]->text;
    size_t start = 0;
    std::string trimmed_spec = spec;
    trimmed_spec.erase(std::remove(trimmed_spec.begin(), trimmed_spec.end(), ' '),
                       trimmed_spec.end());
    if (!trimmed_spec.empty()) {
      while (start <= trimmed_spec.size()) {
        size_t comma = trimmed_spec.find(',', start);
        if (comma == std::string::npos) comma = trimmed_spec.size();
        std::string d = trimmed_spec.substr(start, comma - start);
        if (!is_identifier(d)) {
          sink_.error(ErrorKind::kType, e.items[1]->loc,
                      "'" + d + "' is not a valid dim name in \"" + spec + "\"",
                      "dim names are identifiers separated by commas: \"B,M,K\"");
        }
        out->dims.push_back(d);
        start = comma + 1;
      }
    }
    for (const ast::Keyword& kw : e.keywords) {
      if (kw.name == "dtype") {
        parse_dtype_value(*kw.value, &out->dtype);
      } else if (kw.name == "role") {
        std::optional<Role> role;
        if (kw.value->kind == ExprKind::kStr) role = parse_role(kw.value->text);
        if (!role) {
          sink_.error(
              ErrorKind::kType, kw.value->loc, "unknown role '" + print_expr(*kw.value) + "'",
              "role is one of \"input\", \"weight\", \"activation\", \"output\", \"generated\"");
        } else {
          out->role = *role;
        }
      } else if (kw.name == "sparsity") {
        StaticEnv env;
        env.program = &program_;
        double s = -1;
        try {
          s = eval_static(*kw.value, env).as_double();
        } catch (const UserError&) {
        }
        if (!(s >= 0.0 && s < 1.0)) {
          sink_.error(
              ErrorKind::kType, kw.value->loc,
              "sparsity must be a number with 0 <= s < 1, got '" + print_expr(*kw.value) + "'");
        } else {
          out->sparsity = s;
        }
      } else {
        sink_.error(ErrorKind::kType, kw.loc, "unknown Tensor annotation field '" + kw.name + "'",
                    "fields are dtype, role, sparsity");
      }
    }
    return true;
  }

  void parse_dtype_value(const Expr& v, DType* out) {
    std::optional<DType> d;
    if (v.kind == ExprKind::kStr) d = parse_dtype(v.text);
    if (!d) {
      sink_.error(ErrorKind::kUnknownDtype, v.loc, "unknown dtype " + print_expr(v),
                  "use one of: " + all_dtype_names());
      return;
    }
    *out = *d;
  }

  // ---------------------------------------------------------------- kernels
  struct KernelCtx {
    Kernel* kernel = nullptr;
    std::set<std::string> known_dims;
    const std::vector<Loop>* loops = nullptr;
  };

  void check_kernel(const Stmt& def) {
    Kernel k;
    k.name = def.name;
    k.loc = def.loc;
    KernelCtx ctx;
    ctx.kernel = &k;
    for (const ast::Param& p : def.params) {
      KernelParam kp;
      kp.name = p.name;
      kp.loc = p.loc;
      kp.default_value = p.default_value;
      if (!p.annotation) {
        sink_.error(ErrorKind::kType, p.loc, "kernel parameter '" + p.name + "' has no annotation",
                    "annotate tensors as " + p.name + ": Tensor(\"B,N\") and scalars as " + p.name +
                        ": int or float");
        continue;
      }
      TensorAnnotation ann;
      if (parse_tensor_annotation(*p.annotation, &ann, Role::kActivation)) {
        KernelTensor t;
        t.name = p.name;
        t.is_param = true;
        t.dims = ann.dims;
        t.dtype = ann.dtype;
        t.role = ann.role;
        t.sparsity = ann.sparsity;
        t.loc = p.loc;
        for (const auto& d : ann.dims) ctx.known_dims.insert(d);
        kp.kind = ParamKind::kTensor;
        kp.tensor = static_cast<int>(k.tensors.size());
        k.tensors.push_back(std::move(t));
      } else if (p.annotation->is_name("int")) {
        kp.kind = ParamKind::kInt;
      } else if (p.annotation->is_name("float")) {
        kp.kind = ParamKind::kFloat;
      } else if (p.annotation->is_name("bool")) {
        kp.kind = ParamKind::kBool;
      } else {
        sink_.error(
            ErrorKind::kType, p.annotation->loc,
            "unsupported annotation '" + print_expr(*p.annotation) + "' for '" + p.name + "'",
            "use Tensor(\"...\"), int, float or bool");
        continue;
      }
      k.params.push_back(std::move(kp));
    }
    if (def.returns) {
      std::vector<ExprPtr> anns;
      if (def.returns->kind == ExprKind::kTuple) {
        anns.assign(def.returns->items.begin(), def.returns->items.end());
      } else {
        anns.push_back(def.returns);
      }
      for (const auto& a : anns) {
        TensorAnnotation ann;
        if (!parse_tensor_annotation(*a, &ann, Role::kActivation)) {
          sink_.error(ErrorKind::kType, a->loc, "a kernel returns tensors",
                      "annotate the result as -> Tensor(\"B,N\") or a tuple of them");
        }
        k.return_annotations.push_back(ann);
      }
    }

    bool returned = false;
    size_t index = 0;
    for (const auto& sp : def.body) {
      const Stmt& s = *sp;
      const bool docstring =
          index++ == 0 && s.kind == StmtKind::kExpr && s.value->kind == ExprKind::kStr;
      if (docstring || s.kind == StmtKind::kPass) continue;
      if (returned) {
        sink_.error(ErrorKind::kKernelBody, s.loc, "statement after return",
                    "return must be the last statement of a kernel");
        break;
      }
      switch (s.kind) {
        case StmtKind::kAssign:
          check_allocation(s, &ctx);
          break;
        case StmtKind::kFor:
          check_nest(s, &ctx);
          break;
        case StmtKind::kReturn:
          check_return(s, &ctx);
          returned = true;
          break;
        case StmtKind::kWhile:
          sink_.error(ErrorKind::kUnsupported, s.loc, "while loops are not allowed in a kernel",
                      "iterate with for v in Dim(\"D\"): over a dim of static size");
          break;
        case StmtKind::kIf:
          sink_.error(ErrorKind::kImperfectNest, s.loc,
                      "'if' outside a loop nest in kernel '" + k.name + "'",
                      "guards belong in the innermost loop; for a static choice, write two "
                      "kernels and choose in model()");
          break;
        case StmtKind::kWith:
          sink_.error(ErrorKind::kKernelBody, s.loc,
                      "'with' is not allowed in kernel '" + k.name + "'",
                      "group calls into one source operator in model() or a helper: "
                      "with unit(\"name\"): ...");
          break;
        case StmtKind::kAugAssign:
        case StmtKind::kExpr:
          sink_.error(ErrorKind::kImperfectNest, s.loc,
                      "statement outside a loop nest in kernel '" + k.name + "'",
                      "tensor updates go in the innermost loop of a nest: "
                      "for i in Dim(\"N\"): Y[i] = ...");
          break;
        default:
          sink_.error(ErrorKind::kKernelBody, s.loc,
                      "this statement is not allowed in a kernel body",
                      "a kernel body holds tensor allocations, loop nests and one return");
      }
    }
    if (!returned) {
      sink_.error(ErrorKind::kKernelBody, def.loc, "kernel '" + k.name + "' has no return",
                  "end the kernel with return Y");
    }
    if (program_.kernel_index.count(k.name) == 0) {
      program_.kernel_index[k.name] = static_cast<int>(program_.kernels.size());
      program_.kernels.push_back(std::move(k));
    }
  }

  // "kernel 'f' calls kernel 'g'": kernels compose only in model().
  bool report_nested_call(const Expr& call, const Kernel& k) {
    const std::string fn = callee(call);
    const bool kernel = is_kernel_name(fn);
    if (!kernel && !program_.helpers.count(fn)) return false;
    sink_.error(ErrorKind::kKernelBody, call.loc,
                "kernel '" + k.name + "' calls " + (kernel ? "kernel" : "helper") + " '" + fn + "'",
                "kernels cannot call kernels or helpers; call both from model() and pass the "
                "result in as a parameter");
    return true;
  }

  void check_allocation(const Stmt& s, KernelCtx* ctx) {
    Kernel& k = *ctx->kernel;
    if (s.value->kind == ExprKind::kCall && report_nested_call(*s.value, k)) return;
    if (s.target->kind != ExprKind::kName || callee(*s.value) != "Tensor") {
      const bool scalar = s.target->kind == ExprKind::kName;
      sink_.error(ErrorKind::kKernelBody, s.loc,
                  scalar ? "scalar variables are not allowed in a kernel"
                         : "assignment outside a loop nest in kernel '" + k.name + "'",
                  scalar ? "inline the expression, or store it in a tensor allocated with "
                           "Tensor(...)"
                         : "allocate with Y = Tensor(B=X.shape[0], ...) and write elements "
                           "inside a loop nest");
      return;
    }
    const std::string& name = s.target->text;
    if (k.find_tensor(name) >= 0) {
      sink_.error(ErrorKind::kKernelBody, s.loc, "tensor '" + name + "' is already defined",
                  "allocate each tensor once, under its own name");
      return;
    }
    KernelTensor t;
    t.name = name;
    t.loc = s.loc;
    if (s.value->items.size() > 1) {
      sink_.error(ErrorKind::kType, s.value->loc, "allocations name their dims with keywords",
                  "write Tensor(B=X.shape[0], N=W.shape[0])");
    }
    for (const ast::Keyword& kw : s.value->keywords) {
      if (kw.name == "dtype") {
        parse_dtype_value(*kw.value, &t.dtype);
      } else if (kw.name == "fill") {
        StaticEnv env;
        env.program = &program_;
        try {
          t.fill = eval_static(*kw.value, env).as_double();
        } catch (const UserError&) {
          sink_.error(ErrorKind::kType, kw.value->loc,
                      "fill must be a number, inf or -inf, got '" + print_expr(*kw.value) + "'");
        }
      } else if (kw.name == "role" || kw.name == "sparsity") {
        sink_.error(ErrorKind::kType, kw.loc,
                    "'" + kw.name + "' is not set on allocations inside a kernel",
                    "roles and sparsity belong to model() parameters");
      } else {
        check_static(*kw.value, ctx, "the size of dim '" + kw.name + "'");
        t.dims.push_back(kw.name);
        t.size_exprs.push_back(kw.value);
        ctx->known_dims.insert(kw.name);
      }
    }
    k.tensors.push_back(std::move(t));
  }

  // A static expression: numbers, scalar params, constants, size("D"), X.shape[i].
  void check_static(const Expr& e, KernelCtx* ctx, const std::string& what) {
    const Kernel& k = *ctx->kernel;
    switch (e.kind) {
      case ExprKind::kInt:
      case ExprKind::kFloat:
        return;
      case ExprKind::kName: {
        if (e.text == "inf" || e.text == "True" || e.text == "False") return;
        if (program_.constants.count(e.text)) return;
        for (const auto& p : k.params)
          if (p.name == e.text && p.kind != ParamKind::kTensor) return;
        if (ctx->loops) {
          for (const auto& l : *ctx->loops)
            if (l.var == e.text) {
              sink_.error(ErrorKind::kNonAffine, e.loc,
                          "loop variable '" + e.text + "' used in " + what,
                          "sizes and coefficients must be static: integers, scalar parameters "
                          "or sizes");
              return;
            }
        }
        sink_.error(ErrorKind::kUnknownName, e.loc,
                    "'" + e.text + "' is not defined (in " + what + ")",
                    "static values are integers, int parameters, module constants, "
                    "size(\"D\") and X.shape[i]");
        return;
      }
      case ExprKind::kUnary:
      case ExprKind::kBinary:
        for (const auto& item : e.items) check_static(*item, ctx, what);
        return;
      case ExprKind::kCall: {
        const std::string fn = callee(e);
        if (fn == "size") {
          if (e.items.size() != 2 || e.items[1]->kind != ExprKind::kStr) {
            sink_.error(ErrorKind::kType, e.loc, "size() takes one dim name: size(\"H\")");
          } else if (!ctx->known_dims.count(e.items[1]->text)) {
            report_unknown_dim(e.items[1]->text, e.loc, *ctx);
          }
          return;
        }
        if (fn == "min" || fn == "max" || fn == "int" || fn == "float") {
          for (size_t i = 1; i < e.items.size(); ++i) check_static(*e.items[i], ctx, what);
          return;
        }
        break;
      }
      case ExprKind::kSubscript: {
        const Expr& base = *e.items[0];
        if (base.kind == ExprKind::kAttribute && base.text == "shape" &&
            base.items[0]->kind == ExprKind::kName && e.items.size() == 2) {
          const int t = k.find_tensor(base.items[0]->text);
          if (t < 0) {
            sink_.error(ErrorKind::kUnknownName, base.loc,
                        "unknown tensor '" + base.items[0]->text + "' in " + what);
            return;
          }
          check_static(*e.items[1], ctx, "a shape index");
          return;
        }
        if (base.kind == ExprKind::kName && k.find_tensor(base.text) >= 0) {
          sink_.error(ErrorKind::kDataDependent, e.loc,
                      "tensor value '" + print_expr(e) + "' used in " + what,
                      "sizes, bounds and conditions cannot depend on tensor values; use "
                      "select(c, a, b) for a value-level choice");
          return;
        }
        break;
      }
      default:
        break;
    }
    sink_.error(ErrorKind::kNonAffine, e.loc,
                "'" + print_expr(e) + "' is not a static expression (in " + what + ")",
                "use integers, scalar parameters, size(\"D\") and X.shape[i]");
  }

  void report_unknown_dim(const std::string& dim, Loc loc, const KernelCtx& ctx) {
    std::vector<std::string> known(ctx.known_dims.begin(), ctx.known_dims.end());
    sink_.error(ErrorKind::kUnknownDim, loc,
                "unknown dim '" + dim + "' in kernel '" + ctx.kernel->name + "'",
                known.empty() ? "name the dim in a parameter annotation or an allocation"
                              : "known dims here: " + join(known, ", ") +
                                    "; name it in a parameter annotation or an allocation");
  }

  void check_return(const Stmt& s, KernelCtx* ctx) {
    Kernel& k = *ctx->kernel;
    std::vector<ExprPtr> values;
    if (!s.value) {
      sink_.error(ErrorKind::kKernelBody, s.loc, "a kernel must return its output tensor(s)");
      return;
    }
    if (s.value->kind == ExprKind::kTuple) {
      values.assign(s.value->items.begin(), s.value->items.end());
    } else {
      values.push_back(s.value);
    }
    for (size_t i = 0; i < values.size(); ++i) {
      const Expr& v = *values[i];
      const int t = v.kind == ExprKind::kName ? k.find_tensor(v.text) : -1;
      if (t < 0 || k.tensors[static_cast<size_t>(t)].is_param) {
        sink_.error(ErrorKind::kKernelBody, v.loc,
                    "a kernel returns tensors it allocated, got '" + print_expr(v) + "'",
                    "allocate the output with Y = Tensor(...) and return Y");
        continue;
      }
      KernelTensor& out = k.tensors[static_cast<size_t>(t)];
      out.returned = true;
      k.returns.push_back(t);
      if (i < k.return_annotations.size() && !k.return_annotations[i].dims.empty() &&
          k.return_annotations[i].dims != out.dims) {
        sink_.error(ErrorKind::kShape, v.loc,
                    "returned tensor '" + out.name + "' has dims (" + join(out.dims, ",") +
                        ") but the return annotation says (" +
                        join(k.return_annotations[i].dims, ",") + ")",
                    "allocate it with the annotation's dims, in the same order");
      }
    }
    if (!k.return_annotations.empty() && k.return_annotations.size() != values.size()) {
      sink_.error(ErrorKind::kShape, s.loc,
                  "kernel returns " + std::to_string(values.size()) +
                      " tensor(s) but its annotation declares " +
                      std::to_string(k.return_annotations.size()));
    }
  }

  // ---------------------------------------------------------------- loop nests
  void check_nest(const Stmt& outer, KernelCtx* ctx) {
    Kernel& k = *ctx->kernel;
    Nest nest;
    nest.loc = outer.loc;
    const Stmt* cur = &outer;
    bool ok = true;
    while (true) {
      Loop loop;
      loop.loc = cur->loc;
      if (cur->target->kind != ExprKind::kName) {
        sink_.error(ErrorKind::kKernelBody, cur->target->loc, "a kernel loop binds one variable",
                    "for i in Dim(\"N\"):");
        ok = false;
      } else {
        loop.var = cur->target->text;
      }
      const Expr& it = *cur->value;
      if (callee(it) == "Dim" && it.items.size() == 2 && it.items[1]->kind == ExprKind::kStr) {
        loop.dim = it.items[1]->text;
        for (const ast::Keyword& kw : it.keywords) {
          if (kw.name == "parallel" && kw.value->kind == ExprKind::kName &&
              (kw.value->text == "True" || kw.value->text == "False")) {
            loop.parallel = kw.value->text == "True";
          } else {
            sink_.error(ErrorKind::kType, kw.loc, "Dim() accepts only parallel=True|False");
          }
        }
        if (!ctx->known_dims.count(loop.dim)) {
          report_unknown_dim(loop.dim, it.loc, *ctx);
          ok = false;
        }
      } else if (callee(it) == "range") {
        sink_.error(ErrorKind::kKernelBody, it.loc,
                    "kernel loops iterate over Dim(...), not range(...)",
                    "write for i in Dim(\"N\"): where N is a named dim of a tensor");
        ok = false;
      } else {
        sink_.error(ErrorKind::kKernelBody, it.loc,
                    "loop over '" + print_expr(it) + "' is not a static range",
                    "kernel loops iterate over a named dim: for i in Dim(\"N\"):");
        ok = false;
      }
      for (const Loop& l : nest.loops) {
        if (l.var == loop.var) {
          sink_.error(ErrorKind::kKernelBody, cur->loc,
                      "loop variable '" + loop.var + "' is already bound by an enclosing loop",
                      "use a new name for each loop of a nest");
          ok = false;
        }
      }
      nest.loops.push_back(loop);
      const bool has_for = std::any_of(cur->body.begin(), cur->body.end(),
                                       [](const StmtPtr& b) { return b->kind == StmtKind::kFor; });
      if (!has_for) break;
      if (cur->body.size() != 1) {
        const Stmt* other = nullptr;
        for (const auto& b : cur->body)
          if (b->kind != StmtKind::kFor || cur->body.size() > 1) {
            if (b->kind != StmtKind::kFor) {
              other = b.get();
              break;
            }
          }
        sink_.error(ErrorKind::kImperfectNest, other ? other->loc : cur->body[1]->loc,
                    "imperfect loop nest in kernel '" + k.name + "': the body of 'for " + loop.var +
                        "' mixes a loop with other statements",
                    "every loop's body is exactly one loop, or only statements at the "
                    "innermost level; split it into separate nests over the same dims");
        return;
      }
      cur = cur->body[0].get();
    }
    if (!ok) return;
    ctx->loops = &nest.loops;
    for (const auto& sp : cur->body) lower_statement(*sp, nullptr, &nest, ctx);
    ctx->loops = nullptr;
    if (nest.updates.empty()) return;
    check_parallel(nest, k);
    k.nests.push_back(std::move(nest));
  }

  // parallel=True promises independent iterations: a loop that an update reduces over, or
  // along which an update reads its own target elsewhere (a recurrence), would race.
  void check_parallel(const Nest& nest, const Kernel& k) {
    auto text = [](const AffineExpr& a) {
      std::string s = a.constant ? print_expr(*a.constant) : "0";
      for (const AffineTerm& t : a.terms)
        s +=
            "+" + std::to_string(t.loop) + "*" + (t.coefficient ? print_expr(*t.coefficient) : "1");
      return s;
    };
    for (size_t l = 0; l < nest.loops.size(); ++l) {
      const Loop& loop = nest.loops[l];
      if (!loop.parallel) continue;
      for (const Update& u : nest.updates) {
        bool indexes = false;
        for (const AffineExpr& idx : u.target.index)
          for (const AffineTerm& t : idx.terms) indexes = indexes || t.loop == static_cast<int>(l);
        std::string why;
        if (!indexes) {
          why = "the update at line " + std::to_string(u.loc.line) + " reduces over it";
        }
        // A read of the target is private to the iteration when, in some dim that the loop
        // indexes, it uses the very index the write uses (each iteration owns a slice).
        for (const Access& r : u.reads) {
          if (!why.empty() || r.tensor != u.target.tensor) continue;
          bool private_slice = false;
          for (size_t d = 0; d < r.index.size(); ++d) {
            bool uses_loop = false;
            for (const AffineTerm& t : u.target.index[d].terms)
              uses_loop = uses_loop || t.loop == static_cast<int>(l);
            private_slice =
                private_slice || (uses_loop && text(r.index[d]) == text(u.target.index[d]));
          }
          if (!private_slice) {
            why = "line " + std::to_string(u.loc.line) + " reads '" +
                  k.tensors[static_cast<size_t>(u.target.tensor)].name +
                  "' at another index along it (a recurrence)";
          }
        }
        if (!why.empty()) {
          sink_.error(ErrorKind::kKernelBody, loop.loc,
                      "loop '" + loop.var + "' over Dim(\"" + loop.dim +
                          "\") is marked parallel=True but " + why + ": iterations would race",
                      "remove parallel=True from this loop");
          return;
        }
      }
    }
  }

  static ExprPtr conj(const ExprPtr& a, const ExprPtr& b) {
    if (!a) return b;
    auto e = std::make_shared<Expr>();
    e->kind = ExprKind::kBoolOp;
    e->op = Op::kAnd;
    e->loc = a->loc;
    e->items = {a, b};
    return e;
  }

  void lower_statement(const Stmt& s, const ExprPtr& guard, Nest* nest, KernelCtx* ctx) {
    Kernel& k = *ctx->kernel;
    switch (s.kind) {
      case StmtKind::kPass:
        return;
      case StmtKind::kIf: {
        check_condition(*s.value, ctx);
        ExprPtr g = conj(guard, s.value);
        for (const auto& b : s.body) lower_statement(*b, g, nest, ctx);
        if (!s.orelse.empty()) {
          ExprPtr ng = conj(guard, ast::make_unary(Op::kNot, s.value, s.value->loc));
          for (const auto& b : s.orelse) lower_statement(*b, ng, nest, ctx);
        }
        return;
      }
      case StmtKind::kAssign:
      case StmtKind::kAugAssign:
        break;
      case StmtKind::kFor:
        sink_.error(ErrorKind::kImperfectNest, s.loc,
                    "loop under an 'if' or beside statements in kernel '" + k.name + "'",
                    "loops nest directly; put the condition in the innermost loop");
        return;
      case StmtKind::kWhile:
        sink_.error(ErrorKind::kUnsupported, s.loc, "while loops are not allowed in a kernel",
                    "iterate with for v in Dim(\"D\"):");
        return;
      default:
        sink_.error(ErrorKind::kKernelBody, s.loc,
                    "only tensor updates (T[i] = e, +=, *=, max/min) and if-guards may appear "
                    "in the innermost loop");
        return;
    }
    if (s.target->kind != ExprKind::kSubscript || s.target->items[0]->kind != ExprKind::kName) {
      sink_.error(ErrorKind::kKernelBody, s.loc,
                  s.target->kind == ExprKind::kName
                      ? "scalar variable '" + s.target->text + "' assigned in a kernel"
                      : "can only assign to tensor elements",
                  "write a tensor element T[i, j] (scalar temporaries are not supported: "
                  "inline the expression)");
      return;
    }
    Update u;
    u.loc = s.loc;
    u.guard = guard;
    if (!lower_access(*s.target, ctx, &u.target, /*is_write=*/true)) return;
    if (s.kind == StmtKind::kAssign) {
      u.kind = UpdateKind::kAssign;
      u.value = s.value;
      const std::string fn = callee(*s.value);
      if ((fn == "max" || fn == "min") && s.value->items.size() == 3) {
        const Expr& a = *s.value->items[1];
        const Expr& b = *s.value->items[2];
        if (ast::equal(a, *s.target) || ast::equal(b, *s.target)) {
          u.kind = fn == "max" ? UpdateKind::kMax : UpdateKind::kMin;
          u.value = ast::equal(a, *s.target) ? s.value->items[2] : s.value->items[1];
        }
      }
    } else {
      switch (s.op) {
        case Op::kAdd:
          u.kind = UpdateKind::kAdd;
          u.value = s.value;
          break;
        case Op::kSub:
          u.kind = UpdateKind::kAdd;
          u.value = ast::make_unary(Op::kNeg, s.value, s.value->loc);
          break;
        case Op::kMul:
          u.kind = UpdateKind::kMul;
          u.value = s.value;
          break;
        default:
          sink_.error(ErrorKind::kKernelBody, s.loc,
                      std::string("update '") + ast::op_text(s.op) + "=' is not supported",
                      "use =, +=, -=, *= or T[i] = max(T[i], e)");
          return;
      }
    }
    const size_t before = sink_.size();
    check_value(*u.value, ctx, &u, /*in_condition=*/false);
    if (sink_.size() != before) return;
    nest->updates.push_back(std::move(u));
  }

  // Lowers T[i, j] into an Access; reports errors; returns false on error.
  bool lower_access(const Expr& sub, KernelCtx* ctx, Access* out, bool is_write) {
    Kernel& k = *ctx->kernel;
    const std::string& name = sub.items[0]->text;
    const int t = k.find_tensor(name);
    if (t < 0) {
      sink_.error(ErrorKind::kUnknownName, sub.items[0]->loc,
                  "unknown tensor '" + name + "' in kernel '" + k.name + "'",
                  "tensors are the kernel's Tensor parameters and its allocations");
      return false;
    }
    KernelTensor& tensor = k.tensors[static_cast<size_t>(t)];
    if (is_write && tensor.is_param) {
      sink_.error(ErrorKind::kKernelBody, sub.loc,
                  "kernel '" + k.name + "' writes its parameter '" + name + "'",
                  "kernels are pure: allocate an output with Tensor(...) and write that");
      return false;
    }
    const size_t rank = sub.items.size() - 1;
    if (rank != tensor.dims.size()) {
      sink_.error(ErrorKind::kShape, sub.loc,
                  "'" + name + "' has " + std::to_string(tensor.dims.size()) + " dims (" +
                      join(tensor.dims, ",") + ") but is indexed with " + std::to_string(rank),
                  "give one index per dim");
      return false;
    }
    if (!is_write) tensor.read = true;
    out->tensor = t;
    out->loc = sub.loc;
    bool ok = true;
    for (size_t i = 1; i < sub.items.size(); ++i) {
      AffineExpr a;
      std::string why;
      if (!to_affine(*sub.items[i], ctx, &a, &why)) {
        ErrorKind kind = ErrorKind::kNonAffine;
        std::string hint =
            "indices are affine in loop variables: c0*i + c1*j + c, with static "
            "coefficients (integers, int parameters, sizes)";
        if (why == "tensor") {
          hint =
              "data-dependent indexing (X[idx[i]]) is done with gather(table, index, "
              "dim=...) in model()";
        }
        sink_.error(kind, sub.items[i]->loc,
                    "index '" + print_expr(*sub.items[i]) + "' of '" + name +
                        "' is not affine in the loop variables",
                    hint);
        ok = false;
        continue;
      }
      out->index.push_back(std::move(a));
    }
    return ok;
  }

  bool uses_loop_var(const Expr& e, const KernelCtx& ctx) const {
    if (e.kind == ExprKind::kName) {
      for (const auto& l : *ctx.loops)
        if (l.var == e.text) return true;
      return false;
    }
    for (const auto& item : e.items)
      if (uses_loop_var(*item, ctx)) return true;
    return false;
  }

  int loop_index(const std::string& name, const KernelCtx& ctx) const {
    for (size_t i = 0; i < ctx.loops->size(); ++i)
      if ((*ctx.loops)[i].var == name) return static_cast<int>(i);
    return -1;
  }

  static ExprPtr add_const(const ExprPtr& a, const ExprPtr& b, Op op) {
    if (!b) return a;
    if (!a) return op == Op::kSub ? ast::make_unary(Op::kNeg, b, b->loc) : b;
    return ast::make_binary(op, a, b, a->loc);
  }
  static ExprPtr mul_coef(const ExprPtr& coef, const ExprPtr& scale) {
    if (!coef) return scale;
    return ast::make_binary(Op::kMul, coef, scale, coef->loc);
  }

  // Decomposes an index expression into sum(coef * loop var) + constant.
  bool to_affine(const Expr& e, KernelCtx* ctx, AffineExpr* out, std::string* why) {
    switch (e.kind) {
      case ExprKind::kName: {
        const int li = loop_index(e.text, *ctx);
        if (li >= 0) {
          out->terms.push_back(AffineTerm{li, nullptr});
          return true;
        }
        break;
      }
      case ExprKind::kBinary: {
        if (e.op == Op::kAdd || e.op == Op::kSub) {
          AffineExpr a, b;
          if (!to_affine(*e.items[0], ctx, &a, why) || !to_affine(*e.items[1], ctx, &b, why))
            return false;
          out->terms = std::move(a.terms);
          for (auto& t : b.terms) {
            if (e.op == Op::kSub) {
              t.coefficient =
                  t.coefficient ? ast::make_unary(Op::kNeg, t.coefficient) : ast::make_int(-1);
            }
            out->terms.push_back(std::move(t));
          }
          out->constant = add_const(a.constant, b.constant, e.op);
          return true;
        }
        if (e.op == Op::kMul) {
          const bool l = uses_loop_var(*e.items[0], *ctx);
          const bool r = uses_loop_var(*e.items[1], *ctx);
          if (l && r) {
            *why = "product";
            return false;
          }
          if (l || r) {
            const Expr& var_side = l ? *e.items[0] : *e.items[1];
            const ExprPtr& scale = l ? e.items[1] : e.items[0];
            const size_t before = sink_.size();
            check_static(*scale, ctx, "an index coefficient");
            if (sink_.size() != before) return true;  // already reported
            AffineExpr a;
            if (!to_affine(var_side, ctx, &a, why)) return false;
            for (auto& t : a.terms) t.coefficient = mul_coef(t.coefficient, scale);
            out->terms = std::move(a.terms);
            if (a.constant)
              out->constant = ast::make_binary(Op::kMul, a.constant, scale, a.constant->loc);
            return true;
          }
        }
        if (uses_loop_var(e, *ctx)) {
          *why = "operator";
          return false;
        }
        break;
      }
      case ExprKind::kUnary:
        if (e.op == Op::kNeg || e.op == Op::kPos) {
          AffineExpr a;
          if (!to_affine(*e.items[0], ctx, &a, why)) return false;
          if (e.op == Op::kNeg) {
            for (auto& t : a.terms)
              t.coefficient =
                  t.coefficient ? ast::make_unary(Op::kNeg, t.coefficient) : ast::make_int(-1);
            if (a.constant) a.constant = ast::make_unary(Op::kNeg, a.constant);
          }
          *out = std::move(a);
          return true;
        }
        break;
      case ExprKind::kSubscript:
        if (e.items[0]->kind == ExprKind::kName &&
            ctx->kernel->find_tensor(e.items[0]->text) >= 0) {
          *why = "tensor";
          return false;
        }
        break;
      default:
        break;
    }
    if (uses_loop_var(e, *ctx)) {
      *why = "operator";
      return false;
    }
    // A static constant.
    const size_t before = sink_.size();
    check_static(e, ctx, "an index");
    if (sink_.size() != before) return true;  // already reported
    out->constant = std::make_shared<Expr>(e);
    return true;
  }

  // A guard: comparisons of affine expressions joined by and/or/not.
  void check_condition(const Expr& e, KernelCtx* ctx) {
    switch (e.kind) {
      case ExprKind::kBoolOp:
        for (const auto& item : e.items) check_condition(*item, ctx);
        return;
      case ExprKind::kUnary:
        if (e.op == Op::kNot) {
          check_condition(*e.items[0], ctx);
          return;
        }
        break;
      case ExprKind::kCompare:
        for (const auto& item : e.items) {
          if (reads_tensor(*item, *ctx)) {
            sink_.error(ErrorKind::kDataDependent, item->loc,
                        "condition reads tensor values: '" + print_expr(e) + "'",
                        "a kernel's control flow cannot depend on data; write the choice as "
                        "select(cond, a, b) in the right-hand side");
            return;
          }
          AffineExpr a;
          std::string why;
          if (!to_affine(*item, ctx, &a, &why)) {
            sink_.error(ErrorKind::kNonAffine, item->loc,
                        "condition '" + print_expr(*item) +
                            "' is not affine in the loop "
                            "variables",
                        "guards compare affine expressions, e.g. 0 <= p*2 + r - 1 < size(\"H\")");
          }
        }
        return;
      default:
        break;
    }
    if (reads_tensor(e, *ctx)) {
      sink_.error(ErrorKind::kDataDependent, e.loc,
                  "condition reads tensor values: '" + print_expr(e) + "'",
                  "a kernel's control flow cannot depend on data; use select(cond, a, b)");
      return;
    }
    sink_.error(ErrorKind::kKernelBody, e.loc,
                "a guard must be a comparison, got '" + print_expr(e) + "'",
                "write if 0 <= i - 1: or combine comparisons with and/or");
  }

  bool reads_tensor(const Expr& e, const KernelCtx& ctx) const {
    if (e.kind == ExprKind::kSubscript && e.items[0]->kind == ExprKind::kName &&
        ctx.kernel->find_tensor(e.items[0]->text) >= 0)
      return true;
    for (const auto& item : e.items)
      if (reads_tensor(*item, ctx)) return true;
    return false;
  }

  // Checks a scalar right-hand side and collects its tensor reads (Update::reads, in source
  // order). Its FLOPs are counted by a later pass (count_flops, ir/passes.h).
  void check_value(const Expr& e, KernelCtx* ctx, Update* u, bool in_condition) {
    Kernel& k = *ctx->kernel;
    switch (e.kind) {
      case ExprKind::kInt:
      case ExprKind::kFloat:
        return;
      case ExprKind::kStr:
        sink_.error(ErrorKind::kType, e.loc, "a string is not a scalar value");
        return;
      case ExprKind::kName: {
        if (e.text == "inf" || e.text == "nan" || e.text == "True" || e.text == "False") return;
        if (loop_index(e.text, *ctx) >= 0) return;
        if (program_.constants.count(e.text)) return;
        for (const auto& p : k.params) {
          if (p.name != e.text) continue;
          if (p.kind != ParamKind::kTensor) return;
          sink_.error(ErrorKind::kType, e.loc, "tensor '" + e.text + "' used as a scalar",
                      "read an element: " + e.text + "[i, j]");
          return;
        }
        if (k.find_tensor(e.text) >= 0) {
          sink_.error(ErrorKind::kType, e.loc, "tensor '" + e.text + "' used as a scalar",
                      "read an element: " + e.text + "[i, j]");
          return;
        }
        sink_.error(ErrorKind::kUnknownName, e.loc,
                    "'" + e.text + "' is not defined in kernel '" + k.name + "'",
                    "a kernel sees its parameters, its allocations, its loop variables and "
                    "module constants");
        return;
      }
      case ExprKind::kSubscript: {
        const Expr& base = *e.items[0];
        if (base.kind == ExprKind::kAttribute && base.text == "shape") {
          check_static(e, ctx, "an expression");
          return;
        }
        if (base.kind == ExprKind::kCall && report_nested_call(base, k)) return;
        if (base.kind != ExprKind::kName) {
          sink_.error(ErrorKind::kKernelBody, e.loc,
                      "unsupported subscript '" + print_expr(e) + "'");
          return;
        }
        Access a;
        if (lower_access(e, ctx, &a, /*is_write=*/false)) u->reads.push_back(std::move(a));
        return;
      }
      case ExprKind::kBinary:
        check_value(*e.items[0], ctx, u, in_condition);
        check_value(*e.items[1], ctx, u, in_condition);
        return;
      case ExprKind::kUnary:
        if (e.op == Op::kNot && !in_condition) {
          sink_.error(ErrorKind::kKernelBody, e.loc, "'not' outside a select() condition",
                      "conditions go in select(cond, a, b) or an if guard");
        }
        check_value(*e.items[0], ctx, u, in_condition);
        return;
      case ExprKind::kCompare:
      case ExprKind::kBoolOp:
        if (!in_condition) {
          sink_.error(ErrorKind::kKernelBody, e.loc,
                      "comparison '" + print_expr(e) + "' outside a select() condition",
                      "write select(a > b, x, y) for a value-level choice");
          return;
        }
        for (const auto& item : e.items) check_value(*item, ctx, u, in_condition);
        return;
      case ExprKind::kCall: {
        const std::string fn = callee(e);
        auto it = scalar_functions().find(fn);
        if (it == scalar_functions().end()) {
          if (fn == "size") {
            check_static(e, ctx, "an expression");
            return;
          }
          if (report_nested_call(e, k)) return;
          sink_.error(ErrorKind::kUnknownBuiltin, e.loc,
                      "unknown function '" + (fn.empty() ? print_expr(*e.items[0]) : fn) +
                          "' in kernel '" + k.name + "'",
                      "scalar functions: exp log log1p expm1 sqrt rsqrt abs tanh sigmoid erf "
                      "sin cos floor ceil round max min pow select cast");
          return;
        }
        if (!e.keywords.empty()) {
          sink_.error(ErrorKind::kType, e.loc, "'" + fn + "' takes no keyword arguments");
        }
        const size_t nargs = e.items.size() - 1;
        switch (it->second) {
          case FnClass::kSelect:
            if (nargs != 3) {
              sink_.error(ErrorKind::kCallArity, e.loc,
                          "select takes 3 arguments (cond, a, b), "
                          "got " +
                              std::to_string(nargs));
              return;
            }
            check_value(*e.items[1], ctx, u, /*in_condition=*/true);
            check_value(*e.items[2], ctx, u, in_condition);
            check_value(*e.items[3], ctx, u, in_condition);
            return;
          case FnClass::kCast: {
            if (nargs != 2 || e.items[2]->kind != ExprKind::kStr) {
              sink_.error(ErrorKind::kCallArity, e.loc,
                          "cast takes a value and a dtype string: cast(x, \"bf16\")");
              return;
            }
            DType d;
            parse_dtype_value(*e.items[2], &d);
            check_value(*e.items[1], ctx, u, in_condition);
            return;
          }
          case FnClass::kCompare:
            if (nargs < 2) {
              sink_.error(ErrorKind::kCallArity, e.loc,
                          fn + " takes at least 2 arguments, got " + std::to_string(nargs));
              return;
            }
            break;
          case FnClass::kTranscendental: {
            const size_t want = fn == "pow" ? 2 : 1;
            if (nargs != want) {
              sink_.error(ErrorKind::kCallArity, e.loc,
                          fn + " takes " + std::to_string(want) + " argument(s), got " +
                              std::to_string(nargs));
              return;
            }
            break;
          }
          case FnClass::kOther:
            if (nargs != 1) {
              sink_.error(ErrorKind::kCallArity, e.loc,
                          fn + " takes 1 argument, got " + std::to_string(nargs));
              return;
            }
            break;
        }
        for (size_t i = 1; i < e.items.size(); ++i) check_value(*e.items[i], ctx, u, in_condition);
        return;
      }
      default:
        sink_.error(ErrorKind::kKernelBody, e.loc,
                    "'" + print_expr(e) + "' is not a scalar expression");
    }
  }

  // ---------------------------------------------------------------- model and helpers
  struct FnScope {
    // Open addressing, the names inside the table: a flat model() has a parameter per weight
    // (14,545 in the benchmark's 40,000-node program), and a node-based set's lookups chased
    // a pointer per name.
    absl::flat_hash_set<std::string> names;
    std::string fn;
  };

  void check_function(const Stmt& def) {
    const bool is_model = def.name == "model";
    FnScope scope;
    scope.fn = def.name;
    for (size_t i = 0; i < def.params.size(); ++i) {
      ast::prefetch_ahead(def.params, i);
      const ast::Param& p = def.params[i];
      scope.names.insert(p.name);
      if (!is_model || !p.annotation) {
        if (is_model && !p.default_value) {
          sink_.error(ErrorKind::kType, p.loc,
                      "model() parameter '" + p.name + "' has no annotation",
                      "annotate inputs as " + p.name +
                          ": Tensor(\"B,K\", role=\"input\") (or role=\"weight\"); scalars "
                          "need a default value");
        }
        continue;
      }
      TensorAnnotation ann;
      if (!parse_tensor_annotation(*p.annotation, &ann, Role::kInput)) {
        if (!p.default_value) {
          sink_.error(ErrorKind::kType, p.annotation->loc,
                      "model() parameter '" + p.name +
                          "' must be a Tensor(...) or have a "
                          "default value");
        }
      } else if (ann.role != Role::kInput && ann.role != Role::kWeight &&
                 ann.role != Role::kGenerated) {
        sink_.error(ErrorKind::kType, p.annotation->loc,
                    "model() parameter '" + p.name + "' has role '" + role_name(ann.role) + "'",
                    "parameters of model() are role=\"input\", \"weight\" or \"generated\"");
      }
    }
    collect_assigned(def.body, &scope);
    for (size_t i = 0; i < def.body.size(); ++i) {
      // The nodes of a statement ahead, and the names the next one reads: a flat model() has
      // a parameter per weight, in a table that a program larger than the cache has evicted.
      ast::look_ahead(def.body, i, [&](const std::string& name) { scope.names.prefetch(name); });
      check_composition_stmt(*def.body[i], scope);
    }
  }

  void collect_assigned(const std::vector<StmtPtr>& body, FnScope* scope) {
    std::function<void(const Expr&)> bind = [&](const Expr& t) {
      if (t.kind == ExprKind::kName) scope->names.insert(t.text);
      if (t.kind == ExprKind::kTuple || t.kind == ExprKind::kList)
        for (const auto& item : t.items) bind(*item);
    };
    for (size_t i = 0; i < body.size(); ++i) {
      ast::prefetch_ahead(body, i, 128);  // the statement and its target
      const StmtPtr& s = body[i];
      if ((s->kind == StmtKind::kAssign || s->kind == StmtKind::kFor) && s->target)
        bind(*s->target);
      collect_assigned(s->body, scope);
      collect_assigned(s->orelse, scope);
    }
  }

  void check_composition_stmt(const Stmt& s, const FnScope& scope) {
    switch (s.kind) {
      case StmtKind::kWhile:
        sink_.error(ErrorKind::kUnsupported, s.loc, "while loops are not supported",
                    "loops need a static trip count: for i in range(N)");
        return;
      case StmtKind::kFunctionDef:
        sink_.error(ErrorKind::kUnsupported, s.loc, "nested functions are not supported",
                    "define '" + s.name + "' at module level");
        return;
      case StmtKind::kImport:
        sink_.error(ErrorKind::kUnsupported, s.loc, "imports belong at module level");
        return;
      case StmtKind::kFor: {
        const Expr& it = *s.value;
        if (callee(it) == "Dim") {
          sink_.error(ErrorKind::kUnsupported, it.loc, "Dim loops belong in @kernel functions",
                      "in " + scope.fn + "() loop with for i in range(N) over a static N");
          return;
        }
        check_composition_expr(it, scope);
        break;
      }
      case StmtKind::kWith:
        check_unit_header(*s.value);
        for (const auto& b : s.body) check_composition_stmt(*b, scope);
        return;
      case StmtKind::kAugAssign:
        if (s.target->kind != ExprKind::kName) {
          sink_.error(ErrorKind::kUnsupported, s.loc, "element updates belong in @kernel functions",
                      "in " + scope.fn + "() rebind whole values: x = x + 1");
          return;
        }
        break;
      case StmtKind::kAssign:
        if (s.target->kind == ExprKind::kSubscript) {
          sink_.error(ErrorKind::kUnsupported, s.loc,
                      "element assignment belongs in @kernel functions",
                      "write tensor elements inside a kernel's loop nest");
          return;
        }
        break;
      default:
        break;
    }
    if (s.value && s.kind != StmtKind::kFor) check_composition_expr(*s.value, scope);
    for (const auto& b : s.body) check_composition_stmt(*b, scope);
    for (const auto& b : s.orelse) check_composition_stmt(*b, scope);
  }

  // `with unit("label"[, fp32_math="fp32"|"tf32"|"bf16"|"fp16"|"fp8"]):` (docs/ir.md §4.1).
  void check_unit_header(const Expr& e) {
    const char* hint =
        "the composition layer's one context is with unit(\"label\"): or "
        "with unit(\"label\", fp32_math=\"fp32\"):";
    if (e.kind != ExprKind::kCall || callee(e) != "unit") {
      sink_.error(ErrorKind::kUnsupported, e.loc, "'with " + print_expr(e) + "' is not supported",
                  hint);
      return;
    }
    if (e.items.size() != 2 || e.items[1]->kind != ExprKind::kStr || e.items[1]->text.empty()) {
      sink_.error(ErrorKind::kCallArity, e.loc,
                  "unit() takes one non-empty string: the source operator's label", hint);
    }
    for (const ast::Keyword& kw : e.keywords) {
      if (kw.name != "fp32_math") {
        sink_.error(ErrorKind::kCallArity, kw.loc, "unit() has no argument '" + kw.name + "'",
                    hint);
      } else if (kw.value->kind != ExprKind::kStr || kw.value->text == "default" ||
                 !parse_fp32_math(kw.value->text)) {
        sink_.error(ErrorKind::kArgument, kw.value->loc,
                    "fp32_math must be \"fp32\", \"tf32\", \"bf16\", \"fp16\" or \"fp8\", got " +
                        print_expr(*kw.value),
                    "fp32: fp32 contractions run in true fp32; tf32 (bf16, fp16, fp8): they may "
                    "use TF32 (bf16, fp16, fp8) tensor cores");
      }
    }
  }

  void check_composition_expr(const Expr& e, const FnScope& scope) {
    if (e.kind == ExprKind::kName) {
      if (scope.names.count(e.text) || program_.constants.count(e.text) || e.text == "DIMS" ||
          e.text == "True" || e.text == "False" || e.text == "None" || e.text == "inf" ||
          e.text == "nan" || program_.kernel_index.count(e.text) ||
          program_.helpers.count(e.text) || is_kernel_name(e.text))
        return;
      sink_.error(ErrorKind::kUnknownName, e.loc,
                  "'" + e.text + "' is not defined in " + scope.fn + "()",
                  "define it before use: a parameter, an assignment, a loop variable or a "
                  "module constant");
      return;
    }
    if (e.kind == ExprKind::kCall) {
      const Expr& fn = *e.items[0];
      if (fn.kind != ExprKind::kName) {
        sink_.error(ErrorKind::kUnknownBuiltin, fn.loc, "cannot call '" + print_expr(fn) + "'",
                    "call kernels, helpers and builtins by name");
      } else if (!is_kernel_name(fn.text) && !program_.helpers.count(fn.text) &&
                 !is_graph_builtin(fn.text) && !python_builtins().count(fn.text)) {
        if (fn.text == "model") {
          sink_.error(ErrorKind::kRecursion, fn.loc, "model() cannot be called",
                      "move shared code into a helper function");
        } else {
          sink_.error(ErrorKind::kUnknownBuiltin, fn.loc,
                      "unknown function '" + fn.text + "' in " + scope.fn + "()",
                      "model() calls @kernel functions, helper functions and the builtins " +
                          builtin_names() + " (and range len min max int float)");
        }
      } else {
        if (program_.helpers.count(fn.text)) calls_[scope.fn].push_back({fn.text, fn.loc});
        if (scope.fn == "model" && !python_builtins().count(fn.text)) ++program_.model_calls;
      }
      for (size_t i = 1; i < e.items.size(); ++i) check_composition_expr(*e.items[i], scope);
      for (const auto& kw : e.keywords) check_composition_expr(*kw.value, scope);
      return;
    }
    if (e.kind == ExprKind::kAttribute) {
      check_composition_expr(*e.items[0], scope);
      return;
    }
    for (const auto& item : e.items) check_composition_expr(*item, scope);
  }

  bool is_kernel_name(const std::string& name) const {
    for (const auto& s : program_.module.body)
      if (s->kind == StmtKind::kFunctionDef && s->name == name && is_kernel_def(*s)) return true;
    return false;
  }

  void check_recursion() {
    // Depth-first search over helper calls; a back edge is a cycle.
    std::unordered_map<std::string, int> state;  // 0 new, 1 on stack, 2 done
    std::vector<std::string> stack;
    std::function<void(const std::string&)> visit = [&](const std::string& fn) {
      state[fn] = 1;
      stack.push_back(fn);
      for (const auto& [callee_name, loc] : calls_[fn]) {
        if (state[callee_name] == 1) {
          std::string path;
          auto start = std::find(stack.begin(), stack.end(), callee_name);
          for (auto it = start; it != stack.end(); ++it) path += *it + " -> ";
          path += callee_name;
          sink_.error(ErrorKind::kRecursion, loc, "recursive call: " + path,
                      "the composition layer is unrolled statically; recursion has no static "
                      "depth — use for i in range(N)");
        } else if (state[callee_name] == 0) {
          visit(callee_name);
        }
      }
      stack.pop_back();
      state[fn] = 2;
    };
    std::vector<std::string> roots;
    for (const auto& [name, def] : program_.helpers) roots.push_back(name);
    std::sort(roots.begin(), roots.end());
    roots.insert(roots.begin(), "model");
    for (const auto& r : roots)
      if (state[r] == 0) visit(r);
  }

  Program program_;
  DiagnosticSink sink_;
  std::unordered_map<std::string, std::vector<std::pair<std::string, Loc>>> calls_;
};

}  // namespace

bool is_scalar_function(const std::string& name) { return scalar_functions().count(name) > 0; }
bool is_graph_builtin(const std::string& name) { return find_builtin(name).has_value(); }

Program check_and_lower(ast::Module module) { return Checker(std::move(module)).run(); }

const std::vector<CheckPass>& check_passes() {
  static const std::vector<CheckPass> kPasses = {{"lower_scalars", lower_scalars},
                                                 {"count_flops", count_flops},
                                                 {"derive_einsums", derive_einsums}};
  return kPasses;
}

Program check_program(ast::Module module, const PassDump& dump) {
  Program program = check_and_lower(std::move(module));
  if (dump) dump("check_and_lower", program);
  for (const CheckPass& pass : check_passes()) {
    program = pass.run(std::move(program));
    if (dump) dump(pass.name, program);
  }
  return program;
}

int Kernel::find_tensor(const std::string& n) const {
  for (size_t i = 0; i < tensors.size(); ++i)
    if (tensors[i].name == n) return static_cast<int>(i);
  return -1;
}

const Kernel* Program::find_kernel(const std::string& n) const {
  auto it = kernel_index.find(n);
  return it == kernel_index.end() ? nullptr : &kernels[static_cast<size_t>(it->second)];
}

}  // namespace solar
