// Loading a program for the subcommands that run, list or compile it: the
// Relay source, type-checked and compiled to bytecode, or a saved executable.
#pragma once

#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "relay/tensor.h"
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

// Weights to bake into a compiled program: @main's parameters of these
// names become constants (compiler/passes/bind_params.h); `origin` names
// where they came from, for errors.
struct BoundParams {
  std::map<std::string, Ref<Tensor>> values;
  std::string origin;
};
// As LoadProgram for a .relay file, with `params` bound first.
std::optional<Program> CompileProgram(const std::string& path, const BoundParams& params,
                                      std::ostream& err);

}  // namespace relay::tools
