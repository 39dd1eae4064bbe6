#include "core/python_tokenizer.h"

#include <array>
#include <cctype>

namespace gpupin {
namespace {

// Deeper f-string nesting than this is not Python anyone writes; past it a
// quote inside a replacement field closes the outer string (the pre-3.12
// rule), which bounds the recursion on hostile input.
constexpr int kMaxFStringNesting = 16;

bool IsNewline(char c) { return c == '\n' || c == '\r'; }

bool IsNameStart(char c) {
  auto u = static_cast<unsigned char>(c);
  return std::isalpha(u) || c == '_' || u >= 0x80;  // UTF-8 identifiers
}

bool IsNameChar(char c) { return IsNameStart(c) || std::isdigit(static_cast<unsigned char>(c)); }

bool IsQuote(char c) { return c == '\'' || c == '"'; }

struct StringFlags {
  bool raw = false;
  bool formatted = false;
};

// Whether `name` (directly followed by a quote) is a string prefix, and which.
std::optional<StringFlags> ParsePrefix(std::string_view name) {
  if (name.empty() || name.size() > 2) return std::nullopt;
  StringFlags flags;
  int kinds = 0;  // b, u, f, t: at most one
  for (char c : name) {
    switch (std::tolower(static_cast<unsigned char>(c))) {
      case 'r':
        if (flags.raw) return std::nullopt;
        flags.raw = true;
        break;
      case 'f':
      case 't':  // template strings (3.14) tokenize like f-strings
        flags.formatted = true;
        ++kinds;
        break;
      case 'b':
        ++kinds;
        break;
      case 'u':
        if (name.size() != 1) return std::nullopt;
        ++kinds;
        break;
      default:
        return std::nullopt;
    }
  }
  if (kinds > 1) return std::nullopt;
  return flags;
}

class Scanner {
 public:
  explicit Scanner(std::string_view src) : src_(src) {}

  // `pos` is at the opening quote. Returns the position after the closing
  // quote, or where an unterminated string stops (its line break, or the end).
  size_t ScanString(size_t pos, StringFlags flags, int depth) const {
    char quote = src_[pos];
    bool triple = pos + 2 < src_.size() && src_[pos + 1] == quote && src_[pos + 2] == quote;
    size_t i = pos + (triple ? 3 : 1);
    while (i < src_.size()) {
      char c = src_[i];
      if (IsClosing(i, quote, triple)) return i + (triple ? 3 : 1);
      if (IsNewline(c) && !triple) return i;
      if (c == '\\') {
        // Even in a raw string a backslash keeps the next quote (or line break).
        bool crlf = src_.substr(i + 1, 2) == "\r\n";
        i += crlf ? 3 : 2;
        continue;
      }
      if (flags.formatted && c == '{') {
        if (i + 1 < src_.size() && src_[i + 1] == '{') {
          i += 2;
        } else {
          i = ScanReplacementField(i + 1, quote, triple, depth);
        }
        continue;
      }
      ++i;
    }
    return src_.size();
  }

 private:
  bool IsClosing(size_t i, char quote, bool triple) const {
    if (src_[i] != quote) return false;
    if (!triple) return true;
    return i + 2 < src_.size() && src_[i + 1] == quote && src_[i + 2] == quote;
  }

  // After the `{` of an f-string field: an expression, where quotes start
  // nested strings, then an optional format spec after a top-level `:`.
  // Returns the position after the closing `}`, or where the outer string's
  // scan should continue when the field is cut short.
  size_t ScanReplacementField(size_t i, char quote, bool triple, int depth) const {
    int brackets = 0;
    bool in_spec = false;
    while (i < src_.size()) {
      char c = src_[i];
      if (IsNewline(c) && !triple) return i;
      if (in_spec) {
        if (IsClosing(i, quote, triple)) return i;
        if (c == '}') return i + 1;
        if (c == '{') {
          if (depth >= kMaxFStringNesting) return i + 1;
          i = ScanReplacementField(i + 1, quote, triple, depth + 1);
          continue;
        }
        ++i;
        continue;
      }
      if (IsQuote(c)) {
        if (depth >= kMaxFStringNesting) return i;
        i = ScanString(i, {}, depth + 1);
        continue;
      }
      if (IsNameStart(c)) {
        size_t end = i;
        while (end < src_.size() && IsNameChar(src_[end])) ++end;
        auto flags = ParsePrefix(src_.substr(i, end - i));
        if (flags && end < src_.size() && IsQuote(src_[end]) && depth < kMaxFStringNesting) {
          i = ScanString(end, *flags, depth + 1);
        } else {
          i = end;
        }
        continue;
      }
      switch (c) {
        case '(':
        case '[':
        case '{':
          ++brackets;
          break;
        case ')':
        case ']':
          if (brackets > 0) --brackets;
          break;
        case '}':
          if (brackets == 0) return i + 1;
          --brackets;
          break;
        case ':':
          if (brackets == 0) in_spec = true;
          break;
        case '\\':
          ++i;
          break;
        default:
          break;
      }
      ++i;
    }
    return src_.size();
  }

  std::string_view src_;
};

constexpr std::array<std::string_view, 24> kMultiCharOps = {
    "**=", "//=", ">>=", "<<=", "...", "->", ":=", "==", "!=", "<=", ">=", "**",
    "//",  "<<",  ">>",  "+=",  "-=",  "*=", "/=", "%=", "&=", "|=", "^=", "@=",
};

class Tokenizer {
 public:
  explicit Tokenizer(std::string_view src) : src_(src), scanner_(src) {}

  std::vector<PyToken> Run() {
    while (pos_ < src_.size()) {
      if (at_line_start_ && brackets_ == 0) {
        if (!StartLogicalLine()) continue;
      }
      SkipBlanks();
      if (pos_ >= src_.size()) break;
      char c = src_[pos_];
      if (c == '#') {
        SkipComment();
      } else if (IsNewline(c)) {
        if (brackets_ == 0) {
          Emit(PyTokenKind::kNewline, pos_, 0);
          at_line_start_ = true;
        }
        ConsumeLineBreak();
      } else if (c == '\\' && pos_ + 1 < src_.size() && IsNewline(src_[pos_ + 1])) {
        ++pos_;
        ConsumeLineBreak();
      } else if (IsNameStart(c)) {
        ScanNameOrPrefixedString();
      } else if (std::isdigit(static_cast<unsigned char>(c)) ||
                 (c == '.' && pos_ + 1 < src_.size() &&
                  std::isdigit(static_cast<unsigned char>(src_[pos_ + 1])))) {
        ScanNumber();
      } else if (IsQuote(c)) {
        ScanStringAt(pos_, {});
      } else {
        ScanOp();
      }
    }
    if (!tokens_.empty() && tokens_.back().kind != PyTokenKind::kNewline &&
        tokens_.back().kind != PyTokenKind::kDedent) {
      Emit(PyTokenKind::kNewline, pos_, 0);
    }
    while (indents_.size() > 1) {
      indents_.pop_back();
      Emit(PyTokenKind::kDedent, pos_, 0);
    }
    Emit(PyTokenKind::kEnd, pos_, 0);
    return std::move(tokens_);
  }

 private:
  // Measures the indentation of a new line. Returns false for a blank or
  // comment-only line, which is consumed whole and changes nothing.
  bool StartLogicalLine() {
    int column = 0;
    while (pos_ < src_.size()) {
      char c = src_[pos_];
      if (c == ' ') {
        ++column;
      } else if (c == '\t') {
        column = (column / 8 + 1) * 8;
      } else if (c == '\f') {
        column = 0;
      } else {
        break;
      }
      ++pos_;
    }
    if (pos_ >= src_.size()) return false;
    if (src_[pos_] == '#') SkipComment();
    if (pos_ < src_.size() && IsNewline(src_[pos_])) {
      ConsumeLineBreak();
      return false;
    }
    if (pos_ >= src_.size()) return false;
    if (column > indents_.back()) {
      indents_.push_back(column);
      Emit(PyTokenKind::kIndent, pos_, 0);
    } else {
      while (column < indents_.back()) {
        indents_.pop_back();
        Emit(PyTokenKind::kDedent, pos_, 0);
      }
      // Python rejects a dedent to a column it never indented to; we carry
      // on as if that column had been opened, so the stream stays balanced.
      if (column > indents_.back()) {
        indents_.push_back(column);
        Emit(PyTokenKind::kIndent, pos_, 0);
      }
    }
    at_line_start_ = false;
    return true;
  }

  void SkipBlanks() {
    while (pos_ < src_.size() && (src_[pos_] == ' ' || src_[pos_] == '\t' || src_[pos_] == '\f')) {
      ++pos_;
    }
  }

  void SkipComment() {
    while (pos_ < src_.size() && !IsNewline(src_[pos_])) ++pos_;
  }

  void ConsumeLineBreak() {
    if (src_[pos_] == '\r' && pos_ + 1 < src_.size() && src_[pos_ + 1] == '\n') ++pos_;
    ++pos_;
    ++line_;
  }

  void ScanNameOrPrefixedString() {
    size_t start = pos_;
    size_t end = pos_;
    while (end < src_.size() && IsNameChar(src_[end])) ++end;
    if (end < src_.size() && IsQuote(src_[end])) {
      if (auto flags = ParsePrefix(src_.substr(start, end - start))) {
        ScanStringAt(start, *flags, end);
        return;
      }
    }
    pos_ = end;
    Emit(PyTokenKind::kName, start, end - start);
  }

  void ScanStringAt(size_t start, StringFlags flags, std::optional<size_t> quote_pos = {}) {
    size_t end = scanner_.ScanString(quote_pos.value_or(start), flags, 0);
    pos_ = end;
    Emit(PyTokenKind::kString, start, end - start);
    // The token keeps the line it started on; the lines inside it still count.
    for (size_t i = start; i < end; ++i) {
      if (src_[i] == '\n' || (src_[i] == '\r' && (i + 1 >= end || src_[i + 1] != '\n'))) ++line_;
    }
  }

  void ScanNumber() {
    size_t start = pos_;
    bool hex = src_.substr(pos_, 2) == "0x" || src_.substr(pos_, 2) == "0X";
    while (pos_ < src_.size()) {
      char c = src_[pos_];
      char prev = pos_ > start ? src_[pos_ - 1] : '\0';
      bool exponent_sign = (c == '+' || c == '-') && !hex && (prev == 'e' || prev == 'E');
      if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || exponent_sign)) {
        break;
      }
      ++pos_;
    }
    Emit(PyTokenKind::kNumber, start, pos_ - start);
  }

  void ScanOp() {
    for (std::string_view op : kMultiCharOps) {
      if (src_.substr(pos_, op.size()) == op) {
        Emit(PyTokenKind::kOp, pos_, op.size());
        pos_ += op.size();
        return;
      }
    }
    char c = src_[pos_];
    if (c == '(' || c == '[' || c == '{') ++brackets_;
    if ((c == ')' || c == ']' || c == '}') && brackets_ > 0) --brackets_;
    Emit(PyTokenKind::kOp, pos_, 1);
    ++pos_;
  }

  void Emit(PyTokenKind kind, size_t start, size_t length) {
    tokens_.push_back(
        {kind, src_.substr(start, length), line_, static_cast<int>(indents_.size()) - 1});
  }

  std::string_view src_;
  Scanner scanner_;
  size_t pos_ = 0;
  int line_ = 1;
  int brackets_ = 0;
  bool at_line_start_ = true;
  std::vector<int> indents_ = {0};
  std::vector<PyToken> tokens_;
};

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

}  // namespace

std::vector<PyToken> TokenizePython(std::string_view source) { return Tokenizer(source).Run(); }

std::optional<std::string> PyStringValue(const PyToken& token) {
  if (token.kind != PyTokenKind::kString) return std::nullopt;
  std::string_view text = token.text;
  size_t quote = 0;
  while (quote < text.size() && !IsQuote(text[quote])) ++quote;
  StringFlags flags = ParsePrefix(text.substr(0, quote)).value_or(StringFlags{});
  if (quote >= text.size()) return std::nullopt;
  char q = text[quote];
  size_t delim = quote + 2 < text.size() && text[quote + 1] == q && text[quote + 2] == q ? 3 : 1;
  if (text.size() < quote + 2 * delim) return std::nullopt;
  std::string_view close = text.substr(text.size() - delim);
  if (close.find_first_not_of(q) != std::string_view::npos) return std::nullopt;
  std::string_view body = text.substr(quote + delim, text.size() - quote - 2 * delim);
  // A lone trailing backslash escaped the would-be closing quote: unterminated.
  size_t backslashes = 0;
  while (backslashes < body.size() && body[body.size() - 1 - backslashes] == '\\') ++backslashes;
  if (backslashes % 2 == 1) return std::nullopt;

  std::string value;
  for (size_t i = 0; i < body.size(); ++i) {
    char c = body[i];
    if (flags.formatted && (c == '{' || c == '}')) {
      if (i + 1 < body.size() && body[i + 1] == c) {
        value += c;
        ++i;
        continue;
      }
      return std::nullopt;
    }
    if (c != '\\' || flags.raw || i + 1 >= body.size()) {
      value += c;
      continue;
    }
    char next = body[++i];
    switch (next) {
      case '\\':
        value += '\\';
        break;
      case '\'':
        value += '\'';
        break;
      case '"':
        value += '"';
        break;
      case 'n':
        value += '\n';
        break;
      case 't':
        value += '\t';
        break;
      case 'r':
        value += '\r';
        break;
      case '\r':
        if (i + 1 < body.size() && body[i + 1] == '\n') ++i;
        break;
      case '\n':
        break;  // line continuation inside the string
      case 'x':
        if (i + 2 < body.size() && HexDigit(body[i + 1]) >= 0 && HexDigit(body[i + 2]) >= 0) {
          value += static_cast<char>(HexDigit(body[i + 1]) * 16 + HexDigit(body[i + 2]));
          i += 2;
          break;
        }
        [[fallthrough]];
      default:
        value += '\\';
        value += next;
    }
  }
  return value;
}

int PyLineCount(std::string_view source) {
  int lines = 1;
  for (size_t i = 0; i < source.size(); ++i) {
    bool crlf = source[i] == '\r' && i + 1 < source.size() && source[i + 1] == '\n';
    if (IsNewline(source[i]) && !crlf && i + 1 < source.size()) ++lines;
  }
  return lines;
}

}  // namespace gpupin
