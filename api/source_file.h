// Reading a program's source text for the subcommands.
#pragma once

#include <memory>
#include <string>

namespace relay::api {

// The whole contents of `path` ("-" reads standard input). Throws
// relay::Error (kLoad) naming the file when it cannot be read, and for text
// containing NUL bytes, which no Relay program has.
std::shared_ptr<const std::string> ReadSourceFile(const std::string& path);

}  // namespace relay::api
