// Loading a program for the subcommands that run, list or compile it: the
// Relay source, type-checked and compiled to bytecode, or a saved executable.
#pragma once

#include <iosfwd>
#include <memory>
#include <optional>
#include <string>

#include "vm/bytecode/bytecode.h"

namespace relay::tools {

struct Program {
  std::shared_ptr<const vm::Executable> executable;
};

// Reads, checks and compiles `path`, or, for a path ending in .rbc, loads
// and verifies the executable it holds. Diagnostics go to `err` and give
// nullopt; other failures throw relay::Error (a file that cannot be read or
// a malformed executable is kLoad, naming the file).
std::optional<Program> LoadProgram(const std::string& path, std::ostream& err);

}  // namespace relay::tools
