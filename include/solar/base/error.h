// Errors of the Solar core.
//
// Two kinds, never mixed (as in Halide): a UserError means the input is wrong (a program,
// a spec, a command-line value) and carries every problem found, each with file:line:col,
// what is wrong and what to write instead; an InternalError means Solar is wrong.
// Library code never prints and never exits: it throws one of these.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace solar {

// A position in a source file; line and col are 1-based, 0 means "unknown".
struct Loc {
  uint32_t line = 0;
  uint32_t col = 0;
};

// The category of a user error. Tests assert the kind and a substring of the message.
enum class ErrorKind {
  kIo,              // file cannot be read, is empty, binary or too large
  kSyntax,          // not in the parsed Python subset
  kIndentation,     // tabs, inconsistent dedent
  kUnknownName,     // a name that is not defined
  kUnknownDim,      // a Dim or dim name that is never bound
  kNonAffine,       // an index that is not affine in the loop variables
  kDataDependent,   // a branch or loop bound that reads tensor values
  kImperfectNest,   // statements between loops, loops beside statements
  kKernelBody,      // other restrictions of @kernel bodies
  kCallArity,       // wrong number or names of arguments
  kDimMismatch,     // a dim bound to two different sizes
  kShape,           // other shape errors in the composition layer
  kUnknownBuiltin,  // a call to a function that is neither kernel, helper nor builtin
  kUnknownDtype,    // dtype string not in the list
  kRecursion,       // a helper or kernel that calls itself, directly or not
  kUnsupported,     // while loops, non-static ranges, other unsupported constructs
  kType,            // a value of the wrong kind (tensor where an int is needed, ...)
  kSpec,            // architecture spec: missing, negative or unknown field
  kArgument,        // bad option value (unknown arch, bad --dim)
  kInput,           // execution inputs: missing, unknown, wrong shape or dtype
  kBounds,          // an out-of-range tensor access during execution
  kBudget,          // execution would exceed the memory or time budget
  kValidation,      // outputs do not match the expected ones
  kCompile,         // the native backend cannot compile or load a kernel here
  kOverflow,        // a count (points, MACs, FLOPs, elements, bytes) or a graph total > 2^63 - 1
};

const char* error_kind_name(ErrorKind kind);

// One problem in one place.
struct Diagnostic {
  ErrorKind kind = ErrorKind::kSyntax;
  std::string file;
  Loc loc;
  std::string message;  // what is wrong
  std::string hint;     // what to write instead ("" if nothing useful to say)

  // "file:line:col: error[kind]: message\n  hint: ..."
  std::string format() const;
};

// The one text of a diagnostic, in both languages (Python's solar.errors.Diagnostic prints
// through it): "file:line:col: error[kind]: message" and, with a hint, "\n  hint: hint".
// Without a file there is no location; without a line, only the file. `kind` is a name: the
// Python layer has kinds of its own (capture, lower, ...).
std::string format_diagnostic(const std::string& kind, const std::string& file, Loc loc,
                              const std::string& message, const std::string& hint);

// The input is wrong. Holds all diagnostics found (at least one).
class UserError : public std::runtime_error {
 public:
  explicit UserError(std::vector<Diagnostic> diagnostics);
  UserError(ErrorKind kind, std::string file, Loc loc, std::string message, std::string hint = "");

  const std::vector<Diagnostic>& diagnostics() const { return diagnostics_; }
  ErrorKind kind() const { return diagnostics_.front().kind; }

 private:
  std::vector<Diagnostic> diagnostics_;
};

// Solar itself is wrong: a broken invariant.
class InternalError : public std::logic_error {
 public:
  explicit InternalError(const std::string& what) : std::logic_error(what) {}
};

// Collects diagnostics during a pass and throws them together.
class DiagnosticSink {
 public:
  explicit DiagnosticSink(std::string file) : file_(std::move(file)) {}
  void error(ErrorKind kind, Loc loc, std::string message, std::string hint = "");
  bool empty() const { return diagnostics_.empty(); }
  size_t size() const { return diagnostics_.size(); }
  // Throws UserError if any diagnostic was recorded.
  void throw_if_any() const;
  const std::string& file() const { return file_; }

 private:
  std::string file_;
  std::vector<Diagnostic> diagnostics_;
};

#define SOLAR_INTERNAL_CHECK(cond, msg)                                                     \
  do {                                                                                      \
    if (!(cond))                                                                            \
      throw ::solar::InternalError(std::string(__FILE__) + ":" + std::to_string(__LINE__) + \
                                   ": internal check failed: " + (msg));                    \
  } while (0)

}  // namespace solar
