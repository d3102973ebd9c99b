#include "solar/base/error.h"

#include "solar/base/checked.h"

namespace solar {

const char* error_kind_name(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kIo:
      return "io";
    case ErrorKind::kSyntax:
      return "syntax";
    case ErrorKind::kIndentation:
      return "indentation";
    case ErrorKind::kUnknownName:
      return "unknown-name";
    case ErrorKind::kUnknownDim:
      return "unknown-dim";
    case ErrorKind::kNonAffine:
      return "non-affine";
    case ErrorKind::kDataDependent:
      return "data-dependent";
    case ErrorKind::kImperfectNest:
      return "imperfect-nest";
    case ErrorKind::kKernelBody:
      return "kernel-body";
    case ErrorKind::kCallArity:
      return "call-arity";
    case ErrorKind::kDimMismatch:
      return "dim-mismatch";
    case ErrorKind::kShape:
      return "shape";
    case ErrorKind::kUnknownBuiltin:
      return "unknown-builtin";
    case ErrorKind::kUnknownDtype:
      return "unknown-dtype";
    case ErrorKind::kRecursion:
      return "recursion";
    case ErrorKind::kUnsupported:
      return "unsupported";
    case ErrorKind::kType:
      return "type";
    case ErrorKind::kSpec:
      return "spec";
    case ErrorKind::kArgument:
      return "argument";
    case ErrorKind::kInput:
      return "input";
    case ErrorKind::kBounds:
      return "bounds";
    case ErrorKind::kBudget:
      return "budget";
    case ErrorKind::kValidation:
      return "validation";
    case ErrorKind::kCompile:
      return "compile";
    case ErrorKind::kOverflow:
      return "overflow";
  }
  return "unknown";
}

std::string format_diagnostic(const std::string& kind, const std::string& file, Loc loc,
                              const std::string& message, const std::string& hint) {
  std::string out = file;
  if (!file.empty() && loc.line > 0)
    out += ":" + std::to_string(loc.line) + ":" + std::to_string(loc.col);
  if (!out.empty()) out += ": ";
  out += "error[" + kind + "]: " + message;
  if (!hint.empty()) out += "\n  hint: " + hint;
  return out;
}

std::string Diagnostic::format() const {
  return format_diagnostic(error_kind_name(kind), file, loc, message, hint);
}

static std::string join_diagnostics(const std::vector<Diagnostic>& diagnostics) {
  std::string out;
  for (size_t i = 0; i < diagnostics.size(); ++i) {
    if (i) out += "\n";
    out += diagnostics[i].format();
  }
  return out;
}

UserError::UserError(std::vector<Diagnostic> diagnostics)
    : std::runtime_error(join_diagnostics(diagnostics)), diagnostics_(std::move(diagnostics)) {
  if (diagnostics_.empty()) throw InternalError("UserError without diagnostics");
}

UserError::UserError(ErrorKind kind, std::string file, Loc loc, std::string message,
                     std::string hint)
    : UserError(std::vector<Diagnostic>{
          Diagnostic{kind, std::move(file), loc, std::move(message), std::move(hint)}}) {}

void DiagnosticSink::error(ErrorKind kind, Loc loc, std::string message, std::string hint) {
  diagnostics_.push_back(Diagnostic{kind, file_, loc, std::move(message), std::move(hint)});
}

void DiagnosticSink::throw_if_any() const {
  if (!diagnostics_.empty()) throw UserError(diagnostics_);
}

UserError count_overflow(const CountSite& site, const std::string& quantity) {
  const std::string where = site.subject.empty() ? "the graph's total " : site.subject + ": ";
  return UserError(ErrorKind::kOverflow, site.file, site.loc,
                   where + quantity + " do not fit in 64 bits (more than 2^63 - 1 = " +
                       std::to_string(kMaxCount) + ")",
                   "Solar carries every count exactly up to 2^63 - 1 and refuses larger ones; "
                   "lower the sizes (--dim NAME=N)");
}

}  // namespace solar
