// Splits Relay source text into tokens.
#pragma once

#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/diagnostics.h"
#include "compiler/parser/token.h"

namespace relay::parser {

// Tokenises `text` (which must outlive the returned tokens). Lexical errors
// (an unterminated comment or string, a stray character) are reported to
// `diagnostics` and the offending text skipped. The result always ends with
// kEndOfFile. Unescaped string contents are stored in `string_storage`, which
// must outlive the tokens too.
std::vector<Token> Tokenize(std::string_view text, Diagnostics& diagnostics,
                            std::deque<std::string>& string_storage);

}  // namespace relay::parser
