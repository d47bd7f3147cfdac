// Tokens of Relay's text format.
#pragma once

#include <string_view>

#include "compiler/ir/node.h"

namespace relay::parser {

#define RELAY_TOKEN_KINDS(X)                                           \
  X(kEndOfFile, "end of file")                                         \
  X(kIdentifier, "identifier") /* add, nn.conv2d, Tensor, Cons, let */ \
  X(kLocal, "local variable")  /* %x, %0 */                            \
  X(kGlobal, "global name")    /* @main */                             \
  X(kInteger, "integer")                                               \
  X(kFloat, "floating-point number")                                   \
  X(kString, "string")                                                 \
  X(kLeftParen, "'('")                                                 \
  X(kRightParen, "')'")                                                \
  X(kLeftBracket, "'['")                                               \
  X(kRightBracket, "']'")                                              \
  X(kLeftBrace, "'{'")                                                 \
  X(kRightBrace, "'}'")                                                \
  X(kComma, "','")                                                     \
  X(kSemicolon, "';'")                                                 \
  X(kColon, "':'")                                                     \
  X(kDot, "'.'")                                                       \
  X(kEqual, "'='")                                                     \
  X(kFatArrow, "'=>'")                                                 \
  X(kArrow, "'->'")                                                    \
  X(kPlus, "'+'")                                                      \
  X(kMinus, "'-'")                                                     \
  X(kStar, "'*'")                                                      \
  X(kSlash, "'/'")                                                     \
  X(kLess, "'<'")                                                      \
  X(kLessEqual, "'<='")                                                \
  X(kGreater, "'>'")                                                   \
  X(kGreaterEqual, "'>='")                                             \
  X(kEqualEqual, "'=='")                                               \
  X(kNotEqual, "'!='")                                                 \
  X(kQuestion, "'?'")                                                  \
  X(kHash, "'#'")                                                      \
  X(kBar, "'|'")

enum class TokenKind {
#define RELAY_TOKEN_ENUMERATOR(enumerator, description) enumerator,
  RELAY_TOKEN_KINDS(RELAY_TOKEN_ENUMERATOR)
#undef RELAY_TOKEN_ENUMERATOR
};

// How a token kind is named in "expected X" messages.
std::string_view TokenKindDescription(TokenKind kind);

struct Token {
  TokenKind kind = TokenKind::kEndOfFile;
  // The token's text: for kLocal and kGlobal without the sigil; for kString
  // the unescaped contents live in the lexer's string table, see Lexer.
  std::string_view text;
  ir::Span span;
  // Whitespace or a comment came right before this token (so `%t.0` and
  // `%t .0` can be told apart where it matters).
  bool preceded_by_space = false;
};

}  // namespace relay::parser
