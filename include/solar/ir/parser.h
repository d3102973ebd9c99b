// Front end: source text -> ast::Module. The lexer handles Python indentation (spaces only;
// a tab is an indentation error) and the parser is recursive descent over the subset of
// docs/ir.md. Syntax errors are UserErrors with file:line:col.
#pragma once

#include <string>

#include "solar/ir/ast.h"

namespace solar {

// Largest source file accepted (a guard against feeding a data file by mistake).
constexpr size_t kMaxSourceBytes = 8u << 20;

// Reads `path` (rejecting missing, empty, binary and over-large files) and parses it.
ast::Module parse_file(const std::string& path);
// Parses `text`; `file` names it in messages.
ast::Module parse_source(const std::string& text, const std::string& file);
// Reads a file with the same checks as parse_file, returning its text.
std::string read_source_file(const std::string& path);

}  // namespace solar
