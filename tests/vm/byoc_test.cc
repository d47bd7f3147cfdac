// Programs partitioned for the external codegens (BYOC), end to end: their
// results against the same programs on relay-vm's own kernels (which the
// kernel tests check against NumPy), which functions became external, the
// .rbc file keeping them, and the loader rejecting corrupted external
// functions.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "compiler/diagnostics.h"
#include "compiler/evaluator/reference_evaluator.h"
#include "compiler/frontend.h"
#include "kernels/external/external_codegen.h"
#include "relay/devices.h"
#include "relay/error.h"
#include "relay/tensor.h"
#include "tests/vm/compile_text.h"
#include "vm/bytecode/executable_file.h"
#include "vm/interpreter/profiler.h"
#include "vm/interpreter/virtual_machine.h"

namespace relay {
namespace {

using kernels::external::ParseCodegenList;

// A ResNet-style basic block with a projection, then pooling and a dense
// layer: convolutions with bias, ReLU and residual adds, max and average
// pooling, a flatten (which stays on relay-vm) and a classifier.
const char* const kResidualNetwork = R"(
def @main(%x: Tensor[(2, 3, 16, 16), float32],
          %w0: Tensor[(8, 3, 3, 3), float32], %b0: Tensor[(8), float32],
          %w1: Tensor[(8, 8, 3, 3), float32], %b1: Tensor[(8), float32],
          %w2: Tensor[(16, 8, 3, 3), float32], %b2: Tensor[(16), float32],
          %w3: Tensor[(16, 16, 3, 3), float32], %b3: Tensor[(16), float32],
          %wp: Tensor[(16, 8, 1, 1), float32], %bp: Tensor[(16), float32],
          %wd: Tensor[(16, 8), float32], %wdw: Tensor[(8, 1, 3, 3), float32],
          %fc: Tensor[(10, 16), float32], %fcb: Tensor[(10), float32]) {
  let %stem = nn.relu(nn.bias_add(nn.conv2d(%x, %w0, padding=[1, 1, 1, 1]), %b0));
  let %pooled = nn.max_pool2d(%stem, pool_size=[3, 3], strides=[2, 2], padding=[1, 1, 1, 1]);
  let %depthwise = nn.relu(nn.conv2d(%pooled, %wdw, padding=[1, 1, 1, 1], groups=8));
  let %a = nn.relu(nn.bias_add(nn.conv2d(%depthwise, %w1, padding=[1, 1, 1, 1]), %b1));
  let %b = nn.bias_add(nn.conv2d(%a, %w2, strides=[2, 2], padding=[1, 1, 1, 1]), %b2);
  let %c = nn.bias_add(nn.conv2d(nn.relu(%b), %w3, padding=[1, 1, 1, 1]), %b3);
  let %shortcut = nn.bias_add(nn.conv2d(%pooled, %wp, strides=[2, 2]), %bp);
  let %block = nn.relu(add(%c, %shortcut));
  let %averaged = nn.avg_pool2d(%block, pool_size=[2, 2], strides=[2, 2]);
  let %features = nn.batch_flatten(nn.global_avg_pool2d(%averaged));
  nn.bias_add(nn.dense(%features, %fc), %fcb)
}
)";

// A transformer-style attention and feed-forward over a `?` sequence:
// dense layers, batched products, softmax, layer_norm and GELU.
const char* const kAttention = R"(
def @main(%x: Tensor[(?, 32), float32], %wq: Tensor[(32, 32), float32],
          %wk: Tensor[(32, 32), float32], %wv: Tensor[(32, 32), float32],
          %w1: Tensor[(64, 32), float32], %b1: Tensor[(64), float32],
          %w2: Tensor[(32, 64), float32], %b2: Tensor[(32), float32],
          %gamma: Tensor[(32), float32], %beta: Tensor[(32), float32]) {
  let %q = transpose(reshape(nn.dense(%x, %wq), newshape=[-1, 4, 8]), axes=[1, 0, 2]);
  let %k = transpose(reshape(nn.dense(%x, %wk), newshape=[-1, 4, 8]), axes=[1, 0, 2]);
  let %v = transpose(reshape(nn.dense(%x, %wv), newshape=[-1, 4, 8]), axes=[1, 0, 2]);
  let %scores = nn.softmax(nn.batch_matmul(%q, %k), axis=-1);
  let %context = reshape(transpose(nn.batch_matmul(%scores, %v, transpose_b=False),
                                   axes=[1, 0, 2]), newshape=[-1, 32]);
  let %x1 = nn.layer_norm(add(%x, %context), %gamma, %beta);
  let %hidden = nn.bias_add(nn.dense(%x1, %w1), %b1);
  let %gelu = multiply(multiply(%hidden, 0.5f), add(erf(multiply(%hidden, 0.70710678f)), 1f));
  let %out = nn.matmul(%gelu, %w2, transpose_b=True);
  nn.layer_norm(add(%x1, nn.bias_add(%out, %b2)), %gamma, %beta)
}
)";

// Random inputs of @main's parameter shapes, `?` dimensions as `any_extent`.
std::vector<Value> RandomInputs(const vm::Executable& executable, int64_t any_extent,
                                uint32_t seed) {
  std::mt19937 generator(seed);
  std::normal_distribution<float> normal(0.0f, 0.5f);
  std::vector<Value> inputs;
  for (const vm::ParamInfo& param : executable.functions[executable.FindFunction("main")].params) {
    Shape shape = param.shape;
    for (int64_t& dim : shape) dim = dim < 0 ? any_extent : dim;
    Ref<Tensor> tensor = Tensor::Empty(HostDevice(), shape, DType::kFloat32);
    for (int64_t index = 0; index < tensor->element_count(); ++index)
      tensor->data<float>()[index] = normal(generator);
    tensor->MarkImmutable();  // as relay-vm run's inputs are
    inputs.push_back(tensor);
  }
  return inputs;
}

Ref<Tensor> RunMain(const std::shared_ptr<const vm::Executable>& executable,
                    const std::vector<Value>& inputs) {
  vm::VirtualMachine machine(executable);
  Value result = machine.Invoke("main", inputs);
  return Ref<Tensor>(static_cast<Tensor*>(result.get()));
}

void ExpectClose(const Tensor& actual, const Tensor& expected, const std::string& what) {
  ASSERT_EQ(actual.shape(), expected.shape()) << what;
  for (int64_t index = 0; index < expected.element_count(); ++index) {
    const float a = actual.data<float>()[index], e = expected.data<float>()[index];
    ASSERT_NEAR(a, e, 1e-4f + 1e-4f * std::fabs(e)) << what << " element " << index;
  }
}

// The compilers of `executable`'s external functions, in kernel order.
std::vector<std::string> ExternalCompilers(const vm::Executable& executable) {
  std::vector<std::string> compilers;
  for (const vm::KernelCall& kernel : executable.kernels) {
    if (kernel.external) compilers.push_back(kernel.external->compiler);
  }
  return compilers;
}

std::shared_ptr<const vm::Executable> Reload(const vm::Executable& executable) {
  const std::string bytes = vm::SerializeExecutable(executable);
  return std::make_shared<const vm::Executable>(vm::LoadExecutable(
      {reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, "byoc.rbc"));
}

struct ByocCase {
  const char* name;
  const char* program;
  std::vector<int64_t> extents;  // for `?` dimensions
};

class ByocProgramTest : public ::testing::TestWithParam<ByocCase> {};

TEST_P(ByocProgramTest, EachCodegenGivesRelayVmsResults) {
  const ByocCase& program = GetParam();
  const auto own = testing::CompileText("byoc.relay", program.program);
  EXPECT_TRUE(ExternalCompilers(*own).empty());
  for (const char* list : {"dnnl", "cblas", "dnnl,cblas", "cblas,dnnl"}) {
    const auto codegens = ParseCodegenList(list);
    const auto partitioned = testing::CompileText("byoc.relay", program.program, codegens);
    const std::vector<std::string> compilers = ExternalCompilers(*partitioned);
    ASSERT_FALSE(compilers.empty()) << list << " took nothing of " << program.name;
    for (const std::string& compiler : compilers)
      EXPECT_NE(std::string(list).find(compiler), std::string::npos) << compiler;
    // The .rbc file keeps the partition: loading it compiles nothing.
    const auto reloaded = Reload(*partitioned);
    EXPECT_EQ(ExternalCompilers(*reloaded), compilers);
    for (int64_t extent : program.extents) {
      const std::vector<Value> inputs = RandomInputs(*own, extent, uint32_t(extent));
      const Ref<Tensor> expected = RunMain(own, inputs);
      const std::string what =
          std::string(program.name) + " with " + list + ", extent " + std::to_string(extent);
      ExpectClose(*RunMain(partitioned, inputs), *expected, what);
      ExpectClose(*RunMain(reloaded, inputs), *expected, what + " (reloaded)");
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Programs, ByocProgramTest,
                         ::testing::Values(ByocCase{"residual", kResidualNetwork, {1}},
                                           ByocCase{"attention", kAttention, {1, 7, 20}}),
                         [](const auto& info) { return std::string(info.param.name); });

// A convolution's inference batch_norm (simplify_batch_norm.h) gives the
// reference evaluator's result (which runs nn.batch_norm's own kernel) on
// relay-vm's kernels and with each codegen.
TEST(ByocTest, BatchNormAfterAConvolutionGivesTheReferenceResult) {
  const std::string program = R"(
def @main(%x: Tensor[(2, 3, 8, 8), float32], %w: Tensor[(4, 3, 3, 3), float32],
          %gamma: Tensor[(4), float32], %beta: Tensor[(4), float32],
          %mean: Tensor[(4), float32], %variance: Tensor[(4), float32]) {
  let %bn = nn.batch_norm(nn.conv2d(%x, %w, padding=[1, 1, 1, 1]), %gamma, %beta, %mean,
                          %variance, epsilon=0.001f);
  nn.relu(%bn.0)
}
)";
  Diagnostics diagnostics(
      "bn.relay", std::make_shared<const std::string>("#[version = \"0.0.5\"]\n" + program));
  const ir::Module module = compiler::ParseAndCheck(diagnostics);
  ASSERT_FALSE(diagnostics.has_errors()) << diagnostics.FormatAll();
  const auto own = testing::CompileText("bn.relay", program);
  std::vector<Value> inputs = RandomInputs(*own, 1, 5);
  // Variances are positive.
  Tensor& variance = *static_cast<Tensor*>(inputs.back().get());
  for (int64_t index = 0; index < variance.element_count(); ++index)
    variance.data<float>()[index] = std::fabs(variance.data<float>()[index]) + 0.1f;
  const Value reference = evaluator::Evaluate(module, "main", inputs);
  const Tensor& expected = *static_cast<const Tensor*>(reference.get());
  ExpectClose(*RunMain(own, inputs), expected, "relay-vm");
  for (const char* list : {"dnnl", "cblas"}) {
    const auto partitioned = testing::CompileText("bn.relay", program, ParseCodegenList(list));
    ExpectClose(*RunMain(partitioned, inputs), expected, list);
  }
  // oneDNN takes the convolution, the scale and shift and the relu as one
  // primitive with post-ops.
  const auto dnnl = testing::CompileText("bn.relay", program, ParseCodegenList("dnnl"));
  ASSERT_EQ(ExternalCompilers(*dnnl), (std::vector<std::string>{"dnnl"}));
  for (const vm::KernelCall& kernel : dnnl->kernels) {
    if (!kernel.external) continue;
    EXPECT_EQ(kernel.external->graph.composite_names,
              (std::vector<std::string>{"dnnl.conv2d_bias_batch_norm_add_relu"}));
  }
}

// The profiler names an external function by its codegen and symbol and
// rates it by the contractions of its graph.
TEST(ByocTest, TheProfilerRatesExternalFunctions) {
  const char* const program = R"(
def @main(%x: Tensor[(16, 64), float32], %w: Tensor[(32, 64), float32]) {
  nn.relu(nn.dense(%x, %w))
}
)";
  const auto executable = testing::CompileText("p.relay", program, ParseCodegenList("dnnl"));
  vm::Profiler profiler(executable, false);
  vm::VirtualMachine machine(executable);
  machine.set_profiler(&profiler);
  profiler.BeginRun();
  machine.Invoke("main", RandomInputs(*executable, 1, 3));
  profiler.EndRun();
  std::ostringstream table;
  profiler.FormatTable(table);
  EXPECT_NE(table.str().find("dnnl:dnnl_0"), std::string::npos) << table.str();
  EXPECT_NE(table.str().find("GFLOP/s"), std::string::npos) << table.str();
}

// The first codegen named gets what both run.
TEST(ByocTest, TheFirstCodegenNamedHasPriority) {
  const char* const program = R"(
def @main(%x: Tensor[(4, 8), float32], %w: Tensor[(6, 8), float32]) {
  nn.dense(%x, %w)
}
)";
  EXPECT_EQ(
      ExternalCompilers(*testing::CompileText("p.relay", program, ParseCodegenList("cblas,dnnl"))),
      (std::vector<std::string>{"cblas"}));
  EXPECT_EQ(
      ExternalCompilers(*testing::CompileText("p.relay", program, ParseCodegenList("dnnl,cblas"))),
      (std::vector<std::string>{"dnnl"}));
}

TEST(ByocTest, CodegenListsAreChecked) {
  for (const char* list : {"tpu", "dnnl,,cblas", "dnnl,dnnl", "xrt", ","}) {
    try {
      ParseCodegenList(list);
      ADD_FAILURE() << list << " was accepted";
    } catch (const Error& error) {
      EXPECT_EQ(error.kind(), ErrorKind::kUsage) << list;
      EXPECT_NE(error.message().find("--byoc takes"), std::string::npos) << error.message();
    }
  }
}

// A `?` dimension given an extent the external function's operators refuse
// is a runtime error naming the operator, not a crash.
TEST(ByocTest, ARunTimeShapeErrorInAnExternalFunctionIsReported) {
  const char* const program = R"(
def @main(%x: Tensor[(?, 8), float32], %w: Tensor[(?, 8), float32], %y: Tensor[(?, ?), float32]) {
  add(nn.dense(%x, %w), %y)
}
)";
  for (const char* list : {"dnnl", "cblas"}) {
    vm::VirtualMachine machine(testing::CompileText("p.relay", program, ParseCodegenList(list)));
    std::vector<Value> inputs = {Tensor::Empty(HostDevice(), {3, 8}, DType::kFloat32),
                                 Tensor::Empty(HostDevice(), {5, 8}, DType::kFloat32),
                                 Tensor::Empty(HostDevice(), {4, 4}, DType::kFloat32)};
    EXPECT_THROW(machine.Invoke("main", inputs), Error) << list;
  }
}

// Serialises `executable` after `corrupt` changed its first external
// function, and expects the loader to refuse it, saying `problem`.
template <typename Corrupt>
void ExpectRejected(const vm::Executable& executable, Corrupt corrupt, const std::string& problem) {
  vm::Executable changed = executable;
  for (vm::KernelCall& kernel : changed.kernels) {
    if (kernel.external) {
      corrupt(*kernel.external);
      break;
    }
  }
  const std::string bytes = vm::SerializeExecutable(changed);
  try {
    vm::LoadExecutable({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, "bad.rbc");
    ADD_FAILURE() << "loaded an executable whose external function " << problem;
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::kLoad) << error.message();
    EXPECT_NE(error.message().find(problem), std::string::npos) << error.message();
  }
}

TEST(ByocTest, CorruptedExternalFunctionsAreRejected) {
  const auto executable =
      testing::CompileText("byoc.relay", kResidualNetwork, ParseCodegenList("dnnl"));
  using External = vm::KernelCall::External;
  ExpectRejected(
      *executable, [](External& e) { e.graph.operators[0].op = "nn.conv9d"; }, "not an operator");
  ExpectRejected(
      *executable, [](External& e) { e.graph.operators[0].inputs[0] = 99; }, "not a known value");
  ExpectRejected(
      *executable, [](External& e) { e.graph.operators[0].inputs[0] = -1; }, "not a known value");
  ExpectRejected(
      *executable, [](External& e) { e.graph.composites[0] = 7; }, "which is not listed");
  ExpectRejected(
      *executable, [](External& e) { e.graph.types[0].shape[1] += 1; }, "is recorded as");
  ExpectRejected(
      *executable, [](External& e) { e.graph.params[0].shape[1] += 5; }, "operator 0");
  ExpectRejected(
      *executable,
      [](External& e) {
        e.graph.operators[0].attrs.push_back({"bogus", {}});
      },
      "bogus");
  ExpectRejected(
      *executable, [](External& e) { e.graph.operators.clear(); }, "at least one operator");
  ExpectRejected(
      *executable, [](External& e) { e.compiler = "tpu"; }, "not an external function");
  // Any flipped byte fails the kernels section's checksum.
  std::string bytes = vm::SerializeExecutable(*executable);
  const size_t at = bytes.find("dnnl.conv2d");
  ASSERT_NE(at, std::string::npos);
  bytes[at + 2] ^= 1;
  EXPECT_THROW(
      vm::LoadExecutable({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, "b.rbc"),
      Error);
}

}  // namespace
}  // namespace relay
