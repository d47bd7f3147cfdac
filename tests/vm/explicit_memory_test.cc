// Explicit memory (compiler/codegen/memory_plan.h and the VM's alloc_*
// instructions): intermediates of static shape share one planned block,
// results that escape are allocated alone, `?` shapes go through shape
// functions, and malformed explicit-memory bytecode is an error, not a
// wild write.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "compiler/codegen/bytecode_compiler.h"
#include "compiler/diagnostics.h"
#include "compiler/frontend.h"
#include "relay/devices.h"
#include "relay/error.h"
#include "relay/storage.h"
#include "vm/bytecode/tensor_layout.h"
#include "vm/interpreter/virtual_machine.h"

namespace relay {
namespace {

vm::Executable Compile(const std::string& source) {
  Diagnostics diagnostics("memory.relay", std::make_shared<const std::string>(source));
  ir::Module module = compiler::ParseAndCheck(diagnostics);
  if (diagnostics.has_errors()) throw Error(ErrorKind::kInternal, diagnostics.FormatAll());
  return codegen::CompileToBytecode(module, &compiler::Prelude());
}

const vm::Function& Main(const vm::Executable& executable) {
  return executable.functions[size_t(executable.FindFunction("main"))];
}

std::vector<const vm::Instruction*> Instructions(const vm::Function& function, vm::Opcode opcode) {
  std::vector<const vm::Instruction*> found;
  for (const vm::Instruction& instruction : function.code)
    if (instruction.opcode == opcode) found.push_back(&instruction);
  return found;
}

const Tensor& ConstantOf(const vm::Executable& executable, int32_t index) {
  return static_cast<const Tensor&>(*executable.constants[size_t(index)]);
}

// Three dense layers: each layer's result is read once by the next (dense
// is an anchor, so layers do not fuse), so four [8, 256] intermediates are
// alive two at a time.
constexpr char kLayers[] = R"(#[version = "0.0.5"]
def @main(%x: Tensor[(8, 256), float32], %w: Tensor[(256, 256), float32]) -> Tensor[(8), float32] {
  let %h1 = nn.relu(nn.dense(%x, %w));
  let %h2 = nn.relu(nn.dense(%h1, %w));
  let %h3 = nn.relu(nn.dense(%h2, %w));
  let %h4 = nn.relu(nn.dense(%h3, %w));
  sum(%h4, axis=[1])
}
)";

TEST(ExplicitMemoryTest, IntermediatesShareOnePlannedBlock) {
  vm::Executable executable = Compile(kLayers);
  const vm::Function& main = Main(executable);
  const auto storages = Instructions(main, vm::Opcode::kAllocStorage);
  ASSERT_EQ(storages.size(), 1u);
  const size_t block = vm::DecodeByteSize(ConstantOf(executable, storages[0]->operands[1]));
  const auto tensors = Instructions(main, vm::Opcode::kAllocTensor);
  ASSERT_EQ(tensors.size(), 4u);
  size_t separately = 0;
  for (const vm::Instruction* alloc : tensors) {
    const vm::TensorLayout layout =
        vm::DecodeTensorLayout(ConstantOf(executable, alloc->operands[2]));
    EXPECT_EQ(layout.byte_offset % kAllocationAlignment, 0u);
    EXPECT_LE(layout.byte_offset + layout.ByteSize(), block);
    separately += layout.ByteSize();
  }
  // Two [8, 256] float32 slots serve all four.
  EXPECT_EQ(block, 2u * 8 * 256 * 4);
  EXPECT_LT(block, separately);
}

TEST(ExplicitMemoryTest, PlannedRunsGiveHandDerivedResults) {
  auto executable = std::make_shared<const vm::Executable>(Compile(kLayers));
  vm::VirtualMachine machine(executable);
  // x = 1/256 everywhere, w = identity: every layer keeps x, so each row
  // sums to 256 * (1/256) = 1.
  Ref<Tensor> x = Tensor::Empty(HostDevice(), {8, 256}, DType::kFloat32);
  Ref<Tensor> w = Tensor::Empty(HostDevice(), {256, 256}, DType::kFloat32);
  for (int64_t i = 0; i < 8 * 256; ++i) x->data<float>()[i] = 1.0f / 256;
  for (int64_t i = 0; i < 256 * 256; ++i) w->data<float>()[i] = (i / 256 == i % 256) ? 1.0f : 0.0f;
  for (int run = 0; run < 2; ++run) {  // the second run reuses the pool's blocks
    Value result = machine.Invoke("main", std::vector<Value>{x, w});
    const auto& tensor = static_cast<const Tensor&>(*result);
    ASSERT_EQ(tensor.shape(), Shape({8}));
    for (int64_t i = 0; i < 8; ++i) EXPECT_FLOAT_EQ(tensor.data<float>()[i], 1.0f);
  }
}

TEST(ExplicitMemoryTest, EscapingResultsAreAllocatedAlone) {
  // %h is returned inside a tuple: it must not keep a block alive, or
  // share bytes with anything computed later.
  vm::Executable executable = Compile(R"(#[version = "0.0.5"]
def @main(%x: Tensor[(4, 4), float32]) -> (Tensor[(4, 4), float32], Tensor[(4, 4), float32]) {
  let %h = nn.relu(nn.dense(%x, %x));
  let %g = nn.relu(nn.dense(%h, %h));
  (%h, negative(add(%g, %g)))
}
)");
  const vm::Function& main = Main(executable);
  // %g (read twice, so not fused into its user) alone is planned; %h and
  // the tuple's second field are results of their kernels.
  EXPECT_EQ(Instructions(main, vm::Opcode::kAllocTensor).size(), 1u);
  EXPECT_EQ(Instructions(main, vm::Opcode::kInvokeKernelOut).size(), 1u);
  EXPECT_EQ(Instructions(main, vm::Opcode::kInvokeKernel).size(), 2u);
}

TEST(ExplicitMemoryTest, UnknownDimensionsUseShapeFunctions) {
  auto executable = std::make_shared<const vm::Executable>(Compile(R"(#[version = "0.0.5"]
def @main(%x: Tensor[(?, 3), float32]) -> Tensor[(?, 3), float32] {
  nn.relu(multiply(%x, 2f))
}
)"));
  const vm::Function& main = Main(*executable);
  EXPECT_EQ(Instructions(main, vm::Opcode::kInvokeShapeFunc).size(), 1u);
  EXPECT_EQ(Instructions(main, vm::Opcode::kAllocTensorReg).size(), 1u);
  vm::VirtualMachine machine(executable);
  for (int64_t rows : {2, 5, 0}) {
    Ref<Tensor> x = Tensor::Empty(HostDevice(), {rows, 3}, DType::kFloat32);
    for (int64_t i = 0; i < rows * 3; ++i) x->data<float>()[i] = float(i % 4) - 1.5f;
    Value result = machine.Invoke("main", std::vector<Value>{x});
    const auto& tensor = static_cast<const Tensor&>(*result);
    ASSERT_EQ(tensor.shape(), Shape({rows, 3}));
    for (int64_t i = 0; i < rows * 3; ++i) {
      const float expected = std::max(0.0f, 2 * (float(i % 4) - 1.5f));
      EXPECT_EQ(tensor.data<float>()[i], expected);
    }
  }
}

TEST(ExplicitMemoryTest, OutOfMemoryIsARuntimeErrorAtTheAllocation) {
  auto executable = std::make_shared<const vm::Executable>(Compile(R"(#[version = "0.0.5"]
def @main(%x: Tensor[(8, 256), float32], %w: Tensor[(256, 256), float32]) -> float32 {
  let %big = nn.relu(nn.dense(zeros(shape=[4096, 256], dtype="float32"), %w));
  add(sum(%big), sum(%x))
}
)"));
  vm::VirtualMachine machine(executable);
  const std::vector<Value> inputs = {Tensor::Empty(HostDevice(), {8, 256}, DType::kFloat32),
                                     Tensor::Empty(HostDevice(), {256, 256}, DType::kFloat32)};
  HostDevice().SetMemoryLimit(HostDevice().memory_statistics().bytes_in_use + (1u << 20));
  std::string message;
  int line = 0;
  try {
    machine.Invoke("main", inputs);
  } catch (const Error& error) {
    message = error.message();
    if (error.span()) line = error.span()->line;
  }
  HostDevice().SetMemoryLimit(0);
  EXPECT_NE(message.find("out of memory on cpu:0"), std::string::npos) << message;
  EXPECT_EQ(line, 3);  // the allocation's source line: the block for %big's computation
}

// ---- malformed explicit-memory bytecode -------------------------------------

std::string VerifyError(const vm::Executable& executable) {
  try {
    vm::Verify(executable);
  } catch (const Error& error) {
    return error.message();
  }
  return "";
}

std::string RunError(vm::Executable executable, const std::vector<Value>& arguments) {
  vm::Verify(executable);
  vm::VirtualMachine machine(std::make_shared<const vm::Executable>(std::move(executable)));
  try {
    machine.Invoke("main", arguments);
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::kRuntime) << error.message();
    return error.message();
  }
  return "";
}

vm::Instruction& First(vm::Executable& executable, vm::Opcode opcode) {
  vm::Function& main = executable.functions[size_t(executable.FindFunction("main"))];
  for (vm::Instruction& instruction : main.code)
    if (instruction.opcode == opcode) return instruction;
  throw Error(ErrorKind::kInternal, "no such instruction");
}

std::vector<Value> LayerInputs() {
  Ref<Tensor> x = Tensor::Empty(HostDevice(), {8, 256}, DType::kFloat32);
  Ref<Tensor> w = Tensor::Empty(HostDevice(), {256, 256}, DType::kFloat32);
  std::fill(x->data<float>(), x->data<float>() + 8 * 256, 0.0f);
  std::fill(w->data<float>(), w->data<float>() + 256 * 256, 0.0f);
  return {x, w};
}

TEST(ExplicitMemoryTest, VerifyRejectsMalformedMetadata) {
  vm::Executable bad_alignment = Compile(kLayers);
  First(bad_alignment, vm::Opcode::kAllocStorage).operands[2] = 3;
  EXPECT_NE(VerifyError(bad_alignment).find("alignment 3"), std::string::npos);

  vm::Executable bad_layout = Compile(kLayers);
  // A layout constant that is a float tensor.
  bad_layout.constants.push_back(Tensor::Empty(HostDevice(), {3}, DType::kFloat32));
  First(bad_layout, vm::Opcode::kAllocTensor).operands[2] =
      int32_t(bad_layout.constants.size() - 1);
  EXPECT_NE(VerifyError(bad_layout).find("layout"), std::string::npos) << VerifyError(bad_layout);

  vm::Executable bad_dtype = Compile(R"(#[version = "0.0.5"]
def @main(%x: Tensor[(?), float32]) -> Tensor[(?), float32] { negative(%x) }
)");
  First(bad_dtype, vm::Opcode::kAllocTensorReg).operands[2] = 99;
  EXPECT_NE(VerifyError(bad_dtype).find("unknown dtype"), std::string::npos);
}

TEST(ExplicitMemoryTest, TheVmChecksWhatItIsGiven) {
  // A block too small for the tensors viewing it.
  vm::Executable small = Compile(kLayers);
  small.constants.push_back(vm::EncodeByteSize(16));
  First(small, vm::Opcode::kAllocStorage).operands[1] = int32_t(small.constants.size() - 1);
  EXPECT_NE(RunError(small, LayerInputs()), "");

  // An output of another shape than the kernel computes.
  vm::Executable wrong_shape = Compile(kLayers);
  wrong_shape.constants.push_back(vm::EncodeTensorLayout({0, DType::kFloat32, {4, 256}}));
  First(wrong_shape, vm::Opcode::kAllocTensor).operands[2] =
      int32_t(wrong_shape.constants.size() - 1);
  EXPECT_NE(RunError(wrong_shape, LayerInputs()).find("another shape"), std::string::npos);

  // An output that is one of the kernel's inputs.
  vm::Executable aliased = Compile(R"(#[version = "0.0.5"]
def @main(%x: Tensor[(4, 4), float32]) -> Tensor[(4, 4), float32] {
  let %y = nn.relu(nn.dense(%x, %x));
  add(%y, %y)
}
)");
  vm::Function& main = aliased.functions[size_t(aliased.FindFunction("main"))];
  for (vm::Instruction& instruction : main.code) {
    if (instruction.opcode != vm::Opcode::kInvokeKernelOut) continue;
    // Write into the first input instead of the allocated tensor.
    main.lists[instruction.list_begin + instruction.list_size - 1] =
        main.lists[instruction.list_begin];
    break;
  }
  Ref<Tensor> x = Tensor::Empty(HostDevice(), {4, 4}, DType::kFloat32);
  std::fill(x->data<float>(), x->data<float>() + 16, 1.0f);
  const std::string message = RunError(aliased, {x});
  EXPECT_NE(message.find("writes over one of its inputs"), std::string::npos) << message;
}

}  // namespace
}  // namespace relay
