// Lexer for the IR's Python subset: produces NEWLINE/INDENT/DEDENT like Python's tokenizer.
// Private to src/ir.
#pragma once

#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "solar/base/error.h"

namespace solar::detail {

enum class Tok : uint8_t { kName, kInt, kFloat, kString, kOp, kNewline, kIndent, kDedent, kEof };

struct Token {
  Tok kind = Tok::kEof;
  std::string_view text;  // points into the source (for kString: the decoded value in `value`)
  std::string value;      // decoded string literal
  Loc loc;
};

const char* tok_name(Tok kind);

// Produces tokens on demand (the parser looks at most a few tokens ahead, so a large file is
// never held as a token array). Throws UserError (kSyntax / kIndentation) on the first error.
// `src` and `file` must outlive the lexer.
class Lexer {
 public:
  Lexer(std::string_view src, const std::string& file);
  ~Lexer();
  // Appends at least one token to `out`; after the end, kEof again and again.
  void fill(std::deque<Token>* out);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// All tokens of `src` (for tests and tools).
std::vector<Token> tokenize(std::string_view src, const std::string& file);

}  // namespace solar::detail
