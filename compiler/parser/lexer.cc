#include "compiler/parser/lexer.h"

#include <cctype>
#include <optional>

namespace relay::parser {

std::string_view TokenKindDescription(TokenKind kind) {
  switch (kind) {
#define RELAY_TOKEN_CASE(enumerator, description) \
  case TokenKind::enumerator:                     \
    return description;
    RELAY_TOKEN_KINDS(RELAY_TOKEN_CASE)
#undef RELAY_TOKEN_CASE
  }
  return "token";
}

namespace {

bool IsIdentifierStart(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}
bool IsIdentifierPart(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}
bool IsDigit(char c) {
  return c >= '0' && c <= '9';
}

class Lexer {
 public:
  Lexer(std::string_view text, Diagnostics& diagnostics, std::deque<std::string>& strings)
      : text_(text), diagnostics_(diagnostics), strings_(strings) {}

  std::vector<Token> Run() {
    std::vector<Token> tokens;
    while (true) {
      bool spaced = SkipSpaceAndComments();
      std::optional<Token> token = Next();
      if (!token) continue;  // malformed text, reported and skipped
      token->preceded_by_space = spaced;
      tokens.push_back(*token);
      if (token->kind == TokenKind::kEndOfFile) break;
    }
    return tokens;
  }

 private:
  char Peek(size_t ahead = 0) const {
    return position_ + ahead < text_.size() ? text_[position_ + ahead] : '\0';
  }
  bool AtEnd() const { return position_ >= text_.size(); }

  void Advance() {
    if (text_[position_] == '\n') {
      ++line_;
      column_ = 1;
    } else {
      ++column_;
    }
    ++position_;
  }

  ir::Span SpanFrom(int32_t line, int32_t column) const {
    return ir::Span{line, column, line_, column_};
  }

  // Returns whether anything was skipped.
  bool SkipSpaceAndComments() {
    size_t start = position_;
    while (!AtEnd()) {
      char c = Peek();
      if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
        Advance();
      } else if (c == '/' && Peek(1) == '/') {
        while (!AtEnd() && Peek() != '\n') Advance();
      } else if (c == '/' && Peek(1) == '*') {
        SkipBlockComment();
      } else {
        break;
      }
    }
    return position_ != start;
  }

  // Block comments nest, as in Relay: /* a /* b */ c */ is one comment.
  void SkipBlockComment() {
    int32_t line = line_, column = column_;
    int depth = 0;
    while (!AtEnd()) {
      if (Peek() == '/' && Peek(1) == '*') {
        Advance();
        Advance();
        ++depth;
      } else if (Peek() == '*' && Peek(1) == '/') {
        Advance();
        Advance();
        if (--depth == 0) return;
      } else {
        Advance();
      }
    }
    diagnostics_.Report(ErrorKind::kParse, ir::Span{line, column, line, column + 2},
                        "unterminated comment: '/*' has no matching '*/'");
  }

  Token Make(TokenKind kind, size_t start, int32_t line, int32_t column) {
    return Token{kind, text_.substr(start, position_ - start), SpanFrom(line, column), false};
  }

  // The next token, or nullopt after reporting and skipping malformed text.
  std::optional<Token> Next() {
    int32_t line = line_, column = column_;
    size_t start = position_;
    if (AtEnd())
      return Token{TokenKind::kEndOfFile, {}, ir::Span{line, column, line, column}, false};
    char c = Peek();
    if (IsIdentifierStart(c)) return LexIdentifier(start, line, column);
    if (IsDigit(c)) return LexNumber(start, line, column);
    if (c == '%' || c == '@') {
      Advance();
      size_t name_start = position_;
      while (!AtEnd() && IsIdentifierPart(Peek())) Advance();
      if (position_ == name_start) {
        diagnostics_.Report(ErrorKind::kParse, SpanFrom(line, column),
                            std::string("expected a name after '") + c + "'");
        return std::nullopt;
      }
      Token token = Make(c == '%' ? TokenKind::kLocal : TokenKind::kGlobal, start, line, column);
      token.text = text_.substr(name_start, position_ - name_start);
      return token;
    }
    if (c == '"') return LexString(line, column);
    Advance();
    auto two = [&](char second, TokenKind if_two, TokenKind if_one) {
      if (Peek() == second) {
        Advance();
        return Make(if_two, start, line, column);
      }
      return Make(if_one, start, line, column);
    };
    switch (c) {
      case '(':
        return Make(TokenKind::kLeftParen, start, line, column);
      case ')':
        return Make(TokenKind::kRightParen, start, line, column);
      case '[':
        return Make(TokenKind::kLeftBracket, start, line, column);
      case ']':
        return Make(TokenKind::kRightBracket, start, line, column);
      case '{':
        return Make(TokenKind::kLeftBrace, start, line, column);
      case '}':
        return Make(TokenKind::kRightBrace, start, line, column);
      case ',':
        return Make(TokenKind::kComma, start, line, column);
      case ';':
        return Make(TokenKind::kSemicolon, start, line, column);
      case ':':
        return Make(TokenKind::kColon, start, line, column);
      case '.':
        return Make(TokenKind::kDot, start, line, column);
      case '+':
        return Make(TokenKind::kPlus, start, line, column);
      case '*':
        return Make(TokenKind::kStar, start, line, column);
      case '/':
        return Make(TokenKind::kSlash, start, line, column);
      case '?':
        return Make(TokenKind::kQuestion, start, line, column);
      case '#':
        return Make(TokenKind::kHash, start, line, column);
      case '|':
        return Make(TokenKind::kBar, start, line, column);
      case '-':
        return two('>', TokenKind::kArrow, TokenKind::kMinus);
      case '<':
        return two('=', TokenKind::kLessEqual, TokenKind::kLess);
      case '>':
        return two('=', TokenKind::kGreaterEqual, TokenKind::kGreater);
      case '!':
        if (Peek() == '=') {
          Advance();
          return Make(TokenKind::kNotEqual, start, line, column);
        }
        break;
      case '=':
        if (Peek() == '=') {
          Advance();
          return Make(TokenKind::kEqualEqual, start, line, column);
        }
        if (Peek() == '>') {
          Advance();
          return Make(TokenKind::kFatArrow, start, line, column);
        }
        return Make(TokenKind::kEqual, start, line, column);
      default:
        break;
    }
    std::string shown =
        (static_cast<unsigned char>(c) >= 0x20 && static_cast<unsigned char>(c) < 0x7f)
            ? std::string("'") + c + "'"
            : "byte " + std::to_string(static_cast<unsigned char>(c));
    diagnostics_.Report(ErrorKind::kParse, SpanFrom(line, column), "unexpected character " + shown);
    return std::nullopt;
  }

  // Identifiers may contain dots between parts (nn.conv2d, image.resize2d).
  Token LexIdentifier(size_t start, int32_t line, int32_t column) {
    while (!AtEnd()) {
      if (IsIdentifierPart(Peek())) {
        Advance();
      } else if (Peek() == '.' && IsIdentifierStart(Peek(1))) {
        Advance();
      } else {
        break;
      }
    }
    return Make(TokenKind::kIdentifier, start, line, column);
  }

  // 12, 1.5, 1e-3, with an optional type suffix: 1f, 2f16, 1i64, 7u8. After
  // a '.', only digits are taken, so that %t.0.1 projects twice.
  std::optional<Token> LexNumber(size_t start, int32_t line, int32_t column) {
    bool after_dot = position_ > 0 && text_[position_ - 1] == '.';
    bool is_float = false;
    while (IsDigit(Peek())) Advance();
    if (after_dot) return Make(TokenKind::kInteger, start, line, column);
    if (Peek() == '.' && IsDigit(Peek(1))) {
      is_float = true;
      Advance();
      while (IsDigit(Peek())) Advance();
    }
    if ((Peek() == 'e' || Peek() == 'E') &&
        (IsDigit(Peek(1)) || ((Peek(1) == '-' || Peek(1) == '+') && IsDigit(Peek(2))))) {
      is_float = true;
      Advance();
      if (Peek() == '-' || Peek() == '+') Advance();
      while (IsDigit(Peek())) Advance();
    }
    if (Peek() == 'f' || Peek() == 'i' || Peek() == 'u') {
      if (Peek() == 'f') is_float = true;
      Advance();
      while (IsDigit(Peek())) Advance();
    }
    if (IsIdentifierPart(Peek())) {
      while (IsIdentifierPart(Peek())) Advance();
      Token bad = Make(TokenKind::kInteger, start, line, column);
      diagnostics_.Report(ErrorKind::kParse, bad.span,
                          "malformed number '" + std::string(bad.text) + "'");
      return std::nullopt;
    }
    return Make(is_float ? TokenKind::kFloat : TokenKind::kInteger, start, line, column);
  }

  Token LexString(int32_t line, int32_t column) {
    Advance();  // opening quote
    std::string value;
    while (true) {
      if (AtEnd() || Peek() == '\n') {
        diagnostics_.Report(ErrorKind::kParse, ir::Span{line, column, line, column + 1},
                            "unterminated string");
        break;
      }
      char c = Peek();
      Advance();
      if (c == '"') break;
      if (c == '\\' && !AtEnd()) {
        char escaped = Peek();
        Advance();
        switch (escaped) {
          case 'n':
            value += '\n';
            break;
          case 't':
            value += '\t';
            break;
          case '\\':
            value += '\\';
            break;
          case '"':
            value += '"';
            break;
          default:
            value += '\\';
            value += escaped;
        }
      } else {
        value += c;
      }
    }
    strings_.push_back(std::move(value));
    return Token{TokenKind::kString, strings_.back(), SpanFrom(line, column), false};
  }

  std::string_view text_;
  Diagnostics& diagnostics_;
  std::deque<std::string>& strings_;
  size_t position_ = 0;
  int32_t line_ = 1;
  int32_t column_ = 1;
};

}  // namespace

std::vector<Token> Tokenize(std::string_view text, Diagnostics& diagnostics,
                            std::deque<std::string>& string_storage) {
  return Lexer(text, diagnostics, string_storage).Run();
}

}  // namespace relay::parser
