// Relay programs compiled to bytecode and run on the VM.
//
// - tests/programs/run/*.relay state their expected result in a header:
//     // expect: PRINTED RESULT           (FormatValue of @main's result)
//     // expect-error: TEXT               (a substring of the error's summary)
//     // expect-backtrace: A | B          (prefixes of the backtrace's frames)
//   Expected results were derived by hand from the programs' meaning.
// - Every program there and in tests/programs/frontend/valid whose @main
//   takes tensors of known shape also runs on the reference evaluator (the
//   tree-walking oracle, compiler/evaluator), and the VM, running the
//   program's bytecode saved to .rbc bytes and loaded back, must print the
//   same result or fail with the same kind of error.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "compiler/codegen/bytecode_compiler.h"
#include "compiler/diagnostics.h"
#include "compiler/evaluator/reference_evaluator.h"
#include "compiler/frontend.h"
#include "kernels/external/external_codegen.h"
#include "relay/devices.h"
#include "relay/error.h"
#include "relay/float16.h"
#include "tests/vm/value_text.h"
#include "vm/bytecode/executable_file.h"
#include "vm/interpreter/virtual_machine.h"

namespace relay {
namespace {

namespace fs = std::filesystem;

const fs::path kProgramDirectory = fs::path(RELAY_TEST_FIXTURE_DIR).parent_path() / "programs";

struct ProgramCase {
  std::string name;
  fs::path path;
};

void PrintTo(const ProgramCase& program, std::ostream* out) {
  *out << program.path.string();
}

std::vector<ProgramCase> ProgramsIn(const fs::path& directory, const std::string& prefix) {
  std::vector<ProgramCase> cases;
  if (!fs::exists(directory)) return cases;
  for (const auto& entry : fs::directory_iterator(directory)) {
    if (entry.path().extension() != ".relay") continue;
    std::string name = prefix + entry.path().stem().string();
    std::replace_if(
        name.begin(), name.end(), [](char c) { return !std::isalnum(c); }, '_');
    cases.push_back({name, entry.path()});
  }
  std::sort(cases.begin(), cases.end(),
            [](const ProgramCase& a, const ProgramCase& b) { return a.name < b.name; });
  return cases;
}

std::string ReadText(const fs::path& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

// The value of header line `// KEY: VALUE`, if present.
std::optional<std::string> Header(const std::string& text, const std::string& key) {
  std::istringstream lines(text);
  std::string line;
  const std::string marker = "// " + key + ": ";
  while (std::getline(lines, line)) {
    if (line.rfind(marker, 0) == 0) return line.substr(marker.size());
  }
  return std::nullopt;
}

struct Compiled {
  ir::Module module;
  std::shared_ptr<const vm::Executable> executable;
};

// The external codegens $RELAY_TEST_BYOC names ("dnnl"), for which ctest
// partitions every program again (tests/CMakeLists.txt), or none.
std::vector<std::shared_ptr<const kernels::external::ExternalCodegen>> TestCodegens() {
  const char* list = std::getenv("RELAY_TEST_BYOC");
  return kernels::external::ParseCodegenList(list == nullptr ? "" : list);
}

Compiled Compile(const fs::path& path) {
  Diagnostics diagnostics(path.filename().string(),
                          std::make_shared<const std::string>(ReadText(path)));
  ir::Module module = compiler::ParseAndCheck(diagnostics);
  if (diagnostics.has_errors()) throw Error(ErrorKind::kCompile, diagnostics.FormatAll());
  auto executable = std::make_shared<const vm::Executable>(
      codegen::CompileToBytecode(module, &compiler::Prelude(), TestCodegens()));
  return {std::move(module), std::move(executable)};
}

// The device $RELAY_TEST_DEVICE names ("opencl:0"), on which ctest runs
// every program again (tests/CMakeLists.txt), or null: the host.
Device* TestDevice() {
  const char* name = std::getenv("RELAY_TEST_DEVICE");
  if (name == nullptr || *name == '\0') return nullptr;
  const std::optional<DeviceId> id = ParseDeviceId(name);
  if (!id) throw Error(ErrorKind::kUsage, std::string("RELAY_TEST_DEVICE=") + name);
  return &GetDevice(*id);
}

// `executable`'s @main on `arguments`, with its tensor work on the test
// device (the result brought back to the host), printed.
std::string InvokeMain(const std::shared_ptr<const vm::Executable>& executable,
                       std::span<const Value> arguments) {
  vm::VirtualMachine machine(executable);
  machine.set_device(TestDevice());
  Value result = vm::ValueOnHost(machine.Invoke("main", arguments));
  return FormatValue(result, executable->PrintOptions());
}

std::string RunOnVm(const Compiled& program) {
  return InvokeMain(program.executable, {});
}

// ---- programs with expected results -----------------------------------------------------

class VmProgramTest : public ::testing::TestWithParam<ProgramCase> {};

TEST_P(VmProgramTest, RunsAsExpected) {
  const ProgramCase& program = GetParam();
  try {
    TestDevice();
  } catch (const Error& error) {
    GTEST_SKIP() << error.what();
  }
  const std::string text = ReadText(program.path);
  std::optional<std::string> expected = Header(text, "expect");
  std::optional<std::string> expected_error = Header(text, "expect-error");
  ASSERT_TRUE(expected.has_value() != expected_error.has_value())
      << program.path << " needs exactly one of '// expect:' and '// expect-error:'";
  Compiled compiled = Compile(program.path);
  if (expected) {
    EXPECT_EQ(RunOnVm(compiled), *expected);
    return;
  }
  try {
    RunOnVm(compiled);
    ADD_FAILURE() << "expected an error containing: " << *expected_error;
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::kRuntime) << error.Format();
    EXPECT_NE(std::string(error.what()).find(*expected_error), std::string::npos) << error.Format();
    if (std::optional<std::string> backtrace = Header(text, "expect-backtrace")) {
      std::istringstream frames(*backtrace);
      std::string frame;
      size_t position = 0;
      while (std::getline(frames, frame, '|')) {
        frame.erase(0, frame.find_first_not_of(' '));
        frame.erase(frame.find_last_not_of(' ') + 1);
        ASSERT_LT(position, error.backtrace().size()) << error.Format();
        EXPECT_EQ(error.backtrace()[position].rfind(frame, 0), 0u)
            << "frame " << position << " of\n"
            << error.Format();
        ++position;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Programs, VmProgramTest,
                         ::testing::ValuesIn(ProgramsIn(kProgramDirectory / "run", "")),
                         [](const auto& info) { return info.param.name; });

TEST(VmProgramCorpusTest, HasTheProgramsItShould) {
  EXPECT_GE(ProgramsIn(kProgramDirectory / "run", "").size(), 43u);
}

// ---- the VM against the reference evaluator -------------------------------------------------

// Deterministic inputs for @main: small integers (exact in every dtype, so
// both implementations compute the same bits), or nothing when a parameter
// is not a tensor of known shape.
std::optional<std::vector<Value>> ArgumentsFor(const ir::FunctionNode& main) {
  std::vector<Value> arguments;
  int seed = 1;
  for (const ir::Var& param : main.params) {
    const ir::Type& type = param->checked_type();
    if (!type || type->kind() != ir::NodeKind::kTensorType) return std::nullopt;
    const auto& tensor_type = static_cast<const ir::TensorTypeNode&>(*type);
    Shape shape;
    for (int64_t dim : tensor_type.shape) {
      if (dim < 0) return std::nullopt;
      shape.push_back(dim);
    }
    Ref<Tensor> tensor = Tensor::Empty(HostDevice(), shape, tensor_type.dtype);
    uint8_t* bytes = static_cast<uint8_t*>(tensor->host_data());
    for (int64_t index = 0; index < tensor->element_count(); ++index) {
      const int value = (static_cast<int>(index) * 7 + seed * 3) % 5 - 2;  // -2 .. 2
      switch (tensor_type.dtype) {
        case DType::kBool:
          bytes[index] = value > 0;
          break;
        case DType::kFloat16:
          tensor->data<Float16>()[index] = Float16(static_cast<float>(value));
          break;
        case DType::kFloat32:
          tensor->data<float>()[index] = static_cast<float>(value);
          break;
        case DType::kFloat64:
          tensor->data<double>()[index] = value;
          break;
        case DType::kInt8:
          tensor->data<int8_t>()[index] = static_cast<int8_t>(value);
          break;
        case DType::kUInt8:
          bytes[index] = static_cast<uint8_t>(value + 2);
          break;
        case DType::kUInt16:
          tensor->data<uint16_t>()[index] = static_cast<uint16_t>(value + 2);
          break;
        case DType::kUInt32:
          tensor->data<uint32_t>()[index] = static_cast<uint32_t>(value + 2);
          break;
        case DType::kUInt64:
          tensor->data<uint64_t>()[index] = static_cast<uint64_t>(value + 2);
          break;
        case DType::kInt16:
          tensor->data<int16_t>()[index] = static_cast<int16_t>(value);
          break;
        case DType::kInt32:
          tensor->data<int32_t>()[index] = value;
          break;
        case DType::kInt64:
          tensor->data<int64_t>()[index] = value;
          break;
      }
    }
    arguments.push_back(tensor);
    ++seed;
  }
  return arguments;
}

class VmMatchesEvaluatorTest : public ::testing::TestWithParam<ProgramCase> {};

TEST_P(VmMatchesEvaluatorTest, SameResult) {
  const ProgramCase& program = GetParam();
  Compiled compiled = Compile(program.path);
  const ir::GlobalFunction* main = compiled.module.FindFunction("main");
  if (main == nullptr) GTEST_SKIP() << "no @main";
  std::optional<std::vector<Value>> arguments = ArgumentsFor(*main->function);
  if (!arguments) GTEST_SKIP() << "@main takes a parameter that is not a tensor of known shape";
  std::string vm_result, evaluator_result;
  std::optional<ErrorKind> vm_error, evaluator_error;
  // The VM runs the executable as saved to and loaded from .rbc bytes, so
  // the whole corpus also checks the file format.
  const std::string bytes = vm::SerializeExecutable(*compiled.executable);
  auto loaded = std::make_shared<const vm::Executable>(vm::LoadExecutable(
      std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()),
      program.name + ".rbc"));
  try {
    vm_result = InvokeMain(loaded, *arguments);
  } catch (const Error& error) {
    vm_error = error.kind();
    vm_result = error.what();
  }
  try {
    Value value = evaluator::Evaluate(compiled.module, "main", *arguments);
    evaluator_result = FormatValue(value, evaluator::PrintOptionsFor(compiled.module));
  } catch (const Error& error) {
    evaluator_error = error.kind();
    evaluator_result = error.what();
  }
  EXPECT_EQ(vm_error, evaluator_error)
      << "VM: " << vm_result << "\nevaluator: " << evaluator_result;
  if (vm_error || evaluator_error) return;
  // Closures print with each implementation's own names for functions.
  if (vm_result.find("<closure") != std::string::npos) return;
  // Fused kernels may round the last bit of a float differently.
  EXPECT_TRUE(testing::SameValueText(vm_result, evaluator_result))
      << "VM: " << vm_result << "\nevaluator: " << evaluator_result;
}

std::vector<ProgramCase> DifferentialPrograms() {
  std::vector<ProgramCase> cases = ProgramsIn(kProgramDirectory / "run", "run_");
  std::vector<ProgramCase> frontend = ProgramsIn(kProgramDirectory / "frontend" / "valid", "");
  cases.insert(cases.end(), frontend.begin(), frontend.end());
  // The million-step programs are covered above; on the evaluator they take
  // seconds.
  std::erase_if(cases, [](const ProgramCase& program) {
    return program.name.find("million") != std::string::npos;
  });
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Programs, VmMatchesEvaluatorTest,
                         ::testing::ValuesIn(DifferentialPrograms()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace relay
