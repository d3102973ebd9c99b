#include "lexer.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <deque>

namespace solar::detail {

const char* tok_name(Tok kind) {
  switch (kind) {
    case Tok::kName:
      return "name";
    case Tok::kInt:
      return "integer";
    case Tok::kFloat:
      return "number";
    case Tok::kString:
      return "string";
    case Tok::kOp:
      return "operator";
    case Tok::kNewline:
      return "end of line";
    case Tok::kIndent:
      return "indent";
    case Tok::kDedent:
      return "dedent";
    case Tok::kEof:
      return "end of file";
  }
  return "token";
}

namespace {

// Operators longest first so that "**" wins over "*".
constexpr std::string_view kOps[] = {
    "**=", "//=", "->", "**", "//", "==", "!=", "<=", ">=", "+=", "-=", "*=", "/=",
    "%=",  "(",   ")",  "[",  "]",  "{",  "}",  ",",  ":",  ".",  ";",  "@",  "=",
    "+",   "-",   "*",  "/",  "%",  "<",  ">",  "~",  "&",  "|",  "^",
};

// The operators that start with each ASCII character, as indices into kOps in its order
// (longest first), so that lex_op tries at most four instead of scanning all 39.
constexpr uint8_t kNone = 0xFF;
constexpr size_t kMaxOpsPerFirst = 4;
using OpCandidates = std::array<uint8_t, kMaxOpsPerFirst>;
constexpr OpCandidates kNoOps = {kNone, kNone, kNone, kNone};
constexpr std::array<OpCandidates, 128> kOpsByFirst = [] {
  std::array<OpCandidates, 128> table{};
  for (auto& c : table) c = kNoOps;
  for (size_t i = 0; i < std::size(kOps); ++i) {
    OpCandidates& c = table[static_cast<unsigned char>(kOps[i][0])];
    size_t k = 0;
    while (c[k] != kNone) ++k;  // a fifth operator with one first character fails to compile
    c[k] = static_cast<uint8_t>(i);
  }
  return table;
}();

// [A-Za-z0-9_] in the C locale, without isalnum's locale lookup.
constexpr bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

class LexerImpl {
 public:
  LexerImpl(std::string_view src, const std::string& file) : src_(src), file_(file) {
    indents_.push_back(0);
    // A UTF-8 byte-order mark at the start is not part of the program (Python skips it too).
    if (src_.substr(0, 3) == "\xEF\xBB\xBF") pos_ = 3;
  }

  // Appends at least one token to `out` (after the end: kEof, again and again).
  void fill(std::deque<Token>* out) {
    queue_ = out;
    produce();
  }

 private:
  // Scans until at least one token is queued.
  void produce() {
    if (done_) {
      push(Tok::kEof, "", here());
      return;
    }
    const size_t before = queue_->size();
    while (queue_->size() == before) {
      if (pos_ >= src_.size()) {
        finish();
        return;
      }
      step();
    }
  }

  void finish() {
    if (depth_ > 0) {
      fail(ErrorKind::kSyntax, open_brackets_.back(), "unclosed bracket",
           "close it before the end of the file");
    }
    if (last_kind_ != Tok::kNewline && last_kind_ != Tok::kEof) push(Tok::kNewline, "", here());
    while (indents_.size() > 1) {
      indents_.pop_back();
      push(Tok::kDedent, "", here());
    }
    push(Tok::kEof, "", here());
    done_ = true;
  }

  // One step of the scan: a token, or whitespace, a comment, a continuation.
  void step() {
    if (at_line_start_ && depth_ == 0) {
      if (!handle_indentation()) return;  // blank or comment line consumed
      at_line_start_ = false;
    }
    char c = src_[pos_];
    if (c == '\n') {
      const Loc end_of_line = here();  // errors "found end of line" point here
      advance();
      if (depth_ == 0) {
        push(Tok::kNewline, "", end_of_line);
        at_line_start_ = true;
      }
      return;
    }
    if (c == ' ' || c == '\r' || c == '\f') {
      advance();
      while (pos_ < src_.size() && src_[pos_] == ' ') advance();
      return;
    }
    if (c == '\t') {
      if (depth_ > 0) {  // a tab inside brackets is only whitespace
        advance();
        return;
      }
      fail(ErrorKind::kIndentation, here(), "tab character",
           "use spaces; the IR does not accept tabs");
    }
    if (c == '#') {
      while (pos_ < src_.size() && src_[pos_] != '\n') advance();
      return;
    }
    if (c == '\\' && pos_ + 1 < src_.size() && src_[pos_ + 1] == '\n') {
      advance();
      advance();
      return;
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      lex_name();
    } else if (std::isdigit(static_cast<unsigned char>(c)) ||
               (c == '.' && pos_ + 1 < src_.size() &&
                std::isdigit(static_cast<unsigned char>(src_[pos_ + 1])))) {
      lex_number();
    } else if (c == '"' || c == '\'') {
      lex_string();
    } else {
      lex_op();
    }
  }

 private:
  Loc here() const { return Loc{line_, col_}; }
  void advance() {
    if (src_[pos_] == '\n') {
      ++line_;
      col_ = 1;
    } else {
      ++col_;
    }
    ++pos_;
  }
  void push(Tok kind, std::string_view text, Loc loc) {
    Token t;
    t.kind = kind;
    t.text = text;
    t.loc = loc;
    queue_->push_back(std::move(t));
    last_kind_ = kind;
  }
  [[noreturn]] void fail(ErrorKind kind, Loc loc, std::string msg, std::string hint = "") const {
    throw UserError(kind, file_, loc, std::move(msg), std::move(hint));
  }

  // At the start of a logical line: measure indentation, emit INDENT/DEDENT.
  // Returns false if the line was blank or a comment (consumed).
  bool handle_indentation() {
    uint32_t width = 0;
    size_t p = pos_;
    while (p < src_.size() && (src_[p] == ' ' || src_[p] == '\t' || src_[p] == '\f')) {
      if (src_[p] == '\t') {
        // Only reject tabs on non-blank lines.
        size_t q = p;
        while (q < src_.size() && (src_[q] == ' ' || src_[q] == '\t')) ++q;
        if (q < src_.size() && src_[q] != '\n' && src_[q] != '#' && src_[q] != '\r') {
          fail(ErrorKind::kIndentation, Loc{line_, static_cast<uint32_t>(p - pos_ + 1)},
               "tab in indentation", "indent with spaces only (4 per level)");
        }
      }
      ++width;
      ++p;
    }
    if (p >= src_.size() || src_[p] == '\n' || src_[p] == '#' || src_[p] == '\r') {
      while (pos_ < src_.size() && src_[pos_] != '\n') advance();
      if (pos_ < src_.size()) advance();
      return false;
    }
    while (pos_ < p) advance();
    if (width > indents_.back()) {
      indents_.push_back(width);
      push(Tok::kIndent, "", here());
    } else {
      while (width < indents_.back()) {
        indents_.pop_back();
        push(Tok::kDedent, "", here());
      }
      if (width != indents_.back()) {
        fail(ErrorKind::kIndentation, here(),
             "unindent to column " + std::to_string(width + 1) +
                 " does not match any outer indentation level",
             "line it up with the block it belongs to");
      }
    }
    return true;
  }

  void lex_name() {
    Loc loc = here();
    const size_t start = pos_;
    size_t end = pos_;
    while (end < src_.size() && is_name_char(src_[end])) ++end;  // holds no newline
    col_ += static_cast<uint32_t>(end - start);
    pos_ = end;
    push(Tok::kName, src_.substr(start, end - start), loc);
  }

  void lex_number() {
    Loc loc = here();
    size_t start = pos_;
    bool is_float = false;
    auto digits = [&] {
      while (pos_ < src_.size() &&
             (std::isdigit(static_cast<unsigned char>(src_[pos_])) || src_[pos_] == '_'))
        advance();
    };
    digits();
    if (pos_ < src_.size() && src_[pos_] == '.') {
      is_float = true;
      advance();
      digits();
    }
    if (pos_ < src_.size() && (src_[pos_] == 'e' || src_[pos_] == 'E')) {
      is_float = true;
      advance();
      if (pos_ < src_.size() && (src_[pos_] == '+' || src_[pos_] == '-')) advance();
      if (pos_ >= src_.size() || !std::isdigit(static_cast<unsigned char>(src_[pos_])))
        fail(ErrorKind::kSyntax, loc, "malformed number exponent");
      digits();
    }
    if (pos_ < src_.size() &&
        (std::isalpha(static_cast<unsigned char>(src_[pos_])) || src_[pos_] == '_')) {
      fail(ErrorKind::kSyntax, loc,
           "malformed number '" + std::string(src_.substr(start, pos_ - start + 1)) + "'");
    }
    push(is_float ? Tok::kFloat : Tok::kInt, src_.substr(start, pos_ - start), loc);
  }

  void lex_string() {
    Loc loc = here();
    size_t start = pos_;
    char q = src_[pos_];
    bool triple = pos_ + 2 < src_.size() && src_[pos_ + 1] == q && src_[pos_ + 2] == q;
    std::string value;
    advance();
    if (triple) {
      advance();
      advance();
    }
    while (true) {
      if (pos_ >= src_.size()) fail(ErrorKind::kSyntax, loc, "unterminated string");
      char c = src_[pos_];
      if (!triple && c == '\n') fail(ErrorKind::kSyntax, loc, "unterminated string");
      if (c == q) {
        if (!triple) {
          advance();
          break;
        }
        if (pos_ + 2 < src_.size() && src_[pos_ + 1] == q && src_[pos_ + 2] == q) {
          advance();
          advance();
          advance();
          break;
        }
      }
      if (c == '\\' && pos_ + 1 < src_.size()) {
        advance();
        char e = src_[pos_];
        switch (e) {
          case 'n':
            value += '\n';
            break;
          case 't':
            value += '\t';
            break;
          case '\\':
            value += '\\';
            break;
          case '\'':
            value += '\'';
            break;
          case '"':
            value += '"';
            break;
          case '\n':
            break;
          default:
            value += '\\';
            value += e;
            break;
        }
        advance();
        continue;
      }
      value += c;
      advance();
    }
    push(Tok::kString, src_.substr(start, pos_ - start), loc);
    queue_->back().value = std::move(value);
  }

  void lex_op() {
    Loc loc = here();
    const auto first = static_cast<unsigned char>(src_[pos_]);
    for (const uint8_t i : first < 128 ? kOpsByFirst[first] : kNoOps) {
      if (i == kNone) break;
      const std::string_view op = kOps[i];
      if (src_.substr(pos_, op.size()) == op) {
        pos_ += op.size();  // operators hold no newline
        col_ += static_cast<uint32_t>(op.size());
        if (op == "(" || op == "[" || op == "{") {
          ++depth_;
          open_brackets_.push_back(loc);
        } else if (op == ")" || op == "]" || op == "}") {
          if (depth_ == 0) fail(ErrorKind::kSyntax, loc, "unmatched '" + std::string(op) + "'");
          --depth_;
          open_brackets_.pop_back();
        }
        push(Tok::kOp, op, loc);
        return;
      }
    }
    // Show the whole UTF-8 character and its code point (U+00FF) so it can be found.
    const unsigned char c = static_cast<unsigned char>(src_[pos_]);
    const size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 1;
    uint32_t cp = n == 1 ? c : c & (0xFFu >> (n + 1));
    for (size_t k = 1; k < n && pos_ + k < src_.size(); ++k)
      cp = (cp << 6) | (static_cast<unsigned char>(src_[pos_ + k]) & 0x3Fu);
    char code[16];
    std::snprintf(code, sizeof code, "U+%04X", cp);
    const std::string shown(src_.substr(pos_, std::min(n, src_.size() - pos_)));
    fail(ErrorKind::kSyntax, loc, "unexpected character '" + shown + "' (" + code + ")",
         c >= 0x80 ? "names and operators are ASCII; replace or remove the character"
                   : "this character is not part of the IR's Python subset");
  }

  std::string_view src_;
  const std::string& file_;
  size_t pos_ = 0;
  uint32_t line_ = 1;
  uint32_t col_ = 1;
  int depth_ = 0;
  std::vector<Loc> open_brackets_;
  std::vector<uint32_t> indents_;
  std::deque<Token>* queue_ = nullptr;
  Tok last_kind_ = Tok::kNewline;
  bool at_line_start_ = true;
  bool done_ = false;
};

}  // namespace

struct Lexer::Impl : LexerImpl {
  using LexerImpl::LexerImpl;
};

Lexer::Lexer(std::string_view src, const std::string& file)
    : impl_(std::make_unique<Impl>(src, file)) {}
Lexer::~Lexer() = default;
void Lexer::fill(std::deque<Token>* out) { impl_->fill(out); }

std::vector<Token> tokenize(std::string_view src, const std::string& file) {
  Lexer lexer(src, file);
  std::deque<Token> window;
  while (window.empty() || window.back().kind != Tok::kEof) lexer.fill(&window);
  return {std::make_move_iterator(window.begin()), std::make_move_iterator(window.end())};
}

}  // namespace solar::detail
