// The BYOC partitioner (compiler/passes/partition_graph.h) with rule tables
// written here, so that what it chooses does not depend on the real
// codegens: the regions chosen for typical graphs, pinned as printed text;
// the partitioned program printing, parsing and type-checking again; and
// the reference evaluator computing the same numbers from it as from the
// program before partitioning (the oracle).
#include "compiler/passes/partition_graph.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "compiler/diagnostics.h"
#include "compiler/evaluator/reference_evaluator.h"
#include "compiler/frontend.h"
#include "compiler/ir/expr_functor.h"
#include "compiler/parser/printer.h"
#include "compiler/passes/a_normal_form.h"
#include "compiler/passes/bind_params.h"
#include "compiler/passes/pass_util.h"
#include "relay/devices.h"
#include "relay/error.h"
#include "relay/tensor.h"

namespace relay {
namespace {

using namespace relay::ir;
using kernels::external::CallView;
using kernels::external::CompositeRule;
using kernels::external::ExternalCodegen;
using kernels::external::OperatorRule;
using kernels::external::PatternStep;
using kernels::external::RuleTable;
using Codegens = std::vector<std::shared_ptr<const ExternalCodegen>>;

// A codegen that only has rules: the partitioner never compiles or loads.
class RulesOnlyCodegen final : public ExternalCodegen {
 public:
  RulesOnlyCodegen(std::string name, RuleTable rules, bool merges)
      : name_(std::move(name)), rules_(std::move(rules)), merges_(merges) {}
  std::string_view name() const override { return name_; }
  const RuleTable& rules() const override { return rules_; }
  bool merges_regions() const override { return merges_; }
  std::string Compile(const kernels::external::ExternalGraph&, const std::string&) const override {
    throw Error(ErrorKind::kInternal, "the partitioner compiled a function");
  }
  std::shared_ptr<const kernels::external::ExternalFunction> Load(
      const kernels::external::ExternalGraph&, std::string_view,
      const std::string&) const override {
    throw Error(ErrorKind::kInternal, "the partitioner loaded a function");
  }

 private:
  std::string name_;
  RuleTable rules_;
  bool merges_;
};

std::shared_ptr<const ExternalCodegen> MakeCodegen(const std::string& name, RuleTable rules,
                                                   bool merges = true) {
  return std::make_shared<RulesOnlyCodegen>(name, std::move(rules), merges);
}

// Operator rules for each of `ops`, accepting every call.
std::vector<OperatorRule> Accepting(const std::vector<std::string>& ops) {
  std::vector<OperatorRule> rules;
  for (const std::string& op : ops) rules.push_back({op, nullptr});
  return rules;
}

bool AllFloat32(const CallView& call) {
  if (call.result.dtype != DType::kFloat32) return false;
  return std::all_of(call.inputs.begin(), call.inputs.end(), [](const kernels::ValueType& input) {
    return input.dtype == DType::kFloat32;
  });
}

int64_t IntAttr(const CallView& call, const std::string& name, int64_t otherwise) {
  for (const auto& [key, value] : call.attrs) {
    if (key == name) return value.as_int();
  }
  return otherwise;
}

// A oneDNN-like library: conv2d + bias + relu, dense + bias + relu as
// composites, and single operators.
RuleTable LibraryRules() {
  RuleTable rules;
  rules.composites.push_back({"lib.conv2d_bias_relu",
                              {PatternStep{{"nn.conv2d"}, false, nullptr},
                               PatternStep{{"nn.bias_add", "add"}, true, nullptr},
                               PatternStep{{"nn.relu"}, true, nullptr}}});
  rules.composites.push_back(
      {"lib.dense_bias_relu",
       {PatternStep{{"nn.dense"}, false, nullptr}, PatternStep{{"nn.bias_add"}, true, nullptr},
        PatternStep{{"nn.relu"}, true, nullptr}}});
  rules.operators = Accepting({"nn.conv2d", "nn.dense", "nn.relu", "add", "exp"});
  return rules;
}

Module Check(const std::string& source) {
  Diagnostics diagnostics("test.relay",
                          std::make_shared<const std::string>("#[version = \"0.0.5\"]\n" + source));
  Module module = compiler::ParseAndCheck(diagnostics);
  if (diagnostics.has_errors()) throw Error(ErrorKind::kInternal, diagnostics.FormatAll());
  return module;
}

// What the pipeline hands the partitioner: every function in A-normal form.
Module Prepare(const std::string& source) {
  return passes::RewriteFunctions(Check(source), passes::ToANormalForm);
}

Module Partition(const Module& module, const Codegens& codegens) {
  return passes::PartitionGraph(module, codegens);
}

// Every expression of `module` carries a checked type (the pass runs
// after type inference and nothing infers types again), and every function
// a function type. Operators are typed at their calls only.
void ExpectTyped(const Module& module) {
  for (const GlobalFunction& global : module.functions()) {
    PostOrderVisit(global.function, [&](const Expr& expr) {
      if (expr->kind() == NodeKind::kOp) return;
      ASSERT_TRUE(expr->checked_type())
          << "an untyped " << NodeKindName(expr->kind()) << " in @" << global.name->name;
      if (expr->kind() == NodeKind::kFunction || expr->kind() == NodeKind::kGlobalVar) {
        EXPECT_EQ(expr->checked_type()->kind(), NodeKind::kFuncType) << "in @" << global.name->name;
      }
    });
  }
}

// The partitioned text, after checking that it parses and type-checks to
// the same text (so that every type the pass wrote is one inference would
// write).
std::string Printed(const Module& module) {
  const std::string text = parser::PrintModule(module);
  Diagnostics diagnostics("partitioned.relay", std::make_shared<const std::string>(text));
  Module reparsed = compiler::ParseAndCheck(diagnostics);
  EXPECT_FALSE(diagnostics.has_errors()) << diagnostics.FormatAll() << "\n" << text;
  if (!diagnostics.has_errors()) {
    EXPECT_EQ(parser::PrintModule(reparsed), text);
  }
  return text;
}

std::string PartitionedText(const std::string& source, const Codegens& codegens) {
  const Module partitioned = Partition(Prepare(source), codegens);
  ExpectTyped(partitioned);
  return Printed(partitioned);
}

// Random tensors for `entry`'s parameters (tensors and bools only).
std::vector<Value> RandomArguments(const Module& module, const std::string& entry, uint32_t seed) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<Value> arguments;
  for (const Var& param : module.FindFunction(entry)->function->params) {
    const auto* type = As<TensorTypeNode>(param->checked_type());
    if (type == nullptr) throw Error(ErrorKind::kInternal, "a parameter that is not a tensor");
    Ref<Tensor> tensor = Tensor::Empty(HostDevice(), type->shape, type->dtype);
    for (int64_t index = 0; index < tensor->element_count(); ++index) {
      switch (type->dtype) {
        case DType::kFloat32:
          tensor->data<float>()[index] = uniform(generator);
          break;
        case DType::kInt32:
          tensor->data<int32_t>()[index] = static_cast<int32_t>(generator() % 7);
          break;
        case DType::kBool:
          tensor->data<bool>()[index] = generator() % 2 == 0;
          break;
        default:
          throw Error(ErrorKind::kInternal, "an unexpected parameter dtype");
      }
    }
    arguments.push_back(tensor);
  }
  return arguments;
}

// The partitioned program computes what the original does: the reference
// evaluator runs both (an external function's body included), on the same
// random inputs, and the partitioned one also after printing and parsing.
// Tensor constants of rank > 0 cannot be printed: `reparse` false skips
// the printed program.
void ExpectSameNumbers(const Module& original, const Module& partitioned, bool reparse = true) {
  std::vector<const Module*> modules{&partitioned};
  Module reparsed;
  if (reparse) {
    Diagnostics diagnostics("partitioned.relay",
                            std::make_shared<const std::string>(parser::PrintModule(partitioned)));
    reparsed = compiler::ParseAndCheck(diagnostics);
    ASSERT_FALSE(diagnostics.has_errors()) << diagnostics.FormatAll();
    modules.push_back(&reparsed);
  }
  for (int run = 0; run < 3; ++run) {
    const std::vector<Value> arguments = RandomArguments(original, "main", 17 + run);
    const Value expected = evaluator::Evaluate(original, "main", arguments);
    for (const Module* module : modules) {
      const Value actual = evaluator::Evaluate(*module, "main", arguments);
      const auto* want = static_cast<const Tensor*>(expected.get());
      const auto* got = static_cast<const Tensor*>(actual.get());
      ASSERT_EQ(got->shape(), want->shape());
      ASSERT_EQ(got->dtype(), DType::kFloat32);
      for (int64_t index = 0; index < want->element_count(); ++index) {
        const float reference = want->data<float>()[index];
        ASSERT_NEAR(got->data<float>()[index], reference, 1e-5f * (1.0f + std::fabs(reference)))
            << "element " << index << " of run " << run;
      }
    }
  }
}

// The names of `module`'s functions, in order.
std::vector<std::string> FunctionNames(const Module& module) {
  std::vector<std::string> names;
  for (const GlobalFunction& global : module.functions()) names.push_back(global.name->name);
  return names;
}

// ---- regions ----------------------------------------------------------------

const char* const kConvBiasRelu = R"(
def @main(%x: Tensor[(1, 3, 8, 8), float32], %w: Tensor[(4, 3, 3, 3), float32],
          %b: Tensor[(4), float32]) -> Tensor[(1, 4, 8, 8), float32] {
  let %c = nn.conv2d(%x, %w, padding=[1, 1], channels=4, kernel_size=[3, 3]);
  let %biased = nn.bias_add(%c, %b);
  nn.relu(%biased)
}
)";

TEST(PartitionGraphTest, ConvolutionBiasReluIsOneComposite) {
  const Codegens codegens{MakeCodegen("lib", LibraryRules())};
  EXPECT_EQ(PartitionedText(kConvBiasRelu, codegens), R"(#[version = "0.0.5"]

def @main(%x: Tensor[(1, 3, 8, 8), float32], %w: Tensor[(4, 3, 3, 3), float32], %b: Tensor[(4,), float32]) -> Tensor[(1, 4, 8, 8), float32] {
  @lib_0(%x, %w, %b)
}

def @lib_0(%x: Tensor[(1, 3, 8, 8), float32], %w: Tensor[(4, 3, 3, 3), float32], %b: Tensor[(4,), float32], Primitive=1, Compiler="lib", global_symbol="lib_0") -> Tensor[(1, 4, 8, 8), float32] {
  let %composite = fn (%x_1: Tensor[(1, 3, 8, 8), float32], %w_1: Tensor[(4, 3, 3, 3), float32], %b_1: Tensor[(4,), float32], Composite="lib.conv2d_bias_relu") -> Tensor[(1, 4, 8, 8), float32] {
    let %c = nn.conv2d(%x_1, %w_1, padding=[1, 1], channels=4, kernel_size=[3, 3]);
    let %biased = nn.bias_add(%c, %b_1);
    nn.relu(%biased)
  };
  %composite(%x, %w, %b)
}
)");
  ExpectSameNumbers(Prepare(kConvBiasRelu), Partition(Prepare(kConvBiasRelu), codegens));
}

TEST(PartitionGraphTest, TwoConvolutionsInARowAreOneRegion) {
  const Codegens codegens{MakeCodegen("lib", RuleTable{{}, Accepting({"nn.conv2d"})})};
  const char* const source = R"(
def @main(%x: Tensor[(1, 3, 8, 8), float32], %w1: Tensor[(4, 3, 3, 3), float32],
          %w2: Tensor[(4, 4, 3, 3), float32]) -> Tensor[(1, 4, 8, 8), float32] {
  let %c1 = nn.conv2d(%x, %w1, padding=[1, 1], channels=4, kernel_size=[3, 3]);
  nn.conv2d(%c1, %w2, padding=[1, 1], channels=4, kernel_size=[3, 3])
}
)";
  EXPECT_EQ(PartitionedText(source, codegens), R"(#[version = "0.0.5"]

def @main(%x: Tensor[(1, 3, 8, 8), float32], %w1: Tensor[(4, 3, 3, 3), float32], %w2: Tensor[(4, 4, 3, 3), float32]) -> Tensor[(1, 4, 8, 8), float32] {
  @lib_0(%x, %w1, %w2)
}

def @lib_0(%x: Tensor[(1, 3, 8, 8), float32], %w1: Tensor[(4, 3, 3, 3), float32], %w2: Tensor[(4, 4, 3, 3), float32], Primitive=1, Compiler="lib", global_symbol="lib_0") -> Tensor[(1, 4, 8, 8), float32] {
  let %c1 = nn.conv2d(%x, %w1, padding=[1, 1], channels=4, kernel_size=[3, 3]);
  nn.conv2d(%c1, %w2, padding=[1, 1], channels=4, kernel_size=[3, 3])
}
)");
  ExpectSameNumbers(Prepare(source), Partition(Prepare(source), codegens));
}

// A residual block whose input is itself computed by the codegen.
const char* const kResidualBlock = R"(
def @main(%data: Tensor[(1, 4, 6, 6), float32], %w0: Tensor[(4, 4, 3, 3), float32],
          %w1: Tensor[(4, 4, 3, 3), float32], %w2: Tensor[(4, 4, 3, 3), float32])
          -> Tensor[(1, 4, 6, 6), float32] {
  let %c0 = nn.conv2d(%data, %w0, padding=[1, 1], channels=4, kernel_size=[3, 3]);
  let %input = nn.relu(%c0);
  let %c1 = nn.conv2d(%input, %w1, padding=[1, 1], channels=4, kernel_size=[3, 3]);
  let %r1 = nn.relu(%c1);
  let %c2 = nn.conv2d(%r1, %w2, padding=[1, 1], channels=4, kernel_size=[3, 3]);
  let %sum = add(%c2, %input);
  nn.relu(%sum)
}
)";

// %input is used by the block's first convolution and by its add: taken
// alone, that convolution cannot join %input's region (%input would leave
// the region before its end), but once the add joins, the whole block is
// one region with one output.
TEST(PartitionGraphTest, AResidualBlockBecomesOneRegionOnceItsAddJoins) {
  const Codegens codegens{
      MakeCodegen("lib", RuleTable{{}, Accepting({"nn.conv2d", "nn.relu", "add"})})};
  EXPECT_EQ(PartitionedText(kResidualBlock, codegens), R"(#[version = "0.0.5"]

def @main(%data: Tensor[(1, 4, 6, 6), float32], %w0: Tensor[(4, 4, 3, 3), float32], %w1: Tensor[(4, 4, 3, 3), float32], %w2: Tensor[(4, 4, 3, 3), float32]) -> Tensor[(1, 4, 6, 6), float32] {
  @lib_0(%data, %w0, %w1, %w2)
}

def @lib_0(%data: Tensor[(1, 4, 6, 6), float32], %w0: Tensor[(4, 4, 3, 3), float32], %w1: Tensor[(4, 4, 3, 3), float32], %w2: Tensor[(4, 4, 3, 3), float32], Primitive=1, Compiler="lib", global_symbol="lib_0") -> Tensor[(1, 4, 6, 6), float32] {
  let %c0 = nn.conv2d(%data, %w0, padding=[1, 1], channels=4, kernel_size=[3, 3]);
  let %input = nn.relu(%c0);
  let %c1 = nn.conv2d(%input, %w1, padding=[1, 1], channels=4, kernel_size=[3, 3]);
  let %r1 = nn.relu(%c1);
  let %c2 = nn.conv2d(%r1, %w2, padding=[1, 1], channels=4, kernel_size=[3, 3]);
  let %sum = add(%c2, %input);
  nn.relu(%sum)
}
)");
  ExpectSameNumbers(Prepare(kResidualBlock), Partition(Prepare(kResidualBlock), codegens));
}

// Without the add, %input is used outside any region that would hold the
// block's first convolution, so that region stops before it; the add stays
// on the VM between the regions.
TEST(PartitionGraphTest, AResidualBlockSplitsWhereAValueWouldLeaveARegionEarly) {
  const Codegens codegens{MakeCodegen("lib", RuleTable{{}, Accepting({"nn.conv2d", "nn.relu"})})};
  EXPECT_EQ(PartitionedText(kResidualBlock, codegens), R"(#[version = "0.0.5"]

def @main(%data: Tensor[(1, 4, 6, 6), float32], %w0: Tensor[(4, 4, 3, 3), float32], %w1: Tensor[(4, 4, 3, 3), float32], %w2: Tensor[(4, 4, 3, 3), float32]) -> Tensor[(1, 4, 6, 6), float32] {
  let %input = @lib_0(%data, %w0);
  let %c2 = @lib_1(%input, %w1, %w2);
  let %sum = add(%c2, %input);
  @lib_2(%sum)
}

def @lib_0(%data: Tensor[(1, 4, 6, 6), float32], %w0: Tensor[(4, 4, 3, 3), float32], Primitive=1, Compiler="lib", global_symbol="lib_0") -> Tensor[(1, 4, 6, 6), float32] {
  let %c0 = nn.conv2d(%data, %w0, padding=[1, 1], channels=4, kernel_size=[3, 3]);
  nn.relu(%c0)
}

def @lib_1(%input: Tensor[(1, 4, 6, 6), float32], %w1: Tensor[(4, 4, 3, 3), float32], %w2: Tensor[(4, 4, 3, 3), float32], Primitive=1, Compiler="lib", global_symbol="lib_1") -> Tensor[(1, 4, 6, 6), float32] {
  let %c1 = nn.conv2d(%input, %w1, padding=[1, 1], channels=4, kernel_size=[3, 3]);
  let %r1 = nn.relu(%c1);
  nn.conv2d(%r1, %w2, padding=[1, 1], channels=4, kernel_size=[3, 3])
}

def @lib_2(%sum: Tensor[(1, 4, 6, 6), float32], Primitive=1, Compiler="lib", global_symbol="lib_2") -> Tensor[(1, 4, 6, 6), float32] {
  nn.relu(%sum)
}
)");
  ExpectSameNumbers(Prepare(kResidualBlock), Partition(Prepare(kResidualBlock), codegens));
}

// A ResNet stage's first block reads the stage's input in two branches (a
// strided convolution and a 1x1 projection): neither joins the region before
// alone, since the input would leave it for the other, but once the two
// branches have joined each other through their add, the whole is one region.
TEST(PartitionGraphTest, ADownsamplingBlockJoinsTheRegionBeforeOnceBothBranchesHaveJoined) {
  const Codegens codegens{
      MakeCodegen("lib", RuleTable{{}, Accepting({"nn.conv2d", "nn.relu", "add"})})};
  const char* const source = R"(
def @main(%data: Tensor[(1, 4, 8, 8), float32], %w0: Tensor[(4, 4, 3, 3), float32],
          %w1: Tensor[(8, 4, 3, 3), float32], %w2: Tensor[(8, 8, 3, 3), float32],
          %wp: Tensor[(8, 4, 1, 1), float32]) -> Tensor[(1, 8, 4, 4), float32] {
  let %stage = nn.relu(nn.conv2d(%data, %w0, padding=[1, 1]));
  let %c1 = nn.relu(nn.conv2d(%stage, %w1, strides=[2, 2], padding=[1, 1]));
  let %c2 = nn.conv2d(%c1, %w2, padding=[1, 1]);
  let %projection = nn.conv2d(%stage, %wp, strides=[2, 2]);
  nn.relu(add(%c2, %projection))
}
)";
  const std::string text = PartitionedText(source, codegens);
  EXPECT_NE(text.find("def @main(%data: Tensor[(1, 4, 8, 8), float32], %w0: Tensor[(4, 4, 3, 3), "
                      "float32], %w1: Tensor[(8, 4, 3, 3), float32], %w2: Tensor[(8, 8, 3, 3), "
                      "float32], %wp: Tensor[(8, 4, 1, 1), float32]) -> Tensor[(1, 8, 4, 4), "
                      "float32] {\n  @lib_0(%data, %w0, %w1, %w2, %wp)\n}"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("@lib_1"), std::string::npos) << text;
  ExpectSameNumbers(Prepare(source), Partition(Prepare(source), codegens));
}

TEST(PartitionGraphTest, AMultilayerPerceptronIsTwoCompositesInOneRegion) {
  const Codegens codegens{MakeCodegen("lib", LibraryRules())};
  const char* const source = R"(
def @main(%x: Tensor[(2, 8), float32], %w1: Tensor[(16, 8), float32], %b1: Tensor[(16), float32],
          %w2: Tensor[(4, 16), float32], %b2: Tensor[(4), float32]) -> Tensor[(2, 4), float32] {
  let %d1 = nn.dense(%x, %w1);
  let %a1 = nn.bias_add(%d1, %b1);
  let %r1 = nn.relu(%a1);
  let %d2 = nn.dense(%r1, %w2);
  let %a2 = nn.bias_add(%d2, %b2);
  nn.relu(%a2)
}
)";
  EXPECT_EQ(PartitionedText(source, codegens), R"(#[version = "0.0.5"]

def @main(%x: Tensor[(2, 8), float32], %w1: Tensor[(16, 8), float32], %b1: Tensor[(16,), float32], %w2: Tensor[(4, 16), float32], %b2: Tensor[(4,), float32]) -> Tensor[(2, 4), float32] {
  @lib_0(%x, %w1, %b1, %w2, %b2)
}

def @lib_0(%x: Tensor[(2, 8), float32], %w1: Tensor[(16, 8), float32], %b1: Tensor[(16,), float32], %w2: Tensor[(4, 16), float32], %b2: Tensor[(4,), float32], Primitive=1, Compiler="lib", global_symbol="lib_0") -> Tensor[(2, 4), float32] {
  let %composite = fn (%x_1: Tensor[(2, 8), float32], %w1_1: Tensor[(16, 8), float32], %b1_1: Tensor[(16,), float32], Composite="lib.dense_bias_relu") -> Tensor[(2, 16), float32] {
    let %d1 = nn.dense(%x_1, %w1_1);
    let %a1 = nn.bias_add(%d1, %b1_1);
    nn.relu(%a1)
  };
  let %r1 = %composite(%x, %w1, %b1);
  let %composite_1 = fn (%r1_1: Tensor[(2, 16), float32], %w2_1: Tensor[(4, 16), float32], %b2_1: Tensor[(4,), float32], Composite="lib.dense_bias_relu") -> Tensor[(2, 4), float32] {
    let %d2 = nn.dense(%r1_1, %w2_1);
    let %a2 = nn.bias_add(%d2, %b2_1);
    nn.relu(%a2)
  };
  %composite_1(%r1, %w2, %b2)
}
)");
  ExpectSameNumbers(Prepare(source), Partition(Prepare(source), codegens));
}

// %a feeds %b (not supported) and the add; a region of both would need
// %b's value inside it and give %a to %b before it ends: a cycle.
TEST(PartitionGraphTest, RegionsNeverMergeAroundAnUnsupportedCall) {
  const Codegens codegens{MakeCodegen("lib", LibraryRules())};
  const char* const source = R"(
def @main(%x: Tensor[(4), float32]) -> Tensor[(4), float32] {
  let %a = nn.relu(%x);
  let %b = tanh(%a);
  add(%a, %b)
}
)";
  EXPECT_EQ(PartitionedText(source, codegens), R"(#[version = "0.0.5"]

def @main(%x: Tensor[(4,), float32]) -> Tensor[(4,), float32] {
  let %a = @lib_0(%x);
  let %b = tanh(%a);
  @lib_1(%a, %b)
}

def @lib_0(%x: Tensor[(4,), float32], Primitive=1, Compiler="lib", global_symbol="lib_0") -> Tensor[(4,), float32] {
  nn.relu(%x)
}

def @lib_1(%a: Tensor[(4,), float32], %b: Tensor[(4,), float32], Primitive=1, Compiler="lib", global_symbol="lib_1") -> Tensor[(4,), float32] {
  add(%a, %b)
}
)");
  ExpectSameNumbers(Prepare(source), Partition(Prepare(source), codegens));
}

// Both values are the program's result: a region of both would have two
// outputs.
TEST(PartitionGraphTest, ARegionHasOneOutput) {
  const Codegens codegens{MakeCodegen("lib", LibraryRules())};
  const Module partitioned = Partition(Prepare(R"(
def @main(%x: Tensor[(4), float32]) -> (Tensor[(4), float32], Tensor[(4), float32]) {
  let %a = nn.relu(%x);
  let %b = exp(%a);
  (%a, %b)
}
)"),
                                       codegens);
  EXPECT_EQ(FunctionNames(partitioned), (std::vector<std::string>{"main", "lib_0", "lib_1"}));
  Printed(partitioned);
}

// The convolution's value is also used by the add, so the pattern stops at
// the convolution: the relu is an operator of its own, and the three share
// one region (whose one output is the add).
TEST(PartitionGraphTest, APatternStepNeedsTheOnlyUseOfThePreviousValue) {
  const Codegens codegens{MakeCodegen("lib", LibraryRules())};
  const char* const source = R"(
def @main(%x: Tensor[(1, 3, 8, 8), float32], %w: Tensor[(4, 3, 3, 3), float32])
          -> Tensor[(1, 4, 8, 8), float32] {
  let %c = nn.conv2d(%x, %w, padding=[1, 1], channels=4, kernel_size=[3, 3]);
  let %r = nn.relu(%c);
  add(%r, %c)
}
)";
  EXPECT_EQ(PartitionedText(source, codegens), R"(#[version = "0.0.5"]

def @main(%x: Tensor[(1, 3, 8, 8), float32], %w: Tensor[(4, 3, 3, 3), float32]) -> Tensor[(1, 4, 8, 8), float32] {
  @lib_0(%x, %w)
}

def @lib_0(%x: Tensor[(1, 3, 8, 8), float32], %w: Tensor[(4, 3, 3, 3), float32], Primitive=1, Compiler="lib", global_symbol="lib_0") -> Tensor[(1, 4, 8, 8), float32] {
  let %composite = fn (%x_1: Tensor[(1, 3, 8, 8), float32], %w_1: Tensor[(4, 3, 3, 3), float32], Composite="lib.conv2d_bias_relu") -> Tensor[(1, 4, 8, 8), float32] {
    nn.conv2d(%x_1, %w_1, padding=[1, 1], channels=4, kernel_size=[3, 3])
  };
  let %c = %composite(%x, %w);
  let %r = nn.relu(%c);
  add(%r, %c)
}
)");
  ExpectSameNumbers(Prepare(source), Partition(Prepare(source), codegens));
}

TEST(PartitionGraphTest, TheFirstCodegenThatAcceptsACallTakesIt) {
  const auto first = MakeCodegen("first", RuleTable{{}, Accepting({"nn.relu"})});
  const auto second = MakeCodegen("second", RuleTable{{}, Accepting({"nn.relu", "tanh"})});
  const char* const source = R"(
def @main(%x: Tensor[(4), float32]) -> Tensor[(4), float32] {
  let %a = nn.relu(%x);
  let %b = tanh(%a);
  nn.relu(%b)
}
)";
  EXPECT_EQ(PartitionedText(source, {first, second}), R"(#[version = "0.0.5"]

def @main(%x: Tensor[(4,), float32]) -> Tensor[(4,), float32] {
  let %a = @first_0(%x);
  let %b = @second_0(%a);
  @first_1(%b)
}

def @first_0(%x: Tensor[(4,), float32], Primitive=1, Compiler="first", global_symbol="first_0") -> Tensor[(4,), float32] {
  nn.relu(%x)
}

def @second_0(%a: Tensor[(4,), float32], Primitive=1, Compiler="second", global_symbol="second_0") -> Tensor[(4,), float32] {
  tanh(%a)
}

def @first_1(%b: Tensor[(4,), float32], Primitive=1, Compiler="first", global_symbol="first_1") -> Tensor[(4,), float32] {
  nn.relu(%b)
}
)");
  EXPECT_EQ(PartitionedText(source, {second, first}), R"(#[version = "0.0.5"]

def @main(%x: Tensor[(4,), float32]) -> Tensor[(4,), float32] {
  @second_0(%x)
}

def @second_0(%x: Tensor[(4,), float32], Primitive=1, Compiler="second", global_symbol="second_0") -> Tensor[(4,), float32] {
  let %a = nn.relu(%x);
  let %b = tanh(%a);
  nn.relu(%b)
}
)");
  ExpectSameNumbers(Prepare(source), Partition(Prepare(source), {first, second}));
}

TEST(PartitionGraphTest, CallsARuleRejectsStayOnTheVm) {
  RuleTable rules;
  rules.operators.push_back({"nn.conv2d", [](const CallView& call) {
                               return AllFloat32(call) && IntAttr(call, "groups", 1) == 1;
                             }});
  rules.operators.push_back({"add", AllFloat32});
  const Codegens codegens{MakeCodegen("lib", std::move(rules))};
  const char* const source = R"(
def @main(%x: Tensor[(1, 4, 8, 8), float32], %w: Tensor[(4, 4, 3, 3), float32],
          %dw: Tensor[(4, 1, 3, 3), float32], %i: Tensor[(4), int32])
          -> (Tensor[(1, 4, 8, 8), float32], Tensor[(4), int32]) {
  let %c = nn.conv2d(%x, %w, padding=[1, 1], channels=4, kernel_size=[3, 3]);
  let %d = nn.conv2d(%c, %dw, padding=[1, 1], groups=4, channels=4, kernel_size=[3, 3]);
  let %s = add(%d, %c);
  let %j = add(%i, %i);
  (%s, %j)
}
)";
  EXPECT_EQ(PartitionedText(source, codegens), R"(#[version = "0.0.5"]

def @main(%x: Tensor[(1, 4, 8, 8), float32], %w: Tensor[(4, 4, 3, 3), float32], %dw: Tensor[(4, 1, 3, 3), float32], %i: Tensor[(4,), int32]) -> (Tensor[(1, 4, 8, 8), float32], Tensor[(4,), int32]) {
  let %c = @lib_0(%x, %w);
  let %d = nn.conv2d(%c, %dw, padding=[1, 1], groups=4, channels=4, kernel_size=[3, 3]);
  let %s = @lib_1(%d, %c);
  let %j = add(%i, %i);
  (%s, %j)
}

def @lib_0(%x: Tensor[(1, 4, 8, 8), float32], %w: Tensor[(4, 4, 3, 3), float32], Primitive=1, Compiler="lib", global_symbol="lib_0") -> Tensor[(1, 4, 8, 8), float32] {
  nn.conv2d(%x, %w, padding=[1, 1], channels=4, kernel_size=[3, 3])
}

def @lib_1(%d: Tensor[(1, 4, 8, 8), float32], %c: Tensor[(1, 4, 8, 8), float32], Primitive=1, Compiler="lib", global_symbol="lib_1") -> Tensor[(1, 4, 8, 8), float32] {
  add(%d, %c)
}
)");
}

const char* const kDenseReluAdds = R"(
def @main(%x: Tensor[(2, 8), float32], %w: Tensor[(8, 8), float32], %y: Tensor[(2, 8), float32])
          -> Tensor[(2, 8), float32] {
  let %d = nn.dense(%x, %w);
  let %r = nn.relu(%d);
  let %s = add(%r, %y);
  add(%s, %s)
}
)";

RuleTable KernelRules() {
  RuleTable rules;
  rules.composites.push_back(
      {"fpga.dense_relu",
       {PatternStep{{"nn.dense"}, false, nullptr}, PatternStep{{"nn.relu"}, false, nullptr}}});
  rules.operators = Accepting({"add"});
  return rules;
}

TEST(PartitionGraphTest, ACodegenThatDoesNotMergeGetsAFunctionPerMatch) {
  const Codegens codegens{MakeCodegen("fpga", KernelRules(), /*merges=*/false)};
  EXPECT_EQ(PartitionedText(kDenseReluAdds, codegens), R"(#[version = "0.0.5"]

def @main(%x: Tensor[(2, 8), float32], %w: Tensor[(8, 8), float32], %y: Tensor[(2, 8), float32]) -> Tensor[(2, 8), float32] {
  let %r = @fpga_0(%x, %w);
  let %s = @fpga_1(%r, %y);
  @fpga_2(%s)
}

def @fpga_0(%x: Tensor[(2, 8), float32], %w: Tensor[(8, 8), float32], Primitive=1, Compiler="fpga", global_symbol="fpga_0") -> Tensor[(2, 8), float32] {
  let %composite = fn (%x_1: Tensor[(2, 8), float32], %w_1: Tensor[(8, 8), float32], Composite="fpga.dense_relu") -> Tensor[(2, 8), float32] {
    let %d = nn.dense(%x_1, %w_1);
    nn.relu(%d)
  };
  %composite(%x, %w)
}

def @fpga_1(%r: Tensor[(2, 8), float32], %y: Tensor[(2, 8), float32], Primitive=1, Compiler="fpga", global_symbol="fpga_1") -> Tensor[(2, 8), float32] {
  add(%r, %y)
}

def @fpga_2(%s: Tensor[(2, 8), float32], Primitive=1, Compiler="fpga", global_symbol="fpga_2") -> Tensor[(2, 8), float32] {
  add(%s, %s)
}
)");
  ExpectSameNumbers(Prepare(kDenseReluAdds), Partition(Prepare(kDenseReluAdds), codegens));
  // The same rules, merging: one function.
  const Codegens merging{MakeCodegen("fpga", KernelRules(), /*merges=*/true)};
  EXPECT_EQ(FunctionNames(Partition(Prepare(kDenseReluAdds), merging)),
            (std::vector<std::string>{"main", "fpga_0"}));
}

// Each branch is a chain of its own; a value used in a branch is one the
// region computing it must give out, so it ends its region.
TEST(PartitionGraphTest, BranchesArePartitionedSeparately) {
  const Codegens codegens{MakeCodegen("lib", LibraryRules())};
  const char* const source = R"(
def @main(%x: Tensor[(4), float32], %c: bool) -> Tensor[(4), float32] {
  let %a = nn.relu(%x);
  let %e = exp(%a);
  if (%c) {
    let %b = exp(%e);
    nn.relu(%b)
  } else {
    add(%a, %e)
  }
}
)";
  EXPECT_EQ(PartitionedText(source, codegens), R"(#[version = "0.0.5"]

def @main(%x: Tensor[(4,), float32], %c: bool) -> Tensor[(4,), float32] {
  let %a = @lib_0(%x);
  let %e = @lib_1(%a);
  if (%c) {
    @lib_2(%e)
  } else {
    @lib_3(%a, %e)
  }
}

def @lib_0(%x: Tensor[(4,), float32], Primitive=1, Compiler="lib", global_symbol="lib_0") -> Tensor[(4,), float32] {
  nn.relu(%x)
}

def @lib_1(%a: Tensor[(4,), float32], Primitive=1, Compiler="lib", global_symbol="lib_1") -> Tensor[(4,), float32] {
  exp(%a)
}

def @lib_2(%e: Tensor[(4,), float32], Primitive=1, Compiler="lib", global_symbol="lib_2") -> Tensor[(4,), float32] {
  let %b = exp(%e);
  nn.relu(%b)
}

def @lib_3(%a: Tensor[(4,), float32], %e: Tensor[(4,), float32], Primitive=1, Compiler="lib", global_symbol="lib_3") -> Tensor[(4,), float32] {
  add(%a, %e)
}
)");
  ExpectSameNumbers(Prepare(source), Partition(Prepare(source), codegens));
}

TEST(PartitionGraphTest, RecursiveFunctionsArePartitionedAndKeepTheirCalls) {
  RuleTable rules;
  for (const char* op : {"add", "exp", "nn.relu"}) rules.operators.push_back({op, AllFloat32});
  const Codegens codegens{MakeCodegen("lib", std::move(rules))};
  const char* const source = R"(
def @loop(%i: int32, %x: Tensor[(4), float32]) -> Tensor[(4), float32] {
  if (less(%i, 3)) {
    let %y = add(%x, 1f);
    let %z = nn.relu(%y);
    @loop(add(%i, 1), %z)
  } else {
    %x
  }
}
def @main(%x: Tensor[(4), float32]) -> Tensor[(4), float32] {
  let %f = fn (%n: int32, %v: Tensor[(4), float32]) -> Tensor[(4), float32] {
    if (equal(%n, 0)) {
      %v
    } else {
      %f(subtract(%n, 1), nn.relu(exp(%v)))
    }
  };
  %f(2, @loop(0, %x))
}
)";
  EXPECT_EQ(PartitionedText(source, codegens), R"(#[version = "0.0.5"]

def @loop(%i: int32, %x: Tensor[(4,), float32]) -> Tensor[(4,), float32] {
  let %anf: bool = less(%i, 3);
  if (%anf) {
    let %z = @lib_0(%x, 1f);
    let %anf_1: int32 = add(%i, 1);
    @loop(%anf_1, %z)
  } else {
    %x
  }
}

def @lib_0(%x: Tensor[(4,), float32], %constant: float32, Primitive=1, Compiler="lib", global_symbol="lib_0") -> Tensor[(4,), float32] {
  let %y = add(%x, %constant);
  nn.relu(%y)
}

def @main(%x: Tensor[(4,), float32]) -> Tensor[(4,), float32] {
  let %f = fn (%n: int32, %v: Tensor[(4,), float32]) -> Tensor[(4,), float32] {
    let %anf: bool = equal(%n, 0);
    if (%anf) {
      %v
    } else {
      let %anf_1: int32 = subtract(%n, 1);
      let %anf_2: Tensor[(4,), float32] = @lib_1(%v);
      %f(%anf_1, %anf_2)
    }
  };
  let %anf_3: Tensor[(4,), float32] = @loop(0, %x);
  %f(2, %anf_3)
}

def @lib_1(%v: Tensor[(4,), float32], Primitive=1, Compiler="lib", global_symbol="lib_1") -> Tensor[(4,), float32] {
  let %anf = exp(%v);
  nn.relu(%anf)
}
)");
  ExpectSameNumbers(Prepare(source), Partition(Prepare(source), codegens));
}

// A region's calls move down to its last one: never across a call of a
// function (which might not return, or fail first).
TEST(PartitionGraphTest, RegionsDoNotSpanCallsOfFunctions) {
  const Codegens codegens{MakeCodegen("lib", LibraryRules())};
  const char* const source = R"(
def @g(%v: Tensor[(4), float32]) -> Tensor[(4), float32] {
  tanh(%v)
}
def @main(%x: Tensor[(4), float32]) -> Tensor[(4), float32] {
  let %a = nn.relu(%x);
  let %y = @g(%x);
  let %b = exp(%a);
  add(%b, %y)
}
)";
  EXPECT_EQ(PartitionedText(source, codegens), R"(#[version = "0.0.5"]

def @g(%v: Tensor[(4,), float32]) -> Tensor[(4,), float32] {
  tanh(%v)
}

def @main(%x: Tensor[(4,), float32]) -> Tensor[(4,), float32] {
  let %a = @lib_0(%x);
  let %y = @g(%x);
  @lib_1(%a, %y)
}

def @lib_0(%x: Tensor[(4,), float32], Primitive=1, Compiler="lib", global_symbol="lib_0") -> Tensor[(4,), float32] {
  nn.relu(%x)
}

def @lib_1(%a: Tensor[(4,), float32], %y: Tensor[(4,), float32], Primitive=1, Compiler="lib", global_symbol="lib_1") -> Tensor[(4,), float32] {
  let %b = exp(%a);
  add(%b, %y)
}
)");
  ExpectSameNumbers(Prepare(source), Partition(Prepare(source), codegens));
}

// A weight bound as a constant is an operand like any other: a parameter
// of the function, passed at the call.
TEST(PartitionGraphTest, ConstantOperandsBecomeParameters) {
  Ref<Tensor> weight = Tensor::Empty(HostDevice(), {4, 3, 3, 3}, DType::kFloat32);
  for (int64_t index = 0; index < weight->element_count(); ++index)
    weight->data<float>()[index] = std::sin(float(index));
  const Module original = passes::RewriteFunctions(
      passes::BindParams(Check(kConvBiasRelu), "main", {{"w", weight}}, "test"),
      passes::ToANormalForm);
  const Codegens codegens{MakeCodegen("lib", LibraryRules())};
  const Module partitioned = Partition(original, codegens);
  ExpectTyped(partitioned);
  EXPECT_EQ(parser::PrintModule(partitioned, {.tensor_constants_as_meta = true}),
            R"(#[version = "0.0.5"]

def @main(%x: Tensor[(1, 3, 8, 8), float32], %b: Tensor[(4,), float32]) -> Tensor[(1, 4, 8, 8), float32] {
  @lib_0(%x, meta[relay.Constant][0], %b)
}

def @lib_0(%x: Tensor[(1, 3, 8, 8), float32], %constant: Tensor[(4, 3, 3, 3), float32], %b: Tensor[(4,), float32], Primitive=1, Compiler="lib", global_symbol="lib_0") -> Tensor[(1, 4, 8, 8), float32] {
  let %composite = fn (%x_1: Tensor[(1, 3, 8, 8), float32], %constant_1: Tensor[(4, 3, 3, 3), float32], %b_1: Tensor[(4,), float32], Composite="lib.conv2d_bias_relu") -> Tensor[(1, 4, 8, 8), float32] {
    let %c = nn.conv2d(%x_1, %constant_1, padding=[1, 1], channels=4, kernel_size=[3, 3]);
    let %biased = nn.bias_add(%c, %b_1);
    nn.relu(%biased)
  };
  %composite(%x, %constant, %b)
}
)");
  ExpectSameNumbers(original, partitioned, /*reparse=*/false);
}

TEST(PartitionGraphTest, NamesAreUniqueInTheModuleAndFollowTheirCaller) {
  const Codegens codegens{MakeCodegen("lib", LibraryRules())};
  const Module partitioned = Partition(Prepare(R"(
def @lib_0(%v: Tensor[(4), float32]) -> Tensor[(4), float32] {
  tanh(%v)
}
def @f(%v: Tensor[(4), float32]) -> Tensor[(4), float32] {
  nn.relu(%v)
}
def @main(%x: Tensor[(4), float32]) -> Tensor[(4), float32] {
  let %y = @f(@lib_0(%x));
  exp(%y)
}
)"),
                                       codegens);
  EXPECT_EQ(FunctionNames(partitioned),
            (std::vector<std::string>{"lib_0", "f", "lib_1", "main", "lib_2"}));
  ExpectTyped(partitioned);
  Printed(partitioned);
}

TEST(PartitionGraphTest, WithoutAcceptedCallsFunctionsAreUnchanged) {
  const Module module = Prepare(kConvBiasRelu);
  for (const Codegens& codegens :
       {Codegens{}, Codegens{MakeCodegen("lib", RuleTable{{}, Accepting({"tanh"})})}}) {
    const Module partitioned = Partition(module, codegens);
    ASSERT_EQ(partitioned.functions().size(), 1u);
    EXPECT_EQ(partitioned.functions()[0].function.get(), module.functions()[0].function.get());
  }
}

// 100,000 bindings: no recursion along the chain, and merging call by call
// stays linear.
TEST(PartitionGraphTest, LongChainsAreOneRegionWithoutRecursion) {
  constexpr int kLength = 100000;
  std::string source = "def @main(%x: Tensor[(4), float32]) -> Tensor[(4), float32] {\n";
  source += "  let %v0 = nn.relu(%x);\n";
  for (int index = 1; index < kLength; ++index) {
    source += "  let %v" + std::to_string(index) + " = " + (index % 2 ? "exp" : "nn.relu") + "(%v" +
              std::to_string(index - 1) + ");\n";
  }
  source += "  %v" + std::to_string(kLength - 1) + "\n}\n";
  const Codegens codegens{MakeCodegen("lib", LibraryRules())};
  const Module partitioned = Partition(Prepare(source), codegens);
  ASSERT_EQ(FunctionNames(partitioned), (std::vector<std::string>{"main", "lib_0"}));
  int calls = 0;
  PostOrderVisit(partitioned.FindFunction("lib_0")->function->body,
                 [&](const Expr& expr) { calls += expr->kind() == NodeKind::kCall; });
  EXPECT_EQ(calls, kLength);
  EXPECT_EQ(partitioned.FindFunction("lib_0")->function->params.size(), 1u);
}

}  // namespace
}  // namespace relay
