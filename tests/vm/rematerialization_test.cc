// Runs under a memory budget (Dynamic Tensor Rematerialization,
// vm/interpreter/rematerializer.h): the same results as without one, bit
// for bit, with the resident bytes kept under the budget, for a training
// step of a deep perceptron (its gradient derived by the front end) and of
// an LSTM over a `?`-length sequence (whose gradient goes through closures
// and references); and a clear error when a budget is too small.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "relay/devices.h"
#include "relay/error.h"
#include "relay/tensor.h"
#include "relay/value.h"
#include "tests/vm/compile_text.h"
#include "vm/interpreter/virtual_machine.h"

namespace relay {
namespace {

// A training step of a `layers`-deep perceptron of width `width`: the loss
// (a sum of squares) and the weights after one step of gradient descent.
std::string PerceptronStep(int layers, int width) {
  std::string params, args, body = "  let %h0 = %x;\n";
  for (int layer = 0; layer < layers; ++layer) {
    const std::string l = std::to_string(layer);
    params += ", %w" + l + ": Tensor[(" + std::to_string(width) + ", " + std::to_string(width) +
              "), float32], %b" + l + ": Tensor[(" + std::to_string(width) + ",), float32]";
    args += ", %w" + l + ", %b" + l;
    body += "  let %h" + std::to_string(layer + 1) + " = tanh(nn.bias_add(nn.dense(%h" + l +
            ", %w" + l + "), %b" + l + "));\n";
  }
  const std::string x = "%x: Tensor[(?, " + std::to_string(width) + "), float32]";
  std::string text = "def @loss(" + x + ", %y: Tensor[(?, " + std::to_string(width) +
                     "), float32]" + params + ") {\n" + body + "  sum(multiply(subtract(%h" +
                     std::to_string(layers) + ", %y), subtract(%h" + std::to_string(layers) +
                     ", %y)))\n}\n";
  text += "def @main(" + x + ", %y: Tensor[(?, " + std::to_string(width) + "), float32]" + params +
          ") {\n  let %step = @loss_grad(%x, %y" + args + ");\n  let %d = %step.1;\n  (%step.0";
  for (int layer = 0; layer < layers; ++layer) {
    const std::string l = std::to_string(layer);
    text += ", subtract(%w" + l + ", multiply(0.01f, %d." + std::to_string(2 * layer + 2) + "))";
    text += ", subtract(%b" + l + ", multiply(0.01f, %d." + std::to_string(2 * layer + 3) + "))";
  }
  return text + ")\n}\n";
}

// examples/lstm.relay's cell and loop, smaller, and a training step of it.
const char* kLstmStep = R"(
def @cell(%input: Tensor[(1, 4), float32], %state: (Tensor[(1, 8), float32], Tensor[(1, 8), float32]),
          %wi: Tensor[(32, 4), float32], %wh: Tensor[(32, 8), float32], %b: Tensor[(32,), float32]) {
  let %gates = nn.bias_add(add(nn.dense(%input, %wi), nn.dense(%state.0, %wh)), %b);
  let %parts = split(%gates, indices_or_sections=4, axis=1);
  let %cell = add(multiply(sigmoid(%parts.1), %state.1), multiply(sigmoid(%parts.0), tanh(%parts.2)));
  (multiply(sigmoid(%parts.3), tanh(%cell)), %cell)
}
def @loss(%sequence: Tensor[(?, 4), float32], %wi: Tensor[(32, 4), float32],
          %wh: Tensor[(32, 8), float32], %b: Tensor[(32,), float32]) {
  let %length = take(shape_of(%sequence), 0, axis=0);
  let %loop = fn (%step: int32, %state: (Tensor[(1, 8), float32], Tensor[(1, 8), float32]))
              -> (Tensor[(1, 8), float32], Tensor[(1, 8), float32]) {
    if (less(%step, %length)) {
      let %input = expand_dims(take(%sequence, %step, axis=0), axis=0);
      %loop(add(%step, 1), @cell(%input, %state, %wi, %wh, %b))
    } else {
      %state
    }
  };
  let %zeros = zeros(shape=[1, 8], dtype="float32");
  sum(%loop(0, (%zeros, %zeros)).0)
}
def @main(%sequence: Tensor[(?, 4), float32], %wi: Tensor[(32, 4), float32],
          %wh: Tensor[(32, 8), float32], %b: Tensor[(32,), float32]) {
  let %step = @loss_grad(%sequence, %wi, %wh, %b);
  (%step.0, subtract(%wi, multiply(0.1f, %step.1.1)), subtract(%wh, multiply(0.1f, %step.1.2)),
   subtract(%b, multiply(0.1f, %step.1.3)))
}
)";

Ref<Tensor> RandomFloats(const Shape& shape, std::mt19937& random) {
  Ref<Tensor> tensor = Tensor::Empty(HostDevice(), shape, DType::kFloat32);
  std::uniform_real_distribution<float> uniform(-0.5f, 0.5f);
  for (int64_t index = 0; index < tensor->element_count(); ++index) {
    tensor->data<float>()[index] = uniform(random);
  }
  return tensor;
}

// Whether two results hold the same tensors, byte for byte.
void ExpectIdentical(const Value& expected, const Value& actual) {
  ASSERT_EQ(expected->kind(), actual->kind());
  if (expected->kind() == ObjectKind::kTuple) {
    const auto& left = static_cast<const Tuple&>(*expected).fields();
    const auto& right = static_cast<const Tuple&>(*actual).fields();
    ASSERT_EQ(left.size(), right.size());
    for (size_t index = 0; index < left.size(); ++index) ExpectIdentical(left[index], right[index]);
    return;
  }
  const auto& left = static_cast<const Tensor&>(*expected);
  const auto& right = static_cast<const Tensor&>(*actual);
  ASSERT_EQ(left.shape(), right.shape());
  EXPECT_EQ(std::memcmp(left.host_data(), right.host_data(), left.byte_size()), 0);
}

struct Measured {
  Value result;
  vm::MemoryStats stats;
};

Measured RunWith(vm::VirtualMachine& machine, const std::vector<Value>& arguments,
                 std::optional<size_t> budget) {
  machine.set_memory_budget(budget);
  machine.set_measure_memory(true);
  Value result = machine.Invoke("main", arguments);
  return {result, machine.memory_stats()};
}

bool Fits(vm::VirtualMachine& machine, const std::vector<Value>& arguments, size_t budget) {
  try {
    RunWith(machine, arguments, budget);
    return true;
  } catch (const Error& error) {
    EXPECT_NE(error.message().find("is too small"), std::string::npos) << error.message();
    return false;
  }
}

// Budgets of the arguments' bytes (never evicted) plus all and `fraction`
// of what the unbudgeted run allocated on top of them at its peak: the
// results do not change, the peak stays under the budget, and the smaller
// budget evicts and recomputes. With `bisect`, the smallest budget that
// works (found by bisection) must be below it. (Eviction weighs the
// kernels' measured times, so the smallest budget moves a little from run
// to run: it is not rerun. Near it, recomputation dominates: an LSTM's
// bisection would take seconds.)
void CheckUnderBudgets(const std::string& program, const std::vector<Value>& arguments,
                       double fraction, bool bisect) {
  vm::VirtualMachine machine(testing::CompileText("budget.relay", program));
  Measured unbudgeted = RunWith(machine, arguments, std::nullopt);
  EXPECT_EQ(unbudgeted.stats.evictions, 0u);
  size_t fixed = 0;
  for (const Value& argument : arguments)
    fixed += static_cast<const Tensor&>(*argument).byte_size();
  const size_t peak = unbudgeted.stats.peak_bytes;
  ASSERT_GT(peak, fixed);
  const size_t allocated = peak - fixed;
  for (size_t budget : {peak, fixed + size_t(double(allocated) * fraction)}) {
    SCOPED_TRACE("budget " + std::to_string(budget) + " of peak " + std::to_string(peak));
    Measured budgeted = RunWith(machine, arguments, budget);
    ExpectIdentical(unbudgeted.result, budgeted.result);
    EXPECT_LE(budgeted.stats.peak_bytes, budget);
    if (budget < peak) {
      EXPECT_GT(budgeted.stats.evictions, 0u);
      EXPECT_GT(budgeted.stats.recomputations, 0u);
    }
  }
  if (!bisect) return;
  size_t works = allocated, fails = 0;  // in bytes above `fixed`
  while (works - fails > allocated / 50) {
    const size_t middle = (works + fails) / 2;
    (Fits(machine, arguments, fixed + middle) ? works : fails) = middle;
  }
  EXPECT_LT(works, size_t(double(allocated) * fraction))
      << "smallest budget " << fixed + works << " of peak " << peak;
}

TEST(RematerializationTest, DeepPerceptronTrainingStepUnderBudgets) {
  std::mt19937 random(31);
  const int layers = 12, width = 16;
  std::vector<Value> arguments = {RandomFloats({128, width}, random),
                                  RandomFloats({128, width}, random)};
  for (int layer = 0; layer < layers; ++layer) {
    arguments.push_back(RandomFloats({width, width}, random));
    arguments.push_back(RandomFloats({width}, random));
  }
  CheckUnderBudgets(PerceptronStep(layers, width), arguments, /*fraction=*/0.5, /*bisect=*/true);
}

TEST(RematerializationTest, LstmTrainingStepOverASequenceOfAnyLength) {
  std::mt19937 random(32);
  for (int64_t length : {8, 24}) {
    SCOPED_TRACE("length " + std::to_string(length));
    CheckUnderBudgets(kLstmStep,
                      {RandomFloats({length, 4}, random), RandomFloats({32, 4}, random),
                       RandomFloats({32, 8}, random), RandomFloats({32}, random)},
                      /*fraction=*/0.6, /*bisect=*/false);
  }
}

TEST(RematerializationTest, ABudgetTooSmallIsAnErrorNamingTheBytesNeeded) {
  std::mt19937 random(33);
  std::vector<Value> arguments = {RandomFloats({64, 16}, random), RandomFloats({64, 16}, random)};
  for (int layer = 0; layer < 4; ++layer) {
    arguments.push_back(RandomFloats({16, 16}, random));
    arguments.push_back(RandomFloats({16}, random));
  }
  vm::VirtualMachine machine(testing::CompileText("budget.relay", PerceptronStep(4, 16)));
  // The arguments alone take more than this.
  machine.set_memory_budget(1024);
  try {
    machine.Invoke("main", arguments);
    FAIL() << "no error";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::kRuntime);
    EXPECT_NE(error.message().find("memory budget of 1024 bytes is too small"), std::string::npos)
        << error.message();
    EXPECT_NE(error.message().find("needs at least"), std::string::npos) << error.message();
  }
  // The VM runs again afterwards, without a budget.
  machine.set_memory_budget(std::nullopt);
  Value result = machine.Invoke("main", arguments);
  EXPECT_EQ(result->kind(), ObjectKind::kTuple);
}

TEST(RematerializationTest, ABudgetIsForHostRuns) {
  vm::VirtualMachine machine(testing::CompileText("budget.relay", PerceptronStep(1, 4)));
  machine.set_device(&HostDevice());  // any device other than none
  machine.set_memory_budget(1 << 20);
  std::mt19937 random(34);
  std::vector<Value> arguments = {RandomFloats({2, 4}, random), RandomFloats({2, 4}, random),
                                  RandomFloats({4, 4}, random), RandomFloats({4}, random)};
  try {
    machine.Invoke("main", arguments);
    FAIL() << "no error";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::kUsage);
    EXPECT_NE(error.message().find("host"), std::string::npos) << error.message();
  }
}

}  // namespace
}  // namespace relay
