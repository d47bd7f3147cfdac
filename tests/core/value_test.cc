// Relay values besides tensors and how every value prints (relay/value.h).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "relay/devices.h"
#include "relay/float16.h"
#include "relay/tensor.h"
#include "relay/value.h"

namespace relay {
namespace {

template <typename T>
Value Scalar(T value, DType dtype) {
  Ref<Tensor> tensor = Tensor::Empty(HostDevice(), {}, dtype);
  *tensor->data<T>() = value;
  return tensor;
}

Value Floats(Shape shape) {
  Ref<Tensor> tensor = Tensor::Empty(HostDevice(), std::move(shape), DType::kFloat32);
  for (int64_t index = 0; index < tensor->element_count(); ++index)
    tensor->data<float>()[index] = static_cast<float>(index) / 2;
  return tensor;
}

TEST(ValueFormatTest, ScalarsUseRelayLiteralSuffixes) {
  EXPECT_EQ(FormatValue(Scalar<int32_t>(6, DType::kInt32)), "6");
  EXPECT_EQ(FormatValue(Scalar<int64_t>(-6, DType::kInt64)), "-6i64");
  EXPECT_EQ(FormatValue(Scalar<float>(2.5f, DType::kFloat32)), "2.5f");
  EXPECT_EQ(FormatValue(Scalar<float>(0.1f, DType::kFloat32)), "0.1f");
  EXPECT_EQ(FormatValue(Scalar<double>(0.1, DType::kFloat64)), "0.1f64");
  EXPECT_EQ(FormatValue(Scalar<Float16>(Float16(1.5f), DType::kFloat16)), "1.5f16");
  EXPECT_EQ(FormatValue(Scalar<bool>(true, DType::kBool)), "True");
  EXPECT_EQ(FormatValue(Scalar<bool>(false, DType::kBool)), "False");
  EXPECT_EQ(FormatValue(Scalar<uint8_t>(200, DType::kUInt8)), "200u8");
  EXPECT_EQ(FormatValue(Scalar<uint64_t>(18446744073709551615u, DType::kUInt64)),
            "18446744073709551615u64");
  EXPECT_EQ(FormatValue(Scalar<uint16_t>(65535, DType::kUInt16)), "65535u16");
}

TEST(ValueFormatTest, TensorsAreNestedBrackets) {
  EXPECT_EQ(FormatValue(Floats({2, 3})), "[[0, 0.5, 1], [1.5, 2, 2.5]]");
  EXPECT_EQ(FormatValue(Floats({0})), "[]");
  EXPECT_EQ(FormatValue(Floats({2, 0})), "[[], []]");
}

TEST(ValueFormatTest, LargeTensorsAreSummarised) {
  ValuePrintOptions options;
  options.tensor_element_limit = 10;
  EXPECT_EQ(FormatValue(Floats({20}), options), "[0, 0.5, 1, ..., 8.5, 9, 9.5]");
  EXPECT_EQ(FormatValue(Floats({8}), options), "[0, 0.5, 1, 1.5, 2, 2.5, 3, 3.5]");
}

TEST(ValueFormatTest, TuplesConstructedValuesClosuresAndReferences) {
  Value one = Scalar<int32_t>(1, DType::kInt32);
  Value two = Scalar<int32_t>(2, DType::kInt32);
  ValuePrintOptions options;
  options.constructor_name = [](int32_t tag) { return tag == 0 ? "Nil" : "Cons"; };
  options.function_name = [](int32_t) { return "@f"; };
  Value nil = MakeRef<Constructed>(0, std::vector<Value>{});
  Value list = MakeRef<Constructed>(
      1, std::vector<Value>{one, MakeRef<Constructed>(1, std::vector<Value>{two, nil})});
  EXPECT_EQ(FormatValue(list, options), "Cons(1, Cons(2, Nil))");
  EXPECT_EQ(FormatValue(list), "Constructor#1(1, Constructor#1(2, Constructor#0))");
  EXPECT_EQ(FormatValue(MakeRef<Tuple>(std::vector<Value>{one, list}), options),
            "(1, Cons(1, Cons(2, Nil)))");
  EXPECT_EQ(FormatValue(MakeRef<Tuple>(std::vector<Value>{one})), "(1,)");
  EXPECT_EQ(FormatValue(MakeRef<Tuple>(std::vector<Value>{})), "()");
  EXPECT_EQ(FormatValue(MakeRef<Closure>(3, std::vector<Value>{one}), options), "<closure @f>");
  Ref<Reference> cell = MakeRef<Reference>(one);
  EXPECT_EQ(FormatValue(cell), "ref(1)");
  cell->Write(MakeRef<Tuple>(std::vector<Value>{two, two}));
  EXPECT_EQ(FormatValue(cell), "ref((2, 2))");
}

TEST(ValueFormatTest, AMillionElementListPrintsAndDiesWithoutRecursion) {
  Value list = MakeRef<Constructed>(0, std::vector<Value>{});
  Value element = Scalar<int32_t>(7, DType::kInt32);
  constexpr int kLength = 1'000'000;
  for (int index = 0; index < kLength; ++index)
    list = MakeRef<Constructed>(1, std::vector<Value>{element, list});
  ValuePrintOptions options;
  options.constructor_name = [](int32_t tag) { return tag == 0 ? "Nil" : "C"; };
  std::string text = FormatValue(list, options);
  EXPECT_EQ(text.size(), size_t{kLength} * std::string("C(7, )").size() + 3);
  EXPECT_EQ(text.substr(0, 12), "C(7, C(7, C(");
  list = Value();  // destroys a million nested values, iteratively
}

}  // namespace
}  // namespace relay
