// Loading a program for the subcommands that run, list or compile it: the
// Relay source (or an ONNX model, imported), type-checked and compiled to
// bytecode, or a saved executable.
#pragma once

#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "relay/tensor.h"
#include "vm/bytecode/bytecode.h"

namespace relay::api {

struct Program {
  std::shared_ptr<const vm::Executable> executable;
  // For an imported ONNX model: @main's parameter for each graph input's
  // name as the model writes it, and the graph's output names in order.
  std::map<std::string, std::string> input_aliases;
  std::vector<std::string> output_names;
};

// A program's Relay source: the file's text, or for a path ending in .onnx
// the program imported from the model (compiler/frontends/onnx), with the
// weights to bind into @main and the model's names.
struct ProgramSource {
  std::shared_ptr<const std::string> text;
  std::map<std::string, Ref<Tensor>> weights;
  std::map<std::string, std::string> input_aliases;
  std::vector<std::string> output_names;
};
ProgramSource ReadProgramSource(const std::string& path);

// How a .relay or .onnx program is compiled besides its params.
struct CompileOptions {
  // Each NAME gets its reverse-mode gradient @NAME_grad
  // (compiler/passes/gradient.h) before the params are bound.
  std::vector<std::string> gradients;
  // External codegens to partition the program for, in priority order
  // (`--byoc dnnl,cblas`: kernels/external/external_codegen.h
  // ParseCodegenList); empty: relay-vm's own kernels run everything.
  std::string byoc;
};

// Reads, checks and compiles `path`, or, for a path ending in .rbc, loads
// and verifies the executable it holds. Diagnostics go to `err` and give
// nullopt; other failures throw relay::Error (a file that cannot be read or
// a malformed executable is kLoad, naming the file; `options` for an .rbc
// are kUsage, as BuildProgram says).
std::optional<Program> LoadProgram(const std::string& path, std::ostream& err,
                                   const CompileOptions& options = {});

// Weights to bake into a compiled program: @main's parameters of these
// names become constants (compiler/passes/bind_params.h); `origin` names
// where they came from, for errors.
struct BoundParams {
  std::map<std::string, Ref<Tensor>> values;
  std::string origin;
};
// As LoadProgram for a .relay or .onnx file, with `params` bound first (an
// ONNX model's weights are bound in any case).
std::optional<Program> CompileProgram(const std::string& path, const BoundParams& params,
                                      std::ostream& err, const CompileOptions& options = {});

// As CompileProgram (or LoadProgram for an .rbc, which takes no params),
// for callers without a diagnostics stream: a program that does not compile
// throws the first diagnostic's kind, with every diagnostic formatted (source
// line and caret) in the message. Options other than the defaults are
// kUsage for an .rbc, which has what it was compiled with.
Program BuildProgram(const std::string& path, const BoundParams& params,
                     const CompileOptions& options = {});

// Whether `tensor` may be given for `param`: a tensor parameter of its dtype
// and rank whose fixed extents it has (any extent for a `?`).
bool FitsParameter(const vm::ParamInfo& param, const Tensor& tensor);

}  // namespace relay::api
