#include "api/program.h"

#include <algorithm>
#include <memory>
#include <ostream>

#include "api/source_file.h"
#include "compiler/codegen/bytecode_compiler.h"
#include "compiler/diagnostics.h"
#include "compiler/frontend.h"
#include "compiler/frontends/onnx/onnx_import.h"
#include "compiler/passes/bind_params.h"
#include "compiler/passes/gradient.h"
#include "kernels/external/external_codegen.h"
#include "relay/error.h"
#include "vm/bytecode/executable_file.h"

namespace relay::api {

ProgramSource ReadProgramSource(const std::string& path) {
  if (!path.ends_with(".onnx")) return ProgramSource{ReadSourceFile(path), {}, {}, {}};
  onnx_import::ImportedModel model = onnx_import::ImportOnnxFile(path);
  ProgramSource source;
  source.text = std::make_shared<const std::string>(std::move(model.relay_text));
  source.weights = std::move(model.weights);
  for (const auto& [onnx_name, relay_name] : model.inputs)
    source.input_aliases[onnx_name] = relay_name;
  source.output_names = std::move(model.outputs);
  return source;
}

namespace {

// Compiles `path` with `params` bound; a program with errors leaves them
// in `diagnostics` and gives nullopt.
std::optional<Program> Compile(const std::string& path, const BoundParams& params,
                               const CompileOptions& options,
                               std::unique_ptr<Diagnostics>& diagnostics) {
  // Read first: a misspelt codegen fails before the program is compiled.
  const std::vector<std::shared_ptr<const kernels::external::ExternalCodegen>> codegens =
      kernels::external::ParseCodegenList(options.byoc);
  ProgramSource source = ReadProgramSource(path);
  diagnostics = std::make_unique<Diagnostics>(path, source.text);
  ir::Module module = compiler::ParseAndCheck(*diagnostics);
  if (diagnostics->has_errors()) return std::nullopt;
  // Before the weights are bound: a gradient takes them as parameters.
  for (const std::string& entry : options.gradients) {
    module = passes::AddGradient(module, &compiler::Prelude(), entry);
  }
  std::map<std::string, Ref<Tensor>> bound = std::move(source.weights);
  // Params must each name a parameter of @main: a misspelt name is an
  // error, not a weight silently left out.
  const ir::GlobalFunction* main = module.FindFunction("main");
  for (const auto& [name, tensor] : params.values) {
    const bool known = main != nullptr &&
                       std::any_of(main->function->params.begin(), main->function->params.end(),
                                   [&](const ir::Var& param) { return param->name_hint == name; });
    if (!known) {
      throw Error(ErrorKind::kUsage,
                  (params.origin.empty() ? std::string("params") : params.origin) + ": '" + name +
                      "' names no parameter of @main");
    }
    bound[name] = tensor;
  }
  if (!bound.empty()) {
    module = passes::BindParams(module, "main", bound,
                                params.origin.empty() ? path + "'s weights" : params.origin);
  }
  auto executable = std::make_shared<const vm::Executable>(
      codegen::CompileToBytecode(module, &compiler::Prelude(), codegens));
  return Program{std::move(executable), std::move(source.input_aliases),
                 std::move(source.output_names)};
}

}  // namespace

std::optional<Program> CompileProgram(const std::string& path, const BoundParams& params,
                                      std::ostream& err, const CompileOptions& options) {
  std::unique_ptr<Diagnostics> diagnostics;
  std::optional<Program> program = Compile(path, params, options, diagnostics);
  if (!program) err << diagnostics->FormatAll();
  return program;
}

Program BuildProgram(const std::string& path, const BoundParams& params,
                     const CompileOptions& options) {
  if (path.size() > 4 && path.ends_with(".rbc")) {
    if (!params.values.empty())
      throw Error(ErrorKind::kUsage, path + ": a saved executable takes no params");
    if (!options.byoc.empty()) {
      throw Error(ErrorKind::kUsage, path + ": external codegens partition Relay programs, " +
                                         "before compiling; a saved executable keeps the " +
                                         "partition it was compiled with");
    }
    if (!options.gradients.empty()) {
      throw Error(ErrorKind::kUsage, path + ": gradients are added to Relay programs, before " +
                                         "compiling; a saved executable has the ones it was " +
                                         "compiled with");
    }
    return Program{std::make_shared<const vm::Executable>(vm::ReadExecutableFile(path)), {}, {}};
  }
  std::unique_ptr<Diagnostics> diagnostics;
  std::optional<Program> program = Compile(path, params, options, diagnostics);
  if (!program) {
    const Error& first = diagnostics->errors().front();
    throw Error(first.kind(), diagnostics->FormatAll());
  }
  return std::move(*program);
}

std::optional<Program> LoadProgram(const std::string& path, std::ostream& err,
                                   const CompileOptions& options) {
  if (path.size() > 4 && path.ends_with(".rbc")) return BuildProgram(path, {}, options);
  return CompileProgram(path, BoundParams{}, err, options);
}

bool FitsParameter(const vm::ParamInfo& param, const Tensor& tensor) {
  bool fits = param.is_tensor && tensor.dtype() == param.dtype &&
              tensor.shape().size() == param.shape.size();
  for (size_t axis = 0; fits && axis < param.shape.size(); ++axis)
    fits = param.shape[axis] < 0 || param.shape[axis] == tensor.shape()[axis];
  return fits;
}

}  // namespace relay::api
