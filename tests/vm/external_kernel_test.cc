// Functions marked Compiler="xrt", global_symbol="NAME": what the code
// generator makes of them (one call of an external kernel), the .rbc format
// keeping it, the reference evaluator running their bodies, and the VM
// calling the kernel, or saying clearly why it cannot. The kernels run
// against a stand-in XRT driver in tools_tests (XrtKernelsTest), through the
// relay-vm binary.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "compiler/diagnostics.h"
#include "compiler/evaluator/reference_evaluator.h"
#include "compiler/frontend.h"
#include "relay/devices.h"
#include "relay/error.h"
#include "relay/tensor.h"
#include "tests/vm/compile_text.h"
#include "vm/bytecode/executable_file.h"
#include "vm/interpreter/virtual_machine.h"

namespace relay {
namespace {

const char* const kVectorAdd = R"(
def @vadd(%a: Tensor[(8), int32], %b: Tensor[(8), int32], Compiler="xrt", global_symbol="vadd") -> Tensor[(8), int32] {
  add(%a, %b)
}
def @main(%x: Tensor[(8), int32], %y: Tensor[(8), int32]) -> Tensor[(8), int32] {
  multiply(@vadd(%x, %y), 2)
}
)";

Error CompileError(const std::string& body) {
  try {
    testing::CompileText("external.relay", body);
  } catch (const Error& error) {
    return error;
  }
  return Error(ErrorKind::kInternal, "no error");
}

TEST(ExternalKernelTest, AnExternalFunctionIsOneCallOfItsKernel) {
  const std::shared_ptr<const vm::Executable> executable =
      testing::CompileText("external.relay", kVectorAdd);
  // @vadd's body is not compiled: its one kernel is the external one.
  const vm::Function& vadd = executable->functions[executable->FindFunction("vadd")];
  ASSERT_EQ(vadd.code.size(), 4u);  // invoke_kernel, kill, kill, ret
  EXPECT_EQ(vadd.code[0].opcode, vm::Opcode::kInvokeKernel);
  const vm::KernelCall* external = &executable->kernels.at(vadd.code[0].operands[1]);
  ASSERT_TRUE(external->external.has_value());
  EXPECT_EQ(external->op, "xrt:vadd");
  EXPECT_EQ(external->external->compiler, "xrt");
  EXPECT_EQ(external->external->symbol, "vadd");
  // Its graph: the body's one operator over the two parameters.
  const kernels::external::ExternalGraph& graph = external->external->graph;
  ASSERT_EQ(graph.operators.size(), 1u);
  EXPECT_EQ(graph.operators[0].op, "add");
  EXPECT_EQ(graph.operators[0].inputs, (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(graph.result(), kernels::ValueType::Tensor({8}, DType::kInt32));
  EXPECT_NE(external->external->function, nullptr);
}

TEST(ExternalKernelTest, TheReferenceEvaluatorRunsTheBody) {
  Diagnostics diagnostics(
      "external.relay",
      std::make_shared<const std::string>(std::string("#[version = \"0.0.5\"]\n") + kVectorAdd));
  ir::Module module = compiler::ParseAndCheck(diagnostics);
  ASSERT_FALSE(diagnostics.has_errors()) << diagnostics.FormatAll();
  std::vector<Value> arguments;
  for (int32_t scale : {1, 10}) {
    Ref<Tensor> tensor = Tensor::Empty(HostDevice(), {8}, DType::kInt32);
    for (int32_t index = 0; index < 8; ++index) tensor->data<int32_t>()[index] = index * scale;
    arguments.push_back(tensor);
  }
  const Value result = evaluator::Evaluate(module, "main", arguments);
  const auto* tensor = static_cast<const Tensor*>(result.get());
  for (int32_t index = 0; index < 8; ++index) EXPECT_EQ(tensor->data<int32_t>()[index], 22 * index);
}

TEST(ExternalKernelTest, FunctionsThatCannotBeExternalKernelsAreCompileErrors) {
  const std::string header = "def @f(%a: Tensor[(8), int32], ";
  const std::string body = " {\n  add(%a, %a)\n}\ndef @main(%x: Tensor[(8), int32]) { @f(%x) }\n";
  Error error =
      CompileError(header + "Compiler=\"cuda\", global_symbol=\"f\") -> Tensor[(8), int32]" + body);
  EXPECT_EQ(error.kind(), ErrorKind::kCompile);
  EXPECT_NE(error.message().find("Compiler=\"cuda\" names no external codegen this build has "
                                 "(it has \"dnnl\", \"cblas\", \"xrt\")"),
            std::string::npos)
      << error.message();
  error = CompileError(header + "Compiler=\"xrt\") -> Tensor[(8), int32]" + body);
  EXPECT_NE(error.message().find("global_symbol=\"NAME\""), std::string::npos) << error.message();
  error = CompileError(
      "def @f(%a: Tensor[(?), int32], Compiler=\"xrt\", global_symbol=\"f\") -> Tensor[(?), "
      "int32] {\n  add(%a, %a)\n}\ndef @main(%x: Tensor[(8), int32]) { @f(%x) }\n");
  EXPECT_NE(error.message().find("one tensor of static shape"), std::string::npos)
      << error.message();
  // The body computes operator calls, the last one's result returned.
  error = CompileError(header + "Compiler=\"xrt\", global_symbol=\"f\") -> Tensor[(8), int32]" +
                       " {\n  %a\n}\ndef @main(%x: Tensor[(8), int32]) { @f(%x) }\n");
  EXPECT_NE(error.message().find("returns its last operator call's result"), std::string::npos)
      << error.message();
  error = CompileError(
      "def @f(%a: (Tensor[(8), int32],), Compiler=\"xrt\", global_symbol=\"f\") -> Tensor[(8), "
      "int32] {\n  add(%a.0, %a.0)\n}\ndef @main(%x: Tensor[(8), int32]) { @f((%x,)) }\n");
  EXPECT_NE(error.message().find("parameter %a is not a tensor"), std::string::npos)
      << error.message();
}

TEST(ExternalKernelTest, TheRbcFileKeepsExternalKernelsAndRejectsForeignOnes) {
  const std::shared_ptr<const vm::Executable> executable =
      testing::CompileText("external.relay", kVectorAdd);
  const std::string bytes = vm::SerializeExecutable(*executable);
  const vm::Executable loaded = vm::LoadExecutable(
      {reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, "external.rbc");
  ASSERT_EQ(loaded.kernels.size(), executable->kernels.size());
  for (size_t index = 0; index < loaded.kernels.size(); ++index) {
    const vm::KernelCall& kernel = loaded.kernels[index];
    ASSERT_EQ(kernel.external.has_value(), executable->kernels[index].external.has_value());
    if (!kernel.external) continue;
    EXPECT_EQ(kernel.op, "xrt:vadd");
    EXPECT_EQ(kernel.external->symbol, "vadd");
    EXPECT_EQ(kernel.external->graph.result(), kernels::ValueType::Tensor({8}, DType::kInt32));
    EXPECT_EQ(kernel.external->state, executable->kernels[index].external->state);
    EXPECT_NE(kernel.external->function, nullptr);
  }
  // An external kernel of a compiler this build does not have.
  vm::Executable foreign = *executable;
  for (vm::KernelCall& kernel : foreign.kernels) {
    if (kernel.external) kernel.external->compiler = "tpu", kernel.op = "tpu:vadd";
  }
  const std::string foreign_bytes = vm::SerializeExecutable(foreign);
  try {
    vm::LoadExecutable(
        {reinterpret_cast<const uint8_t*>(foreign_bytes.data()), foreign_bytes.size()},
        "foreign.rbc");
    FAIL() << "a foreign external kernel loaded";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::kLoad);
    EXPECT_NE(error.message().find("external codegen 'tpu' is not in this build"),
              std::string::npos)
        << error.message();
  }
}

// Here XRT finds no card (or is not installed): the call says so.
TEST(ExternalKernelTest, CallingWithoutAnXrtCardIsADeviceError) {
  vm::VirtualMachine machine(testing::CompileText("external.relay", kVectorAdd));
  std::vector<Value> arguments;
  for (int repeat = 0; repeat < 2; ++repeat)
    arguments.push_back(Tensor::Empty(HostDevice(), {8}, DType::kInt32));
  try {
    machine.Invoke("main", arguments);
    GTEST_SKIP() << "this machine has an XRT card with kernel vadd loaded";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::kDevice) << error.message();
    EXPECT_NE(error.message().find("XRT"), std::string::npos) << error.message();
  }
}

}  // namespace
}  // namespace relay
