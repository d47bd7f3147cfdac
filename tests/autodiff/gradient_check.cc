#include "tests/autodiff/gradient_check.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>

#include "compiler/codegen/bytecode_compiler.h"
#include "compiler/diagnostics.h"
#include "compiler/evaluator/reference_evaluator.h"
#include "compiler/frontend.h"
#include "compiler/passes/gradient.h"
#include "relay/devices.h"
#include "relay/error.h"
#include "relay/tensor.h"
#include "vm/interpreter/virtual_machine.h"

namespace relay::testing {
namespace {

const Tensor& AsTensor(const Value& value) {
  RELAY_CHECK(value->kind() == ObjectKind::kTensor, "expected a tensor value");
  return static_cast<const Tensor&>(*value);
}

const Tuple& AsTuple(const Value& value) {
  RELAY_CHECK(value->kind() == ObjectKind::kTuple, "expected a tuple value");
  return static_cast<const Tuple&>(*value);
}

double ElementAsDouble(const Tensor& tensor, int64_t index) {
  switch (tensor.dtype()) {
    case DType::kFloat64:
      return tensor.data<double>()[index];
    case DType::kFloat32:
      return tensor.data<float>()[index];
    default:
      RELAY_CHECK(false, "gradient checks need float tensors");
  }
}

// The sum of every element of a tensor or (nested) tuple of tensors.
double SumOfElements(const Value& value) {
  if (value->kind() == ObjectKind::kTuple) {
    double sum = 0;
    for (const Value& field : AsTuple(value).fields()) sum += SumOfElements(field);
    return sum;
  }
  const Tensor& tensor = AsTensor(value);
  if (!IsFloat(tensor.dtype())) return 0;
  double sum = 0;
  for (int64_t index = 0; index < tensor.element_count(); ++index) {
    sum += ElementAsDouble(tensor, index);
  }
  return sum;
}

Value CopyOf(const Tensor& tensor) {
  return CopyTensor(tensor, HostDevice());
}

bool IsFloatTensorValue(const Value& value) {
  return value->kind() == ObjectKind::kTensor && IsFloat(AsTensor(value).dtype());
}

void ExpectClose(double analytic, double numeric, double tolerance, const std::string& what) {
  EXPECT_LE(std::abs(analytic - numeric), tolerance * std::max(1.0, std::abs(numeric)))
      << what << ": gradient " << analytic << ", finite difference " << numeric;
}

void ExpectSameValues(const Value& expected, const Value& actual, double tolerance,
                      const std::string& what) {
  if (expected->kind() == ObjectKind::kTuple) {
    const auto& fields = AsTuple(expected).fields();
    const auto& others = AsTuple(actual).fields();
    ASSERT_EQ(fields.size(), others.size()) << what;
    for (size_t index = 0; index < fields.size(); ++index) {
      ExpectSameValues(fields[index], others[index], tolerance, what + "." + std::to_string(index));
    }
    return;
  }
  const Tensor& left = AsTensor(expected);
  const Tensor& right = AsTensor(actual);
  ASSERT_EQ(left.shape(), right.shape()) << what;
  if (!IsFloat(left.dtype())) return;
  for (int64_t index = 0; index < left.element_count(); ++index) {
    ExpectClose(ElementAsDouble(right, index), ElementAsDouble(left, index), tolerance,
                what + " element " + std::to_string(index));
  }
}

}  // namespace

void CheckGradient(const std::string& program, const std::vector<Value>& arguments,
                   const GradientCheckOptions& options) {
  std::string text = "#[version = \"0.0.5\"]\n" + program;
  Diagnostics diagnostics("gradient_check.relay", std::make_shared<const std::string>(text));
  ir::Module module = compiler::ParseAndCheck(diagnostics);
  ASSERT_FALSE(diagnostics.has_errors()) << diagnostics.FormatAll();
  ir::Module differentiated = passes::AddGradient(module, &compiler::Prelude(), options.entry);
  const std::string gradient_name = passes::GradientName(options.entry);

  Value computed = evaluator::Evaluate(differentiated, gradient_name, arguments);
  const Tuple& pair = AsTuple(computed);
  ASSERT_EQ(pair.fields().size(), 2u);
  Value original = evaluator::Evaluate(module, options.entry, arguments);
  ExpectSameValues(original, pair.fields()[0], 1e-12, "result");
  const auto& gradients = AsTuple(pair.fields()[1]).fields();

  size_t slot = 0;
  for (size_t param = 0; param < arguments.size(); ++param) {
    if (!IsFloatTensorValue(arguments[param])) continue;
    ASSERT_LT(slot, gradients.size()) << "too few gradients";
    const Tensor& gradient = AsTensor(gradients[slot++]);
    const Tensor& input = AsTensor(arguments[param]);
    ASSERT_EQ(gradient.shape(), input.shape()) << "gradient of parameter " << param;
    ASSERT_EQ(input.dtype(), DType::kFloat64) << "finite differences need float64 inputs";
    for (int64_t element = 0; element < input.element_count(); ++element) {
      std::vector<Value> shifted = arguments;
      auto evaluate_at = [&](double delta) {
        Value copy = CopyOf(input);
        AsTensor(copy).data<double>()[element] += delta;
        shifted[param] = copy;
        return SumOfElements(evaluator::Evaluate(module, options.entry, shifted));
      };
      double numeric =
          (evaluate_at(options.epsilon) - evaluate_at(-options.epsilon)) / (2 * options.epsilon);
      ExpectClose(ElementAsDouble(gradient, element), numeric, options.tolerance,
                  "parameter " + std::to_string(param) + " element " + std::to_string(element));
    }
  }
  EXPECT_EQ(slot, gradients.size()) << "more gradients than floating-point parameters";

  if (options.on_vm) {
    vm::VirtualMachine machine(std::make_shared<const vm::Executable>(
        codegen::CompileToBytecode(differentiated, &compiler::Prelude())));
    Value on_vm = machine.Invoke(gradient_name, arguments);
    ExpectSameValues(computed, on_vm, options.tolerance, "the VM's result");
  }
}

void ExpectSameAsGradientOf(const std::string& program, const std::string& entry,
                            const std::string& reference, const std::vector<Value>& arguments,
                            size_t slot) {
  std::string text = "#[version = \"0.0.5\"]\n" + program;
  Diagnostics diagnostics("gradient_check.relay", std::make_shared<const std::string>(text));
  ir::Module module = compiler::ParseAndCheck(diagnostics);
  ASSERT_FALSE(diagnostics.has_errors()) << diagnostics.FormatAll();
  ir::Module differentiated = passes::AddGradient(module, &compiler::Prelude(), reference);
  // The values are held here: fields() refers into them.
  const Value expected_value =
      evaluator::Evaluate(differentiated, passes::GradientName(reference), arguments);
  const Value actual_value = evaluator::Evaluate(module, entry, arguments);
  const auto& expected = AsTuple(expected_value).fields();
  const auto& actual = AsTuple(actual_value).fields();
  ASSERT_EQ(actual.size(), 2u);
  ExpectSameValues(expected[0], actual[0], 1e-12, "result");
  ExpectSameValues(AsTuple(expected[1]).fields().at(slot), actual[1], 1e-12, "gradient");
}

Value RandomTensor(const std::vector<int64_t>& shape, std::mt19937& random, double low,
                   double high) {
  Ref<Tensor> tensor = Tensor::Empty(HostDevice(), shape, DType::kFloat64);
  std::uniform_real_distribution<double> uniform(low, high);
  for (int64_t index = 0; index < tensor->element_count(); ++index) {
    tensor->data<double>()[index] = uniform(random);
  }
  return tensor;
}

Value TensorOf(const std::vector<int64_t>& shape, const std::vector<double>& values) {
  Ref<Tensor> tensor = Tensor::Empty(HostDevice(), shape, DType::kFloat64);
  RELAY_CHECK(static_cast<int64_t>(values.size()) == tensor->element_count(),
              "TensorOf: wrong number of values");
  std::copy(values.begin(), values.end(), tensor->data<double>());
  return tensor;
}

}  // namespace relay::testing
