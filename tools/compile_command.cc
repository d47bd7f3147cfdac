// relay-vm compile IN.relay -o OUT.rbc [--params P.npz] [--strip-debug]
//   [--device cpu|opencl[:N]|cuda[:N]] [--byoc dnnl,cblas,xrt:MANIFEST]:
// type-checks and compiles a program and saves its verified bytecode as an
// executable file (vm/bytecode/executable_file.h), which `relay-vm run` and
// `disasm` read. --params bakes the arrays of P.npz into the executable as
// constants in place of @main's parameters of the same names (the rest stay
// inputs). --strip-debug leaves out the debug information (which register
// holds which Relay variable when), so the file has no debug section; it
// runs the same. --device records the device `relay-vm run` puts the tensor
// work on when its own --device is not given (kernels are compiled for a
// device when a run first needs them, so that device need not be present
// here). --byoc partitions the program for external codegens (docs/byoc.md);
// the executable keeps each partitioned function's graph and its codegen's
// state, so running it partitions nothing again.
#include <optional>
#include <ostream>
#include <string>

#include "api/program.h"
#include "relay/devices.h"
#include "relay/error.h"
#include "relay/npy.h"
#include "tools/command_line.h"
#include "tools/subcommands.h"
#include "vm/bytecode/executable_file.h"

namespace relay::tools {

namespace {

[[noreturn]] void UsageError(const std::string& message) {
  throw Error(ErrorKind::kUsage, "relay-vm compile: " + message);
}

}  // namespace

int RunCompileCommand(std::span<const std::string_view> arguments, std::ostream& /*out*/,
                      std::ostream& err) {
  std::string input;
  std::string output;
  std::string params;
  bool strip_debug = false;
  std::optional<DeviceId> device;
  std::string byoc;
  for (size_t index = 0; index < arguments.size(); ++index) {
    std::string_view argument = arguments[index];
    if (argument == "-o" || argument == "--output") {
      if (index + 1 >= arguments.size()) UsageError(std::string(argument) + " needs a file name");
      output = std::string(arguments[++index]);
    } else if (argument == "--params") {
      if (index + 1 >= arguments.size()) UsageError("--params needs a .npz file");
      params = std::string(arguments[++index]);
    } else if (argument == "--byoc") {
      if (index + 1 >= arguments.size()) UsageError("--byoc needs a list of codegens");
      byoc = std::string(arguments[++index]);
    } else if (argument == "--strip-debug") {
      strip_debug = true;
    } else if (argument == "--device") {
      if (index + 1 >= arguments.size()) UsageError("--device needs a device");
      const std::string_view text = arguments[++index];
      device = ParseDeviceId(text);
      if (!device) {
        UsageError("--device takes cpu, opencl[:N], cuda[:N] or xrt[:N], got '" +
                   std::string(text) + "'");
      }
    } else if (argument.starts_with("-") && argument != "-") {
      UsageError("unknown option '" + std::string(argument) + "'");
    } else if (input.empty()) {
      input = std::string(argument);
    } else {
      UsageError("expected one input file, got '" + input + "' and '" + std::string(argument) +
                 "'");
    }
  }
  if (input.empty() || output.empty()) {
    UsageError("expected 'relay-vm compile IN.relay -o OUT.rbc'");
  }
  if (!output.ends_with(".rbc"))
    UsageError("the output file must end in .rbc, got '" + output + "'");
  if (input.ends_with(".rbc")) {
    UsageError("expected a .relay or .onnx file to compile, got '" + input + "'");
  }
  api::BoundParams bound;
  if (!params.empty()) {
    for (NamedTensor& array : ReadNpz(params, HostDevice()))
      bound.values[array.name] = std::move(array.tensor);
    bound.origin = params;
  }
  std::optional<api::Program> program =
      api::CompileProgram(input, bound, err, {.gradients = {}, .byoc = byoc});
  if (!program) return kExitFailure;
  const vm::Executable* saved = program->executable.get();
  vm::Executable changed;
  if (strip_debug || device) {
    changed = *program->executable;
    if (strip_debug) {
      for (vm::Function& function : changed.functions) function.variables.clear();
    }
    if (device && device->kind != DeviceKind::kCPU) changed.default_device = device;
    saved = &changed;
  }
  // What is saved must load: verify before writing anything.
  vm::Verify(*saved);
  vm::WriteExecutableFile(output, *saved);
  return kExitSuccess;
}

}  // namespace relay::tools
