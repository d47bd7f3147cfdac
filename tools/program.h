// Loading a program for the subcommands that run or list it: the Relay
// source, type-checked, compiled to bytecode.
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

// Reads, checks and compiles `path`. Diagnostics go to `err` and give
// nullopt; other failures throw relay::Error (a file that cannot be read is
// kLoad). Executables (.rbc) are not readable yet: kUsage says so.
std::optional<Program> LoadProgram(const std::string& path, std::ostream& err);

}  // namespace relay::tools
