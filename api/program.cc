#include "api/program.h"

#include <ostream>

#include "api/source_file.h"
#include "compiler/codegen/bytecode_compiler.h"
#include "compiler/diagnostics.h"
#include "compiler/frontend.h"
#include "compiler/frontends/onnx/onnx_import.h"
#include "compiler/passes/bind_params.h"
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

std::optional<Program> CompileProgram(const std::string& path, const BoundParams& params,
                                      std::ostream& err) {
  ProgramSource source = ReadProgramSource(path);
  Diagnostics diagnostics(path, source.text);
  ir::Module module = compiler::ParseAndCheck(diagnostics);
  if (diagnostics.has_errors()) {
    err << diagnostics.FormatAll();
    return std::nullopt;
  }
  std::map<std::string, Ref<Tensor>> bound = std::move(source.weights);
  for (const auto& [name, tensor] : params.values) bound[name] = tensor;
  if (!bound.empty()) {
    module = passes::BindParams(module, "main", bound,
                                params.origin.empty() ? path + "'s weights" : params.origin);
  }
  auto executable = std::make_shared<const vm::Executable>(
      codegen::CompileToBytecode(module, &compiler::Prelude()));
  return Program{std::move(executable), std::move(source.input_aliases),
                 std::move(source.output_names)};
}

std::optional<Program> LoadProgram(const std::string& path, std::ostream& err) {
  if (path.size() > 4 && path.ends_with(".rbc")) {
    return Program{std::make_shared<const vm::Executable>(vm::ReadExecutableFile(path)), {}, {}};
  }
  return CompileProgram(path, BoundParams{}, err);
}

}  // namespace relay::api
