// relay-vm import MODEL.onnx -o OUT.relay [--params-out OUT.npz]: writes the
// Relay program imported from an ONNX model (compiler/frontends/onnx), and
// its weights as an .npz keyed by @main's parameter names, which `run
// OUT.relay --params OUT.npz` takes back. Without --params-out, weights of
// up to kInlineWeightElements elements are written into the program as
// constant expressions; a model with larger ones needs --params-out.
#include <fstream>
#include <ostream>

#include "compiler/frontends/onnx/onnx_import.h"
#include "relay/error.h"
#include "relay/npy.h"
#include "tools/command_line.h"
#include "tools/subcommands.h"

namespace relay::tools {

namespace {

// The largest weight written into the program when there is no .npz.
constexpr int64_t kInlineWeightElements = 4096;

[[noreturn]] void UsageError(const std::string& message) {
  throw Error(ErrorKind::kUsage, "relay-vm import: " + message);
}

}  // namespace

int RunImportCommand(std::span<const std::string_view> arguments, std::ostream& /*out*/,
                     std::ostream& /*err*/) {
  std::string input, output, params_out;
  for (size_t index = 0; index < arguments.size(); ++index) {
    std::string_view argument = arguments[index];
    auto value = [&]() -> std::string {
      if (index + 1 >= arguments.size()) UsageError(std::string(argument) + " needs a file name");
      return std::string(arguments[++index]);
    };
    if (argument == "-o" || argument == "--output") {
      output = value();
    } else if (argument == "--params-out") {
      params_out = value();
    } else if (argument.starts_with("-")) {
      UsageError("unknown option '" + std::string(argument) + "'");
    } else if (input.empty()) {
      input = std::string(argument);
    } else {
      UsageError("expected one model, got '" + input + "' and '" + std::string(argument) + "'");
    }
  }
  if (input.empty() || output.empty()) {
    UsageError("expected 'relay-vm import MODEL.onnx -o OUT.relay [--params-out OUT.npz]'");
  }
  if (!input.ends_with(".onnx")) UsageError("expected an .onnx model, got '" + input + "'");
  if (!output.ends_with(".relay"))
    UsageError("the output must end in .relay, got '" + output + "'");
  if (!params_out.empty() && !params_out.ends_with(".npz")) {
    UsageError("--params-out must end in .npz, got '" + params_out + "'");
  }
  onnx_import::ImportOptions options;
  if (params_out.empty()) options.inline_weight_elements = kInlineWeightElements;
  onnx_import::ImportedModel model = onnx_import::ImportOnnxFile(input, options);
  if (!model.weights.empty() && params_out.empty()) {
    UsageError(input + " has " + std::to_string(model.weights.size()) + " weight tensor" +
               (model.weights.size() == 1 ? "" : "s") + " of more than " +
               std::to_string(kInlineWeightElements) +
               " elements (or non-finite values): give --params-out OUT.npz to write them");
  }
  // Both files are complete before either replaces anything: the weights
  // first, then the program that names them.
  if (!params_out.empty()) {
    std::vector<NamedTensor> arrays;
    for (const auto& [name, tensor] : model.weights) arrays.push_back({name, tensor});
    WriteNpz(params_out, arrays);
  }
  std::ofstream stream(output, std::ios::binary | std::ios::trunc);
  stream << model.relay_text;
  stream.close();
  if (!stream) throw Error(ErrorKind::kLoad, "cannot write " + output);
  return kExitSuccess;
}

}  // namespace relay::tools
