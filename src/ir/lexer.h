// Lexer for the IR's Python subset: produces NEWLINE/INDENT/DEDENT like Python's tokenizer.
// Private to src/ir.
#pragma once

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

// Tokenises all of `src`; throws UserError (kSyntax / kIndentation) on the first error.
std::vector<Token> tokenize(std::string_view src, const std::string& file);

}  // namespace solar::detail
